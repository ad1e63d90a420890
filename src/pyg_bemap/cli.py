r"""The :obj:`pyg-bemap` command: :obj:`train`, :obj:`reproduce` and
:obj:`datasets`."""

import argparse
import dataclasses
import os
import os.path as osp
import sys
import time
import warnings
from collections.abc import Callable

from tqdm import tqdm

from pyg_bemap.datasets import (
    ALIASES,
    BUNDLED_DIR,
    SPECS,
    FairGraphDataset,
    biased_sbm,
    default_root,
)
from pyg_bemap.experiments import (
    BACKBONES,
    METHODS,
    PAPER_BUDGETS,
    Hyper,
    select,
    train_and_record,
)
from pyg_bemap.experiments.paper_comparison import paper_comparison
from pyg_bemap.experiments.plots import plot_tradeoff
from pyg_bemap.experiments.protocols import (
    PROTOCOLS,
    chosen_configs,
    datasets_with_runs,
    run_protocol,
)
from pyg_bemap.experiments.store import RunStore
from pyg_bemap.experiments.tables import protocol_report
from pyg_bemap.experiments.tuning import plot_curves, tuning_report
from pyg_bemap.metrics import FairnessReport
from pyg_bemap.transforms import BalanceAwareSampling

DATASETS = sorted(SPECS) + sorted(ALIASES) + ['synthetic']


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='pyg-bemap',
        description='BeMap (balanced message passing) for fair GNNs.',
    )
    commands = parser.add_subparsers(dest='command', required=True)

    train = commands.add_parser(
        'train',
        help='train a vanilla model and its BeMap version',
        description='Trains a vanilla model and its BeMap version on one '
        'dataset (the bundled NBA graph by default), selects each on the '
        'validation accuracy and prints both test fairness reports side by '
        'side.',
    )
    train.add_argument('--dataset', choices=DATASETS, default='nba')
    _add_training_options(train)
    train.add_argument(
        '--method',
        choices=[m for m in METHODS if m.startswith('BeMap')],
        default='BeMap(sym)',
    )
    train.add_argument('--seed', type=int, default=0)
    train.add_argument('--beta', type=_share, default=0.25)
    train.add_argument('--min-keep', type=_non_negative_int, default=4)

    reproduce = commands.add_parser(
        'reproduce',
        help='run an evaluation protocol and write its report',
        description='Trains every method of a protocol (the default one: '
        'tuned backbones, 10 paired seeds, NBA, German, Recidivism and '
        'Credit) and writes OUT/runs.jsonl (one line per finished run), '
        'OUT/<protocol>.md (verdicts, paired differences, means), one '
        'trade-off plot per dataset and, for a tuned protocol, '
        'OUT/tuning_<protocol>.md (every grid combination) with '
        "OUT/curves_<protocol>.png (the chosen GCN's validation curves). "
        'A rerun resumes from the stored runs.',
    )
    reproduce.add_argument(
        '--root',
        default=default_root(),
        help='dataset directory (default: %(default)s)',
    )
    reproduce.add_argument('--out', default=osp.join('examples', 'results'))
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
        'store, for smoke tests)',
    )
    reproduce.add_argument(
        '--report-only',
        action='store_true',
        help='rebuild the report and plots from the stored runs, training '
        'nothing (a protocol still running shows the runs it has)',
    )
    reproduce.add_argument(
        '--jobs',
        type=_positive_int,
        default=os.cpu_count() or 1,
        help='runs trained in parallel, one process each '
        '(default: the number of cores, %(default)s)',
    )

    datasets = commands.add_parser(
        'datasets',
        help='list the datasets and where their files are',
        description='Lists the datasets, their raw files and whether they '
        'are present under the root directory.',
    )
    datasets.add_argument(
        '--root',
        default=default_root(),
        help='dataset directory (default: %(default)s)',
    )
    return parser


def _add_training_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--root',
        default=default_root(),
        help='dataset directory (default: %(default)s)',
    )
    parser.add_argument(
        '--epochs',
        type=_positive_int,
        default=Hyper.epochs,
        help='maximum epochs (default: %(default)s)',
    )
    parser.add_argument(
        '--patience',
        type=_positive_int,
        default=Hyper.patience,
        help='stop after this many epochs without a better '
        'validation accuracy (default: %(default)s)',
    )


def side_by_side(left: str, right: str, titles: list[str]) -> str:
    r"""Two text blocks next to each other."""
    a, b = left.splitlines(), right.splitlines()
    width = max(len(line) for line in a + [titles[0]]) + 4
    a += [''] * (len(b) - len(a))
    b += [''] * (len(a) - len(b))
    lines = [titles[0].ljust(width) + titles[1]]
    lines += [(x.ljust(width) + y).rstrip() for x, y in zip(a, b)]
    return '\n'.join(lines)


def run_train(args: argparse.Namespace) -> None:
    if args.dataset == 'synthetic':
        data = biased_sbm(seed=args.seed)
    else:
        data = FairGraphDataset(args.root, args.dataset, split_seed=args.seed)[
            0
        ]
    data = BalanceAwareSampling(sens_attr='s')(data)
    print(
        f'{args.dataset}: {data.num_nodes} nodes, {data.num_edges // 2} '
        f'undirected edges, {data.num_features} features'
    )
    hyper = Hyper(
        epochs=args.epochs,
        patience=args.patience,
        beta=args.beta,
        min_keep=args.min_keep,
    )
    vanilla = BACKBONES[args.method]
    reports: list[FairnessReport] = []
    titles = []
    for method in (vanilla, args.method):
        bar = tqdm(total=hyper.epochs, desc=method, leave=False)
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', UserWarning)
            records = train_and_record(
                data, method, args.seed, hyper, on_epoch=bar.update
            ).records
        bar.close()
        chosen = select(records, 'val-acc', PAPER_BUDGETS.get(args.dataset))
        assert chosen is not None
        reports.append(chosen.test)
        titles.append(
            f'{method}: epoch {chosen.epoch}, '
            f'{time.perf_counter() - start:.1f}s'
        )
    print(side_by_side(str(reports[0]), str(reports[1]), titles))
    print('\nTest split; each model selected on the best validation accuracy.')


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
        bar = tqdm(desc=f'{protocol.name} runs', unit='run')
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
