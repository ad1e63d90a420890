r"""Shared helpers of the benchmarks."""

import os
import os.path as osp
import tempfile
import time
from collections.abc import Callable

import numpy as np
from torch import Tensor
from torch_geometric.data import Data

from pyg_bemap.settings import SamplerSettings
from pyg_bemap.utils.sampling import SamplingPlan, draw_edge_mask


def median_time(fn: Callable[[], object], repeat: int) -> float:
    r"""The median wall time of :obj:`repeat` calls of :obj:`fn`, in
    seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def interleaved_median_times(
    fns: list[Callable[[], object]], repeat: int
) -> list[float]:
    r"""The median wall time of :obj:`repeat` calls of each function, in
    seconds, calling them in turn (one call of each per round), so that
    the machine's speed drifts alike for all of them."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, fn_times in zip(fns, times):
            start = time.perf_counter()
            fn()
            fn_times.append(time.perf_counter() - start)
    return [float(np.median(fn_times)) for fn_times in times]


def resampler(prepared: Data) -> tuple[SamplingPlan, Callable[[], Tensor]]:
    r"""The default sampling plan of a prepared graph and a function that
    draws one sample and applies it, as a training pass does."""
    plain = prepared.edge_index.as_tensor()
    cache = prepared.edge_index.bemap.sampler(prepared.edge_index, plain)
    plan = cache.plan(SamplerSettings())
    return plan, lambda: plain[:, draw_edge_mask(plan)]


SHARED = osp.join(osp.dirname(__file__), '..', '..', 'shared', 'datasets')


def shared_root(names: list[str]) -> str:
    r"""A dataset root in the layout :class:`FairGraphDataset` reads
    (:obj:`ROOT/<name>/raw/`), linking the files of :obj:`../shared/datasets`
    into a temporary folder."""
    root = tempfile.mkdtemp(prefix='pyg_bemap_bench_')
    for name in names:
        source = osp.abspath(osp.join(SHARED, name))
        raw = osp.join(root, name, 'raw')
        os.makedirs(raw)
        for file in os.listdir(source):
            os.symlink(osp.join(source, file), osp.join(raw, file))
    return root
