r"""Experimental protocols as named objects, and running one against a
:class:`~pyg_bemap_lab.store.RunStore`, so that an interrupted run
resumes where it stopped."""

import itertools
import math
import multiprocessing
import statistics
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

import torch
from torch_geometric.data import Data

from pyg_bemap.datasets import SPECS, FairGraphDataset, split_masks
from pyg_bemap.datasets.reference_splits import reference_split
from pyg_bemap.transforms import BalanceAwareSampling
from pyg_bemap_lab.store import RunStore, run_key
from pyg_bemap_lab.training import (
    BACKBONES,
    PAPER_BUDGETS,
    train_run,
)

ALL_METHODS = (
    'MLP',
    'GCN',
    'SAGE',
    'GAT',
    'BeMap(row)',
    'BeMap(sym)',
    'BeMap(sage)',
    'BeMap(gat)',
    'BeMap(sym)-uniform',
    'BeMap(sym)-degree',
    'FairDrop',
)


@dataclass(frozen=True)
class Protocol:
    r"""How methods are trained, tuned and compared.

    * Hyper-parameters: the backbones (MLP, GCN, SAGE, GAT) are tuned per
      dataset on the :obj:`grid` (every combination), each combination
      trained with the :obj:`grid_seeds`, choosing the lowest mean
      validation loss. A method that changes the training graph (BeMap and
      its ablations, FairDrop) keeps its backbone's choice, so that it and
      its backbone differ in the training graph only and start from the
      same weights for the same seed; FairDrop's :math:`\delta` is then
      chosen from :obj:`deltas` by the lowest mean validation
      :math:`\Delta_{SP} + \Delta_{EO}` at the fairness-aware epoch.
      Without :obj:`grid_seeds`, :obj:`config` is used as it is.
    * Training: at most :obj:`max_epochs`, stopping once the validation
      loss has not improved for :obj:`patience` epochs.
    * Split: :obj:`'random'`, a 50/25/25 split drawn from each run's seed;
      or :obj:`'reference'`, the reference loaders' fixed split
      (:mod:`~pyg_bemap.datasets.reference_splits`), the same for every
      seed.
    * Reported epochs: see :func:`~pyg_bemap_lab.training.train_run`;
      a protocol reports the validation rules, or, with
      :obj:`test_selection`, only the reference code's rule, which selects
      on the test split (labelled so wherever it is shown).
    * Comparisons: every method with the :obj:`seeds`, paired by seed.

    Args:
        name (str): The protocol's name, stored with every run.
        description (str): One line for people.
        datasets (tuple): The datasets.
        methods (tuple): The methods (keys of
            :obj:`METHODS`).
        seeds (tuple): The seeds of the reported runs.
        max_epochs (int): The most epochs of a run.
        patience (int): Early-stopping patience on the validation loss.
        config (dict): The hyper-parameters when nothing is tuned, and the
            fixed ones (weight decay, BeMap's beta and min_keep).
        grid (dict): Name -> the values to try.
        grid_seeds (tuple): The seeds of the tuning runs.
        deltas (tuple): FairDrop's :math:`\delta` values to try.
        sweep (dict): Method -> settings to sweep on top of the method's
            chosen hyper-parameters, each trained with :obj:`sweep_seeds`,
            for the trade-off plots.
        sweep_seeds (tuple): The seeds of the sweep.
        split (str): :obj:`'random'` or :obj:`'reference'`.
        test_selection (bool): Report the reference code's test-split rule
            only.
    """

    name: str
    description: str
    datasets: tuple[str, ...]
    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    max_epochs: int
    patience: int
    config: dict[str, Any] = field(default_factory=dict)
    grid: dict[str, tuple] = field(default_factory=dict)
    grid_seeds: tuple[int, ...] = ()
    deltas: tuple[float, ...] = (0.16,)
    sweep: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    sweep_seeds: tuple[int, ...] = ()
    split: str = 'random'
    test_selection: bool = False

    def grid_configs(self) -> list[dict[str, Any]]:
        r"""Every combination of the grid, on top of :obj:`config`."""
        names = sorted(self.grid)
        return [
            {**self.config, **dict(zip(names, values))}
            for values in itertools.product(*(self.grid[n] for n in names))
        ]


_FIXED = dict(weight_decay=1e-5, beta=0.25, min_keep=4, delta=0.16)

PROTOCOLS: dict[str, Protocol] = {
    'default': Protocol(
        name='default',
        description='tuned backbones, 10 paired seeds, up to 1000 epochs',
        datasets=('nba', 'german', 'recidivism', 'credit'),
        methods=ALL_METHODS,
        seeds=tuple(range(10)),
        max_epochs=1000,
        patience=100,
        config=dict(_FIXED, lr=1e-3, hidden=128, dropout=0.5, scale=True),
        grid=dict(
            lr=(1e-3, 1e-2),
            hidden=(16, 128),
            dropout=(0.0, 0.5),
            scale=(True, False),
        ),
        grid_seeds=(0, 1),
        deltas=(0.08, 0.16, 0.32),
        sweep={
            'BeMap(sym)': tuple(
                dict(beta=beta, min_keep=min_keep)
                for beta in (0.1, 0.25, 0.5, 1.0)
                for min_keep in (1, 4)
            ),
            'FairDrop': tuple(
                dict(delta=delta) for delta in (0.0, 0.08, 0.16, 0.32, 0.5)
            ),
        },
        sweep_seeds=(0, 1, 2, 3, 4),
    ),
    'quick': Protocol(
        name='quick',
        description='NBA and German, 3 seeds, no tuning',
        datasets=('nba', 'german'),
        methods=('MLP', 'GCN', 'BeMap(sym)', 'FairDrop'),
        seeds=(0, 1, 2),
        max_epochs=300,
        patience=50,
        config=dict(_FIXED, lr=1e-2, hidden=16, dropout=0.5, scale=True),
    ),
    'reference': Protocol(
        name='reference',
        description="the reference code's split, model, 400 epochs and "
        'test-split selection',
        datasets=('nba', 'recidivism', 'credit'),
        methods=('GCN', 'BeMap(sym)', 'BeMap(sym)-renumbered'),
        seeds=(0, 1, 2, 3, 4),
        max_epochs=400,
        patience=400,  # no early stopping: every run trains 400 epochs
        config=dict(
            _FIXED, lr=1e-3, hidden=128, dropout=0.0, head=True, scale=True
        ),
        split='reference',
        test_selection=True,
    ),
}


def tuned_backbones(protocol: Protocol) -> list[str]:
    r"""The methods whose hyper-parameters the protocol tunes."""
    names = {BACKBONES.get(m, m) for m in protocol.methods}
    return [m for m in ('MLP', 'GCN', 'SAGE', 'GAT') if m in names]


Job = tuple[str, str, dict[str, Any], int]  # dataset, method, config, seed


def run_protocol(
    protocol: Protocol,
    root: str,
    store: RunStore,
    jobs: int = 1,
    on_run: Callable[[Job], None] | None = None,
) -> dict[tuple[str, str], dict[str, Any]]:
    r"""Runs what :obj:`store` does not hold yet of :obj:`protocol` and
    returns the configuration chosen for every (dataset, method).

    Datasets are completed one after the other, in the protocol's order
    (tuning, then the reported runs, then the sweep), so that the results
    of the first ones are whole while the later ones still run. Runs go to
    :obj:`jobs` worker processes; each finished run is stored at once, so
    an interruption loses at most the runs in progress.
    """

    def complete(wanted: list[Job]) -> None:
        _complete(protocol, root, store, jobs, on_run, wanted)

    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for dataset in protocol.datasets:
        chosen.update(_run_dataset(protocol, store, complete, dataset))
    return chosen


def chosen_configs(
    protocol: Protocol, store: RunStore
) -> dict[tuple[str, str], dict[str, Any]]:
    r"""The configuration chosen for every (dataset, method) from the runs
    in :obj:`store` alone, training nothing: what :func:`run_protocol`
    returns once the store is complete. With missing tuning runs, a choice
    rests on the runs there are."""
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    for dataset in protocol.datasets:
        chosen.update(_run_dataset(protocol, store, lambda _: None, dataset))
    return chosen


def datasets_with_runs(protocol: Protocol, store: RunStore) -> list[str]:
    r"""The protocol's datasets of which :obj:`store` holds runs, in the
    protocol's order."""
    held = {r['dataset'] for r in store if r['protocol'] == protocol.name}
    return [d for d in protocol.datasets if d in held]


def missing_runs(protocol: Protocol, store: RunStore) -> dict[str, int]:
    r"""Dataset -> the number of the protocol's runs that :obj:`store` does
    not hold yet (later phases counted with the choices the stored runs
    make so far)."""
    missing = {}
    for dataset in protocol.datasets:
        wanted: list[Job] = []
        _run_dataset(protocol, store, wanted.extend, dataset)
        missing[dataset] = len(_missing_jobs(protocol, store, wanted))
    return missing


def _missing_jobs(
    protocol: Protocol, store: RunStore, wanted: list[Job]
) -> list[Job]:
    r"""The jobs of :obj:`wanted` that :obj:`store` does not hold, each run
    once."""
    todo: dict[str, Job] = {}
    for job in wanted:
        key = run_key(record_of(protocol, job))
        if key not in store:
            todo.setdefault(key, job)
    return list(todo.values())


def _run_dataset(
    protocol: Protocol,
    store: RunStore,
    complete: Callable[[list[Job]], None],
    dataset: str,
) -> dict[tuple[str, str], dict[str, Any]]:
    chosen: dict[tuple[str, str], dict[str, Any]] = {}
    backbones = tuned_backbones(protocol)
    if protocol.grid_seeds:
        complete(
            [
                (dataset, m, c, s)
                for m in backbones
                for c in protocol.grid_configs()
                for s in protocol.grid_seeds
            ]
        )
    for method in backbones:
        chosen[dataset, method] = _best_config(
            protocol, store, dataset, method
        )
    if 'FairDrop' in protocol.methods:
        candidates = [
            {**chosen[dataset, 'GCN'], 'delta': delta}
            for delta in protocol.deltas
        ]
        if len(protocol.deltas) > 1:
            complete(
                [
                    (dataset, 'FairDrop', c, s)
                    for c in candidates
                    for s in protocol.grid_seeds or protocol.seeds
                ]
            )
        chosen[dataset, 'FairDrop'] = min(
            candidates,
            key=lambda c: _mean_fairness(protocol, store, dataset, c),
        )
    for method in protocol.methods:
        if (dataset, method) not in chosen:
            chosen[dataset, method] = chosen[dataset, BACKBONES[method]]
    complete(
        [
            (dataset, m, chosen[dataset, m], s)
            for m in protocol.methods
            for s in protocol.seeds
        ]
    )
    complete(
        [
            (dataset, m, config, s)
            for m, config in sweep_configs(protocol, chosen, dataset)
            for s in protocol.sweep_seeds
        ]
    )
    return chosen


def sweep_configs(
    protocol: Protocol,
    chosen: dict[tuple[str, str], dict[str, Any]],
    dataset: str,
) -> list[tuple[str, dict[str, Any]]]:
    r"""The (method, configuration) pairs of the trade-off sweep on
    :obj:`dataset`: each swept setting on top of the method's chosen
    hyper-parameters."""
    return [
        (method, {**chosen[dataset, method], **setting})
        for method, settings in protocol.sweep.items()
        if method in protocol.methods
        for setting in settings
    ]


def record_of(
    protocol: Protocol, job: Job, result: dict[str, Any] | None = None
) -> dict[str, Any]:
    r"""The stored record of a job: its identity, and its result."""
    dataset, method, config, seed = job
    record = dict(
        protocol=protocol.name,
        dataset=dataset,
        method=method,
        config=config,
        seed=seed,
    )
    return {**record, **(result or {})}


def _complete(
    protocol: Protocol,
    root: str,
    store: RunStore,
    jobs: int,
    on_run: Callable[[Job], None] | None,
    wanted: list[Job],
) -> None:
    todo = _missing_jobs(protocol, store, wanted)
    for job, result in _execute(protocol, root, todo, jobs):
        store.add(record_of(protocol, job, result))
        if on_run is not None:
            on_run(job)


def _execute(
    protocol: Protocol, root: str, todo: list[Job], jobs: int
) -> Iterator[tuple[Job, dict[str, Any]]]:
    if jobs <= 1:
        for job in todo:
            yield job, _run_job(protocol, root, job)
        return
    context = multiprocessing.get_context('spawn')
    threads = max(1, torch.get_num_threads() // jobs)
    with ProcessPoolExecutor(
        jobs, context, torch.set_num_threads, (threads,)
    ) as pool:
        futures = {
            pool.submit(_run_job, protocol, root, job): job for job in todo
        }
        for future in as_completed(futures):
            yield futures[future], future.result()


_DATA: dict[tuple[str, str, bool], Data] = {}


def _run_job(protocol: Protocol, root: str, job: Job) -> dict[str, Any]:
    dataset, method, config, seed = job
    scale = bool(config.get('scale', True))
    if (root, dataset, scale) not in _DATA:  # once per worker process
        graph = FairGraphDataset(root, dataset, feature_norm=scale)[0]
        _DATA[root, dataset, scale] = BalanceAwareSampling()(graph)
    data = _DATA[root, dataset, scale]
    if protocol.split == 'reference':
        spec = SPECS[dataset]
        masks = reference_split(
            data.y, spec.reference_split, spec.reference_label_budget
        )
    else:
        masks = split_masks(data.y, seed)
    data.train_mask, data.val_mask, data.test_mask = masks
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)  # NaN gaps of a run
        return train_run(
            data,
            method,
            config,
            seed,
            protocol.max_epochs,
            protocol.patience,
            PAPER_BUDGETS.get(dataset),
        )


def stored_runs(
    protocol: Protocol,
    store: RunStore,
    dataset: str,
    method: str,
    config: dict[str, Any],
    seeds: tuple[int, ...],
) -> list[dict[str, Any]]:
    r"""The stored runs of one (dataset, method, configuration), for the
    :obj:`seeds` that have one."""
    runs = []
    for seed in seeds:
        run = store.get(
            run_key(record_of(protocol, (dataset, method, config, seed)))
        )
        if run is not None:
            runs.append(run)
    return runs


def chosen_runs(
    protocol: Protocol,
    store: RunStore,
    chosen: dict[tuple[str, str], dict[str, Any]],
    dataset: str,
    method: str,
) -> list[dict[str, Any]]:
    r"""The stored reported runs (the protocol's :obj:`seeds`) of
    :obj:`method` on :obj:`dataset` with its chosen configuration."""
    return stored_runs(
        protocol,
        store,
        dataset,
        method,
        chosen[dataset, method],
        protocol.seeds,
    )


def _best_config(
    protocol: Protocol, store: RunStore, dataset: str, method: str
) -> dict[str, Any]:
    if not protocol.grid_seeds:
        return dict(protocol.config)

    def mean_loss(config: dict[str, Any]) -> float:
        runs = stored_runs(
            protocol, store, dataset, method, config, protocol.grid_seeds
        )
        losses = [min(r['curve']['loss'], default=math.inf) for r in runs]
        return statistics.mean(losses) if losses else math.inf

    return min(protocol.grid_configs(), key=mean_loss)


def _mean_fairness(
    protocol: Protocol, store: RunStore, dataset: str, config: dict[str, Any]
) -> float:
    runs = stored_runs(
        protocol,
        store,
        dataset,
        'FairDrop',
        config,
        protocol.grid_seeds or protocol.seeds,
    )
    gaps = []
    for run in runs:
        curve, picked = run['curve'], run['test']['val-fair']
        if picked is not None:
            epoch = picked['epoch']
            gaps.append(curve['sp'][epoch] + curve['eo'][epoch])
    return statistics.mean(gaps) if gaps else math.inf
