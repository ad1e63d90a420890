r"""BeMap's knobs on a grid, on a named dataset or a graph of one's own:
each setting trained over paired seeds beside reference points (the
backbones, an MLP and FairDrop), so that the validation frontier of
accuracy against fairness shows which settings are worth a look, and the
test split shows, without choosing anything, how they do."""

import os
import os.path as osp
from collections.abc import Callable
from typing import Any

from torch_geometric.data import Data

from pyg_bemap.datasets import default_root
from pyg_bemap_lab.comparison import (
    GRAPH_GRID,
    GRAPH_GRID_SEEDS,
    warn_untuned,
)
from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.io.user_graphs import (
    DEFAULT_FRACTIONS,
    check_fractions,
    graph_for_runs,
)
from pyg_bemap_lab.reporting.sweep_report import SweepResult
from pyg_bemap_lab.run_config import RunConfig
from pyg_bemap_lab.running.execution import run_protocol
from pyg_bemap_lab.running.protocols import Job, Protocol
from pyg_bemap_lab.running.tuned import TUNED, UNTUNED
from pyg_bemap_lab.values import out_folder, run_counts

#: BeMap's settings, one knob at a time around its defaults (beta 0.25,
#: min_keep 4, balance-score delta 1, 2 hops, balance scoring, the sym
#: variant): (method, setting on top of the method's hyper-parameters).
SETTINGS: tuple[tuple[str, dict[str, Any]], ...] = (
    ('BeMap(sym)', {}),
    ('BeMap(sym)', {'beta': 0.1}),
    ('BeMap(sym)', {'beta': 0.5}),
    ('BeMap(sym)', {'beta': 1.0}),
    ('BeMap(sym)', {'min_keep': 1}),
    ('BeMap(sym)', {'min_keep': 8}),
    ('BeMap(sym)', {'balance_delta': 0.1}),
    ('BeMap(sym)', {'balance_delta': 10.0}),
    ('BeMap(sym)', {'num_hops': 1}),
    ('BeMap(sym)', {'num_hops': 3}),
    ('BeMap(sym)-uniform', {}),
    ('BeMap(sym)-degree', {}),
    ('BeMap(row)', {}),
    ('BeMap(sage)', {}),
    ('BeMap(gat)', {}),
)

#: The settings of :obj:`--quick`.
QUICK_SETTINGS: tuple[tuple[str, dict[str, Any]], ...] = (
    ('BeMap(sym)', {}),
    ('BeMap(sym)', {'beta': 0.1}),
    ('BeMap(sym)', {'beta': 1.0}),
    ('BeMap(sym)-uniform', {}),
)

#: The reference points, the backbones, an MLP and FairDrop with three
#: values of its :math:`\delta`.
REFERENCES: tuple[tuple[str, dict[str, Any]], ...] = (
    ('MLP', {}),
    ('GCN', {}),
    ('SAGE', {}),
    ('GAT', {}),
    ('FairDrop', {'fairdrop_delta': 0.08}),
    ('FairDrop', {}),
    ('FairDrop', {'fairdrop_delta': 0.32}),
)

#: The reference points of :obj:`--quick`.
QUICK_REFERENCES: tuple[tuple[str, dict[str, Any]], ...] = (
    ('MLP', {}),
    ('GCN', {}),
    ('FairDrop', {}),
)


def sweep_protocol(
    name: str,
    seeds: int,
    max_epochs: int = 1000,
    patience: int = 100,
    quick: bool = False,
    path: str | None = None,
    fractions: tuple[float, float] = DEFAULT_FRACTIONS,
) -> Protocol:
    r"""The protocol of a sweep on the dataset :obj:`name` or, with
    :obj:`path`, on the graph of one's own saved there: every setting of
    :obj:`SETTINGS` (:obj:`QUICK_SETTINGS`) and every reference point of
    :obj:`REFERENCES` (:obj:`QUICK_REFERENCES`) with :obj:`seeds` paired
    seeds. The backbones keep the default protocol's choices on a named
    dataset (:obj:`~pyg_bemap_lab.running.tuned.TUNED`) and are tuned on
    :obj:`~pyg_bemap_lab.comparison.GRAPH_GRID` on a graph of one's own;
    every other method keeps its backbone's."""
    if seeds < 1:
        raise ValueError(f'seeds must be at least 1 (got {seeds})')
    settings = QUICK_SETTINGS if quick else SETTINGS
    references = QUICK_REFERENCES if quick else REFERENCES
    methods = list(dict.fromkeys(m for m, _ in references + settings))
    swept: dict[str, tuple[dict[str, Any], ...]] = {}
    for method, setting in references + settings:
        if setting:
            swept[method] = (*swept.get(method, ()), setting)
    train, val = check_fractions(fractions)
    if path is None:
        where: dict[str, Any] = dict(
            tuned={k: v for k, v in TUNED.items() if k[0] == name}
        )
        if not where['tuned']:
            warn_untuned(name, 'the backbones')
        split = ''
    else:
        where = dict(
            grid=GRAPH_GRID,
            grid_seeds=GRAPH_GRID_SEEDS,
            split='stratified',
            graphs={name: path},
            fractions=fractions,
        )
        split = f'-split{train}-{val}'
    return Protocol(
        name=f'sweep{"-quick" if quick else ""}-max{max_epochs}-patience'
        f'{patience}{split}',
        description="BeMap's knobs, one at a time, and reference points",
        datasets=(name,),
        methods=tuple(methods),
        seeds=tuple(range(seeds)),
        max_epochs=max_epochs,
        patience=patience,
        config=RunConfig.from_dict(UNTUNED),
        sweep=swept,
        sweep_seeds=tuple(range(seeds)),
        **where,
    )


def sweep(
    data: Data | str,
    out: str,
    sens_attr: str = 's',
    label_attr: str = 'y',
    seeds: int = 10,
    epochs: int = 1000,
    patience: int = 100,
    quick: bool = False,
    fractions: tuple[float, float] = DEFAULT_FRACTIONS,
    jobs: int = 1,
    root: str | None = None,
    on_run: Callable[[Job], None] | None = None,
    exploratory: bool = False,
) -> SweepResult:
    r"""Runs the sweep of :func:`sweep_protocol` on a graph of one's own or
    a named dataset, storing every run in :obj:`out` (a rerun resumes), and
    writes :obj:`out/sweep.csv` and :obj:`out/pareto.png` (see
    :class:`~pyg_bemap_lab.reporting.sweep_report.SweepResult`).

    .. code-block:: python

        res = sweep(data, out='sweep', sens_attr='s', quick=True)
        print(res)  # the validation frontier, and how it does on test

    Args:
        data (Data or str): The graph (see
            :func:`~pyg_bemap_lab.io.user_graphs.user_graph`), or a dataset's
            name.
        out (str): The folder of the runs and the files written.
        sens_attr (str, optional): The sensitive attribute's name.
        label_attr (str, optional): The binary labels' name.
        seeds (int, optional): The paired seeds of every setting.
        epochs (int, optional): The most epochs of a run.
        patience (int, optional): Epochs without a lower validation loss
            before a run stops.
        quick (bool, optional): The small grid (:obj:`QUICK_SETTINGS`,
            :obj:`QUICK_REFERENCES`).
        fractions (tuple, optional): The training and validation shares of
            the stratified split of a graph without split masks.
        jobs (int, optional): Runs trained at once, one process each.
        root (str, optional): The datasets' folder, for a named dataset.
        exploratory (bool, optional): Store the runs of code with
            uncommitted changes, marked exploratory; without it they are
            refused (see
            :func:`~pyg_bemap_lab.running.provenance.check_committed`).
            (default: :obj:`False`)
    """
    seeds, epochs, patience, jobs = run_counts(seeds, epochs, patience, jobs)
    out = out_folder('out', out)
    os.makedirs(out, exist_ok=True)
    name, path = graph_for_runs(data, out, sens_attr, label_attr)
    protocol = sweep_protocol(
        name, seeds, epochs, patience, quick, path, fractions
    )
    store = RunStore(osp.join(out, 'runs.jsonl'))
    chosen = run_protocol(
        protocol, root or default_root(), store, jobs, on_run, exploratory
    )
    result = SweepResult(protocol, store, chosen)
    result.write(out)
    return result
