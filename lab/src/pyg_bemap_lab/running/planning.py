r"""Which runs a protocol needs, and what its stored runs chose: the
configuration of every (dataset, method) and the runs still missing."""

import math
import statistics
from collections.abc import Callable
from typing import Any

from pyg_bemap_lab.io.store import RunStore, run_key
from pyg_bemap_lab.methods import BACKBONES
from pyg_bemap_lab.run_config import Chosen, RunConfig
from pyg_bemap_lab.running.protocols import (
    Job,
    Protocol,
    record_of,
    sweep_configs,
    tuned_backbones,
)
from pyg_bemap_lab.selection import STORED_RULES

#: Completes a phase's jobs: the jobs, and whether the phase reads the
#: test report at each stored rule's epoch (tuning reads the curves only).
Complete = Callable[[list[Job], bool], None]


def chosen_configs(protocol: Protocol, store: RunStore) -> Chosen:
    r"""The configuration chosen for every (dataset, method) from the runs
    in :obj:`store` alone, training nothing: what
    :func:`~pyg_bemap_lab.running.execution.run_protocol` returns once the
    store is complete. With missing tuning runs, a choice rests on the runs
    there are."""
    chosen: Chosen = {}
    for dataset in protocol.datasets:
        chosen.update(plan_dataset(protocol, store, lambda *_: None, dataset))
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
    return {
        dataset: _missing_count(protocol, store, dataset)
        for dataset in protocol.datasets
    }


def _missing_count(protocol: Protocol, store: RunStore, dataset: str) -> int:
    todo: set[str] = set()

    def count(wanted: list[Job], picks: bool) -> None:
        for job in missing_jobs(protocol, store, wanted, picks):
            todo.add(run_key(record_of(protocol, job)))

    plan_dataset(protocol, store, count, dataset)
    return len(todo)


def missing_jobs(
    protocol: Protocol,
    store: RunStore,
    wanted: list[Job],
    picks: bool = True,
) -> list[Job]:
    r"""The jobs of :obj:`wanted` that :obj:`store` does not hold or, if
    :obj:`picks`, holds without the test report of a stored rule (a run
    stored before that rule was; trained again, it replaces the stored one,
    whose curve it repeats up to floating-point rounding: on other
    versions of torch or another machine, curves part after some epochs),
    each run once."""
    todo: dict[str, Job] = {}
    for job in wanted:
        key = run_key(record_of(protocol, job))
        run = store.get(key)
        if run is None or (
            picks and not set(STORED_RULES) <= set(run['test'])
        ):
            todo.setdefault(key, job)
    return list(todo.values())


def plan_dataset(
    protocol: Protocol,
    store: RunStore,
    complete: Complete,
    dataset: str,
) -> Chosen:
    chosen: Chosen = {}
    backbones = tuned_backbones(protocol)
    if protocol.grid_seeds:
        complete(
            [
                (dataset, m, c, s)
                for m in backbones
                for c in protocol.grid_configs()
                for s in protocol.grid_seeds
            ],
            False,
        )
    for method in backbones:
        chosen[dataset, method] = _best_config(
            protocol, store, dataset, method
        )
    if 'FairDrop' in protocol.methods:
        candidates = [
            chosen[dataset, 'GCN'].replace(fairdrop_delta=delta)
            for delta in protocol.fairdrop_deltas
        ]
        if len(protocol.fairdrop_deltas) > 1:
            complete(
                [
                    (dataset, 'FairDrop', c, s)
                    for c in candidates
                    for s in protocol.grid_seeds or protocol.seeds
                ],
                True,
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
        ],
        True,
    )
    complete(
        [
            (dataset, m, config, s)
            for m, config in sweep_configs(protocol, chosen, dataset)
            for s in protocol.sweep_seeds
        ],
        True,
    )
    return chosen


def stored_runs(
    protocol: Protocol,
    store: RunStore,
    dataset: str,
    method: str,
    config: RunConfig,
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
    chosen: Chosen,
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
) -> RunConfig:
    if (dataset, method) in protocol.tuned:
        return protocol.config.replace(**protocol.tuned[dataset, method])
    if not protocol.grid_seeds:
        return protocol.config

    def mean_loss(config: RunConfig) -> float:
        runs = stored_runs(
            protocol, store, dataset, method, config, protocol.grid_seeds
        )
        losses = [min(r['curve']['loss'], default=math.inf) for r in runs]
        return statistics.mean(losses) if losses else math.inf

    return min(protocol.grid_configs(), key=mean_loss)


def _mean_fairness(
    protocol: Protocol, store: RunStore, dataset: str, config: RunConfig
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
