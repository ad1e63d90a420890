r"""The :obj:`pyg-bemap` command: :obj:`train`, :obj:`reproduce` and
:obj:`datasets`."""

import argparse
import dataclasses
import os
import os.path as osp
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

from tqdm import tqdm

from pyg_bemap import __version__
from pyg_bemap.datasets import (
    ALIASES,
    BUNDLED_DIR,
    SPECS,
    FairGraphDataset,
    biased_sbm,
    default_root,
)
from pyg_bemap.transforms import BalanceAwareSampling
from pyg_bemap_lab import (
    BACKBONES,
    Hyper,
    select,
    train_and_record,
)
from pyg_bemap_lab.comparison import (
    comparison_protocol,
    run_comparison,
)
from pyg_bemap_lab.paper_comparison import paper_comparison
from pyg_bemap_lab.plots import (
    backbone_pairs,
    plot_paired,
    plot_tradeoff,
)
from pyg_bemap_lab.protocols import (
    PROTOCOLS,
    chosen_configs,
    datasets_with_runs,
    run_protocol,
)
from pyg_bemap_lab.store import RunStore
from pyg_bemap_lab.tables import protocol_report
from pyg_bemap_lab.tuning import plot_curves, tuning_report

DATASETS = sorted(SPECS) + sorted(ALIASES) + ['synthetic']

#: Short names of the BeMap methods on the command line.
METHOD_ALIASES = {
    'row': 'BeMap(row)',
    'sym': 'BeMap(sym)',
    'sage': 'BeMap(sage)',
    'gat': 'BeMap(gat)',
    'sym-uniform': 'BeMap(sym)-uniform',
    'sym-degree': 'BeMap(sym)-degree',
}

#: The comparison the README leads with, plotted on its own.
HEADLINE = ('GCN', 'BeMap(sym)')

EXIT_CODES = (
    'exit codes: 0 done; 1 the work could not be done (one line on '
    'standard error says why); 2 bad arguments; 130 interrupted'
)


def default_results() -> str:
    r"""Where :obj:`reproduce` writes unless told otherwise:
    :obj:`$PYG_BEMAP_RESULTS`, or :obj:`~/pyg-bemap-results`."""
    return os.environ.get(
        'PYG_BEMAP_RESULTS',
        osp.join(osp.expanduser('~'), 'pyg-bemap-results'),
    )


def _int_at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f'must be an integer of at least {minimum} (got {text})'
            )
        return value

    return parse


_positive_int = _int_at_least(1)
_non_negative_int = _int_at_least(0)


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f'must be in [0, 1] (got {text})')
    return value


def _bemap_method(text: str) -> str:
    method = METHOD_ALIASES.get(text, text)
    if method not in METHOD_ALIASES.values():
        raise argparse.ArgumentTypeError(
            f'unknown method {text!r}; choose from '
            + ', '.join(METHOD_ALIASES)
        )
    return method


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='pyg-bemap',
        description='BeMap (balanced message passing) for fair GNNs.',
        epilog=EXIT_CODES,
    )
    parser.add_argument(
        '--version', action='version', version=f'%(prog)s {__version__}'
    )
    commands = parser.add_subparsers(dest='command', required=True)
    _add_compare(commands)
    _add_train(commands)
    _add_reproduce(commands)
    datasets = commands.add_parser(
        'datasets',
        help='list the datasets and where their files are',
        description='Lists the datasets, their raw files and whether they '
        'are present under the root directory.',
        epilog=EXIT_CODES,
    )
    _add_root(datasets)
    return parser


def _add_compare(commands: Any) -> None:
    compare = commands.add_parser(
        'compare',
        help='compare a model and its BeMap version over paired seeds',
        description='Trains a vanilla model and its BeMap version on the '
        'same seeds (same split, same initial weights) with the '
        'hyper-parameters the default protocol chose for the dataset, '
        'reports each at the epoch of its lowest validation loss, and '
        'prints the paired differences of the test metrics with 95 % '
        'intervals and a one-line verdict.',
        epilog=EXIT_CODES,
    )
    _add_dataset(compare, [d for d in DATASETS if d != 'synthetic'])
    _add_method(compare)
    compare.add_argument(
        '--seeds',
        type=_int_at_least(2),
        default=10,
        help='paired seeds; a mark needs at least 6 (default: %(default)s)',
    )
    _add_epochs(compare, 1000, 100, 'lower validation loss')
    _add_jobs(compare)
    _add_root(compare)


def _add_train(commands: Any) -> None:
    train = commands.add_parser(
        'train',
        help='train a model and its BeMap version once',
        description='Trains a vanilla model and its BeMap version on one '
        'dataset with one seed, and prints the test fairness report of '
        'each at the epoch of its best validation accuracy. One seed says '
        "little: 'pyg-bemap compare' runs paired seeds.",
        epilog=EXIT_CODES,
    )
    _add_dataset(
        train, DATASETS, " ('synthetic': a biased stochastic block model)"
    )
    _add_method(train)
    train.add_argument(
        '--seed',
        type=int,
        default=0,
        help='the split, initial weights and sampling (default: %(default)s)',
    )
    train.add_argument(
        '--beta',
        type=_share,
        default=0.25,
        help='share of a one-group neighbourhood kept (default: %(default)s)',
    )
    train.add_argument(
        '--min-keep',
        type=_non_negative_int,
        default=4,
        help='neighbours a one-group neighbourhood keeps at least '
        '(default: %(default)s)',
    )
    _add_epochs(
        train, Hyper.epochs, Hyper.patience, 'better validation accuracy'
    )
    _add_root(train)


def _add_reproduce(commands: Any) -> None:
    reproduce = commands.add_parser(
        'reproduce',
        help='run an evaluation protocol and write its report',
        description='Trains every method of a protocol (the default one: '
        'tuned backbones, 10 paired seeds, NBA, German, Recidivism and '
        'Credit) and writes OUT/runs.jsonl (one line per finished run), '
        'OUT/<protocol>.md (verdicts, paired differences, means), '
        'OUT/paired_<protocol>.png (the gap differences with their '
        'intervals; OUT/paired_<protocol>_sym.png: BeMap(sym) against GCN '
        'alone), one trade-off plot per dataset and, for a tuned '
        'protocol, '
        'OUT/tuning_<protocol>.md (every grid combination) with '
        "OUT/curves_<protocol>.png (the chosen GCN's validation curves). "
        'A rerun resumes from the stored runs.',
        epilog=EXIT_CODES,
    )
    reproduce.add_argument(
        '--out',
        default=default_results(),
        help='folder of the stored runs and reports (default: '
        '$PYG_BEMAP_RESULTS, else ~/pyg-bemap-results)',
    )
    which = reproduce.add_mutually_exclusive_group()
    which.add_argument(
        '--protocol',
        choices=sorted(PROTOCOLS),
        default='default',
        help='the protocol to run (default: %(default)s)',
    )
    which.add_argument(
        '--quick',
        action='store_true',
        help='the quick protocol: NBA and German, 3 seeds, no tuning',
    )
    reproduce.add_argument(
        '--max-epochs',
        type=_positive_int,
        default=None,
        help="cap a protocol's epochs (a separate protocol name in the "
        "store, for smoke tests; default: the protocol's own)",
    )
    reproduce.add_argument(
        '--report-only',
        action='store_true',
        help='rebuild the report and plots from the stored runs, training '
        'nothing (a protocol still running shows the runs it has)',
    )
    _add_jobs(reproduce)
    _add_root(reproduce)


def _add_dataset(
    parser: argparse.ArgumentParser, choices: list[str], note: str = ''
) -> None:
    parser.add_argument(
        '--dataset',
        choices=choices,
        default='nba',
        metavar='NAME',
        help=f'the dataset: {", ".join(choices)}{note} (default: '
        '%(default)s, bundled)',
    )


def _add_method(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--method',
        type=_bemap_method,
        default='BeMap(sym)',
        metavar='{' + ','.join(METHOD_ALIASES) + '}',
        help='the BeMap method, compared with its backbone (row, sym: GCN; '
        'sage: GraphSAGE; gat: GAT; sym-uniform, sym-degree: ablations; '
        'default: sym)',
    )


def _add_epochs(
    parser: argparse.ArgumentParser, epochs: int, patience: int, on: str
) -> None:
    parser.add_argument(
        '--epochs',
        type=_positive_int,
        default=epochs,
        help='maximum epochs (default: %(default)s)',
    )
    parser.add_argument(
        '--patience',
        type=_positive_int,
        default=patience,
        help=f'stop after this many epochs without a {on} (default: '
        '%(default)s)',
    )


def _add_jobs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--jobs',
        type=_positive_int,
        default=os.cpu_count() or 1,
        help='runs trained in parallel, one process each (default: the '
        'number of cores)',
    )


def _add_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--root',
        default=default_root(),
        help='dataset directory (default: $PYG_BEMAP_DATA, else '
        '~/.cache/pyg_bemap)',
    )


def progress(total: int | None, desc: str) -> Any:
    r"""A progress bar on a terminal; elsewhere (a pipe, a log file) a
    plain line at most every 10 seconds, so that the output stays
    readable."""
    if sys.stderr.isatty():
        return tqdm(total=total, desc=desc, leave=False)
    return _LineProgress(desc, total)


class _LineProgress:
    EVERY = 10.0  # seconds between lines

    def __init__(self, desc: str, total: int | None) -> None:
        self.desc, self.total, self.done = desc, total, 0
        self.last = time.monotonic()

    def update(self, count: int = 1) -> None:
        self.done += count
        if time.monotonic() - self.last >= self.EVERY:
            self.last = time.monotonic()
            of = f' of {self.total}' if self.total else ''
            print(f'{self.desc}: {self.done}{of} done', file=sys.stderr)

    def close(self) -> None:
        pass


def run_compare(args: argparse.Namespace) -> None:
    protocol = comparison_protocol(
        ALIASES.get(args.dataset, args.dataset),
        args.method,
        args.seeds,
        args.epochs,
        args.patience,
    )
    bar = progress(2 * args.seeds, 'runs')
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(osp.join(folder, 'runs.jsonl'))
        summary = run_comparison(
            protocol, args.root, store, args.jobs, lambda job: bar.update()
        )
    bar.close()
    print(summary)


def run_train(args: argparse.Namespace) -> None:
    if args.dataset == 'synthetic':
        data = biased_sbm(seed=args.seed)
    else:
        dataset = FairGraphDataset(args.root, args.dataset, args.seed)
        data = dataset[0]
    data = BalanceAwareSampling(sens_attr='s')(data)
    print(
        f'{args.dataset}: {data.num_nodes} nodes, {data.num_edges // 2} '
        f'undirected edges, {data.num_features} features; seed {args.seed}'
    )
    hyper = Hyper(
        epochs=args.epochs,
        patience=args.patience,
        beta=args.beta,
        min_keep=args.min_keep,
    )
    for method in (BACKBONES[args.method], args.method):
        bar = progress(hyper.epochs, method)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', UserWarning)
            records = train_and_record(
                data, method, args.seed, hyper, on_epoch=bar.update
            ).records
        bar.close()
        chosen = select(records, 'val-acc', None)
        assert chosen is not None
        print(
            f'\n{method}: selected epoch {chosen.epoch} (best validation '
            f'accuracy) of {len(records)}, {time.perf_counter() - start:.1f} s'
        )
        print(chosen.test)
    print(
        '\nTest split, one seed: differences of a few points are within\n'
        "noise here; 'pyg-bemap compare' runs paired seeds."
    )


def run_reproduce(args: argparse.Namespace) -> None:
    protocol = PROTOCOLS['quick' if args.quick else args.protocol]
    if args.max_epochs is not None:
        protocol = dataclasses.replace(
            protocol,
            name=f'{protocol.name}-max{args.max_epochs}',
            max_epochs=args.max_epochs,
        )
    store = RunStore(osp.join(args.out, 'runs.jsonl'))
    before = len(store)
    if args.report_only:
        if not datasets_with_runs(protocol, store):
            raise ValueError(
                f'{store.path} holds no runs of the protocol '
                f"{protocol.name!r}; run it without '--report-only' first"
            )
        chosen = chosen_configs(protocol, store)
    else:
        bar = progress(None, f'{protocol.name} runs')
        chosen = run_protocol(
            protocol, args.root, store, args.jobs, lambda job: bar.update()
        )
        bar.close()
    path = osp.join(args.out, f'{protocol.name}.md')
    with open(path, 'w') as handle:
        handle.write(protocol_report(protocol, store, chosen))
    if protocol.sweep:
        for dataset in datasets_with_runs(protocol, store):
            plot_tradeoff(
                protocol,
                store,
                chosen,
                dataset,
                osp.join(args.out, f'tradeoff_{protocol.name}_{dataset}.png'),
            )
    pairs = backbone_pairs(protocol)
    if pairs:
        paired = osp.join(args.out, f'paired_{protocol.name}')
        plot_paired(protocol, store, chosen, f'{paired}.png')
        if HEADLINE in pairs:
            plot_paired(
                protocol, store, chosen, f'{paired}_sym.png', pairs=[HEADLINE]
            )
    if protocol.grid_seeds:
        name = protocol.name
        with open(osp.join(args.out, f'tuning_{name}.md'), 'w') as handle:
            handle.write(tuning_report(protocol, store, chosen))
        plot_curves(
            protocol, store, chosen, osp.join(args.out, f'curves_{name}.png')
        )
    reference = PROTOCOLS['reference']
    if datasets_with_runs(reference, store):
        comparison = osp.join(args.out, 'paper_comparison.md')
        with open(comparison, 'w') as handle:
            handle.write(paper_comparison(store, reference.datasets))
    print(
        f'{len(store) - before} new runs ({len(store)} stored in '
        f'{store.path}); wrote {path}'
    )


def run_datasets(args: argparse.Namespace) -> None:
    print(f'root: {args.root}')
    print('files go in ROOT/<dataset>/raw/ (plain or .xz)')
    for name, spec in SPECS.items():
        raw = osp.join(args.root, name, 'raw')
        names = [spec.node_file.name, spec.edge_file.name]
        if all(_found(BUNDLED_DIR, name, f) for f in names):
            print(f'{name:<11} bundled with the package')
            continue
        states = [
            f'{f} {"present" if _found(raw, "", f) else "missing"}'
            for f in names
        ]
        print(f'{name:<11} ' + ', '.join(states))
        misplaced = [
            f
            for f in names
            if not _found(raw, '', f) and _found(args.root, name, f)
        ]
        if misplaced:
            print(f'{"":<11} found in {osp.join(args.root, name)}:')
            print(f'{"":<11} move {", ".join(misplaced)} to {raw}')
    print(
        "Missing files are downloaded on first use; 'bail' is an alias of "
        "'recidivism'."
    )


def _found(folder: str, name: str, file: str) -> bool:
    return any(
        osp.exists(osp.join(folder, name, f'{file}{ext}'))
        for ext in ('', '.xz')
    )


def main(argv: list[str] | None = None) -> int:
    r"""Runs the command; returns the exit code: 0 on success, 1 when the
    work cannot be done (e.g. a dataset that cannot be downloaded, a bad
    input file; one line on standard error), 2 for bad arguments (from
    :obj:`argparse`), 130 when interrupted."""
    args = build_parser().parse_args(argv)
    run = {
        'compare': run_compare,
        'train': run_train,
        'reproduce': run_reproduce,
        'datasets': run_datasets,
    }[args.command]
    try:
        run(args)
    except (ValueError, OSError) as error:
        print(f'pyg-bemap: error: {error}', file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print('pyg-bemap: interrupted', file=sys.stderr)
        return 130
    return 0


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
