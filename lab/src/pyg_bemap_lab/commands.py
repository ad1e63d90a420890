r"""What each :obj:`pyg-bemap` command does with its parsed arguments
(see :mod:`~pyg_bemap_lab.cli` for the arguments)."""

import argparse
import dataclasses
import json
import os.path as osp
import sys
import tempfile
import textwrap
import time
import warnings
from typing import Any

from tqdm import tqdm

from pyg_bemap.datasets import (
    BUNDLED_DIR,
    SPECS,
    biased_sbm,
    scale_features,
)
from pyg_bemap.metrics import diagnose
from pyg_bemap.transforms import BalanceAwareSampling
from pyg_bemap_lab.comparison import backbone_config, compare
from pyg_bemap_lab.graph_inputs import named_graph, read_graph_source
from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.methods import BACKBONES
from pyg_bemap_lab.names import DATASET_ALIASES
from pyg_bemap_lab.reporting.protocol_report import ProtocolReport
from pyg_bemap_lab.reporting.robustness import (
    RobustnessReport,
    robustness_protocol,
)
from pyg_bemap_lab.running.degenerate import KINDS, kind_of
from pyg_bemap_lab.running.execution import prepared_graph, run_protocol
from pyg_bemap_lab.running.planning import chosen_configs, datasets_with_runs
from pyg_bemap_lab.running.protocols import PROTOCOLS
from pyg_bemap_lab.running.threads import run_threads
from pyg_bemap_lab.running.training import History, positive_share, train
from pyg_bemap_lab.running.tuned import TUNED, UNTUNED
from pyg_bemap_lab.selection import RULES
from pyg_bemap_lab.sweeping import sweep


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
    r"""The paired comparison of a model and its BeMap version (see
    :func:`~pyg_bemap_lab.comparison.compare`), its runs stored in
    :obj:`--out` (by default: a temporary folder for a named dataset, the
    results' :obj:`graphs` folder for a graph of one's own)."""
    source = read_graph_source(args)
    bar = progress(None, 'runs')
    options = dict(
        method=args.method,
        seeds=args.seeds,
        epochs=args.epochs,
        patience=args.patience,
        selection=args.selection,
        fractions=(args.train_fraction, args.val_fraction),
        jobs=args.jobs,
        root=args.root,
        on_run=lambda job: bar.update(),
        exploratory=args.exploratory,
    )
    if isinstance(source, str) and args.out is None:
        with tempfile.TemporaryDirectory() as folder:
            # a temporary folder keeps nothing: no stored result to refuse
            result = compare(
                source, out=folder, **(options | {'exploratory': True})
            )
            bar.close()
            print(result)
        return
    result = compare(source, out=args.out, **options)
    bar.close()
    print(result)


def run_sweep(args: argparse.Namespace) -> None:
    r"""BeMap's knobs on a grid beside reference points (see
    :func:`~pyg_bemap_lab.sweeping.sweep`), stored and written in
    :obj:`--out`."""
    bar = progress(None, 'runs')
    result = sweep(
        read_graph_source(args),
        args.out,
        seeds=args.seeds,
        epochs=args.epochs,
        patience=args.patience,
        quick=args.quick,
        fractions=(args.train_fraction, args.val_fraction),
        jobs=args.jobs,
        root=args.root,
        on_run=lambda job: bar.update(),
        exploratory=args.exploratory,
    )
    bar.close()
    print(result)
    print(f'\nwrote {osp.join(args.out, "sweep.csv")} and pareto.png')


def run_diagnose(args: argparse.Namespace) -> None:
    r"""The bias diagnostics of a graph (see :func:`pyg_bemap.diagnose`),
    as text or, with :obj:`--json`, as JSON."""
    source = read_graph_source(args)
    graph = (
        named_graph(args.root, source) if isinstance(source, str) else source
    )
    diagnosis = diagnose(graph, 's', 'y', mlp=args.mlp, seed=args.seed)
    if args.json:
        print(json.dumps(diagnosis.to_dict(), indent=2, allow_nan=False))
    else:
        print(diagnosis)


def run_train(args: argparse.Namespace) -> None:
    r"""One seed of a model and its BeMap version, with the test fairness
    report at the epoch the selection rule picks: the backbone's
    hyper-parameters as the default protocol chose them on validation
    (where it ran), the graph read and prepared as its runs read it."""
    backbone = BACKBONES[args.method]
    name = DATASET_ALIASES.get(args.dataset, args.dataset)
    config = backbone_config(name, backbone).replace(
        beta=args.beta, min_keep=args.min_keep
    )
    if name == 'synthetic':
        data = biased_sbm(seed=args.seed)
        if config.scale:
            data.x = scale_features(data.x)
        data = BalanceAwareSampling(settings=config.sampler)(data)
    else:  # as the default protocol's runs: the same split for a seed
        protocol = PROTOCOLS['default']
        data = prepared_graph(protocol, args.root, name, config, args.seed)
    print(
        f'{args.dataset}: {data.num_nodes} nodes, {data.num_edges // 2} '
        f'undirected edges, {data.num_features} features; seed {args.seed}'
    )
    how = 'as chosen on validation' if (name, backbone) in TUNED else 'untuned'
    values = config.as_dict()
    shown = ', '.join(f'{k}={values[k]}' for k in UNTUNED)
    print(textwrap.fill(f'{backbone}, {how}: {shown}'))
    for method in (backbone, args.method):
        bar = progress(args.epochs, method)
        with warnings.catch_warnings(), run_threads():
            warnings.simplefilter('ignore', UserWarning)
            run = train(
                data,
                method,
                args.seed,
                config,
                args.epochs,
                args.patience,
                on_epoch=bar.update,
            )
        bar.close()
        history = run.history
        epoch = history.pick(args.selection)
        head = f'{method}: {len(history)} epochs, {run.seconds:.1f} s; '
        if epoch is None:
            said = f'no epoch to report: {args.selection!r} picked none'
        else:
            said = f'selected epoch {epoch + 1}'
        print('\n' + textwrap.fill(f'{head}{said} ({RULES[args.selection]})'))
        if epoch is not None:
            _print_report(history, epoch)
    print(
        '\nTest split, one seed: differences of a few points are within\n'
        "noise here; 'pyg-bemap compare' runs paired seeds."
    )


def _print_report(history: History, epoch: int) -> None:
    r"""The test report at :obj:`epoch`, and, where the run is degenerate
    there, why its gaps say nothing of fairness."""
    report = history.test[epoch]
    print(report)
    kind = kind_of(
        positive_share(report),
        report.delta_sp,
        report.delta_eo,
        history.val['loss'],
    )
    if kind is not None:
        print(
            textwrap.fill(
                f'degenerate ({kind}: {KINDS[kind]}): its gaps say '
                'nothing of its fairness'
            )
        )


def run_reproduce(args: argparse.Namespace) -> None:
    r"""Runs (or, with :obj:`--report-only`, reads) a protocol's stored runs
    and writes its report and plots (with :obj:`--robustness`, those of the
    robustness study, :mod:`~pyg_bemap_lab.reporting.robustness`)."""
    if args.robustness:
        protocol = robustness_protocol()
    else:
        protocol = PROTOCOLS['quick' if args.quick else args.protocol]
    if args.max_epochs is not None:
        protocol = dataclasses.replace(
            protocol,
            name=f'{protocol.name}-max{args.max_epochs}',
            max_epochs=args.max_epochs,
        )
    store = RunStore(osp.join(args.out, 'runs.jsonl'), base=args.base_runs)
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
            protocol,
            args.root,
            store,
            args.jobs,
            lambda job: bar.update(),
            args.exploratory,
        )
        bar.close()
    report_type = RobustnessReport if args.robustness else ProtocolReport
    paths = report_type(protocol, store, chosen).write(args.out)
    more = f' and {len(paths) - 1} more files' if len(paths) > 1 else ''
    new = f'{len(store) - before} new runs, {len(store)} stored in'
    print(_with_path(new, store.path))
    print(_with_path('wrote', f'{paths[0]}{more}'))


def _with_path(text: str, path: str) -> str:
    r""":obj:`text` and :obj:`path` on one line where they fit 80 columns,
    else the path on a line of its own, whole (a path has no place to
    break)."""
    line = f'{text} {path}'
    return line if len(line) <= 80 else f'{text}\n  {path}'


def run_datasets(args: argparse.Namespace) -> None:
    r"""Lists the datasets, their raw files and whether they are present."""
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
