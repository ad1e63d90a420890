r"""Running a protocol against a :class:`~pyg_bemap_lab.io.store.RunStore`:
each finished run is stored at once, so that an interrupted run resumes
where it stopped."""

import contextlib
import multiprocessing
import signal
import threading
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch_geometric.data import Data

from pyg_bemap.datasets import (
    SPECS,
    FairGraphDataset,
    reference_split,
    scale_features,
    split_masks,
)
from pyg_bemap.transforms import BalanceAwareSampling
from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.io.user_graphs import stratified_masks
from pyg_bemap_lab.run_config import Chosen, RunConfig
from pyg_bemap_lab.running.models import PAPER_BUDGETS
from pyg_bemap_lab.running.planning import missing_jobs, plan_dataset
from pyg_bemap_lab.running.protocols import Job, Protocol, record_of
from pyg_bemap_lab.running.provenance import check_committed
from pyg_bemap_lab.running.threads import run_threads
from pyg_bemap_lab.running.training import train_run
from pyg_bemap_lab.running.workers import start_worker


def run_protocol(
    protocol: Protocol,
    root: str,
    store: RunStore,
    jobs: int = 1,
    on_run: Callable[[Job], None] | None = None,
    exploratory: bool = False,
) -> Chosen:
    r"""Runs what :obj:`store` does not hold yet of :obj:`protocol` and
    returns the configuration chosen for every (dataset, method).

    Code with uncommitted changes trains and stores runs only if they are
    :obj:`exploratory` (see
    :func:`~pyg_bemap_lab.running.provenance.check_committed`); each run's
    provenance says whether it is.

    Datasets are completed one after the other, in the protocol's order
    (tuning, then the reported runs, then the sweep), so that the results
    of the first ones are whole while the later ones still run. Runs go to
    :obj:`jobs` worker processes; each finished run is stored at once, so
    an interruption loses at most the runs in progress. The store is held
    for this process meanwhile (:meth:`~pyg_bemap_lab.io.store.RunStore.lock`).
    """

    def complete(wanted: list[Job], picks: bool) -> None:
        todo = missing_jobs(protocol, store, wanted, picks)
        if todo:  # a complete store reports from any code
            check_committed(exploratory)
        for job, result in _execute(protocol, root, todo, jobs):
            record = record_of(protocol, job, result)
            marked = {**record['provenance'], 'exploratory': exploratory}
            store.add({**record, 'provenance': marked})
            if on_run is not None:
                on_run(job)

    chosen: Chosen = {}
    with store.lock():
        for dataset in protocol.datasets:
            chosen.update(plan_dataset(protocol, store, complete, dataset))
    return chosen


def _execute(
    protocol: Protocol, root: str, todo: list[Job], jobs: int
) -> Iterator[tuple[Job, dict[str, Any]]]:
    jobs = min(jobs, len(todo))  # no idle worker, no pool for nothing
    if jobs <= 1:
        with run_threads():
            for job in todo:
                yield job, _run_job(protocol, root, job)
        return
    _read_datasets(protocol, root, todo)
    context = multiprocessing.get_context('spawn')
    with _uninterrupted():  # the workers start with Ctrl-C ignored
        pool = context.Pool(jobs, start_worker)
    try:
        tasks = [(protocol, root, job) for job in todo]
        yield from pool.imap_unordered(_job_and_result, tasks)
        pool.close()
    finally:
        # Ctrl-C, an error, or a caller that stopped early: the workers
        # end now, not after the runs they hold, and a second Ctrl-C does
        # not cut the ending short
        with _uninterrupted():
            pool.terminate()
            pool.join()


def _read_datasets(protocol: Protocol, root: str, todo: list[Job]) -> None:
    r"""Reads every named dataset :obj:`todo` trains on once, in this
    process, so that workers starting together find it processed rather
    than all processing it at once (each writing the same files)."""
    for dataset, scale in sorted({(job[0], job[2].scale) for job in todo}):
        if dataset not in protocol.graphs:
            FairGraphDataset(root, dataset, feature_norm=scale, log=False)


@contextlib.contextmanager
def _uninterrupted() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread receives signals
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _job_and_result(
    task: tuple[Protocol, str, Job],
) -> tuple[Job, dict[str, Any]]:
    protocol, root, job = task
    return job, _run_job(protocol, root, job)


def _run_job(protocol: Protocol, root: str, job: Job) -> dict[str, Any]:
    dataset, method, config, seed = job
    data = prepared_graph(protocol, root, dataset, config, seed)
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


def prepared_graph(
    protocol: Protocol,
    root: str,
    dataset: str,
    config: RunConfig,
    seed: int,
) -> Data:
    r"""The graph one run of :obj:`protocol` trains on: read (a named
    dataset from :obj:`root`, or a graph of one's own), its features
    scaled to :math:`[-1, 1]` unless :obj:`config.scale` is false,
    prepared by :class:`~pyg_bemap.BalanceAwareSampling` (with
    :obj:`config.sampler`'s :math:`L` and :math:`\delta`), and split for
    :obj:`seed`.

    Each run reads its graph (at most 3 % of a run's time on the four
    datasets), so that no data outlives it in the process.
    """
    scale = config.scale
    if dataset in protocol.graphs:
        graph = torch.load(protocol.graphs[dataset], weights_only=False)
        if scale:
            graph.x = scale_features(graph.x)
    else:
        read = FairGraphDataset(root, dataset, feature_norm=scale, log=False)
        graph = read[0]
    data = BalanceAwareSampling(settings=config.sampler)(graph)
    if protocol.split == 'reference':
        spec = SPECS[dataset]
        masks = reference_split(
            data.y, spec.reference_split, spec.reference_label_budget
        )
    elif dataset in protocol.graphs and 'train_mask' in data:
        return data  # the graph's own split, the same for every seed
    elif protocol.split == 'budgets':
        budget = SPECS[dataset].reference_label_budget
        masks = reference_split(data.y, 'per_class', budget, seed)
    elif protocol.split == 'stratified':
        masks = stratified_masks(data.y, data.s, seed, protocol.fractions)
    else:
        masks = split_masks(data.y, seed)
    data.train_mask, data.val_mask, data.test_mask = masks
    return data
