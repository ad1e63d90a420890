r"""Shared helpers of the benchmarks."""

import argparse
import importlib
import os
import os.path as osp
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch.profiler import ProfilerActivity, profile
from torch_geometric.data import Data
from torch_geometric.nn import MessagePassing

from pyg_bemap import SamplerSettings
from pyg_bemap.infra.sparse import masked_columns
from pyg_bemap.rules.draw import (
    SamplingPlan,
    draw_edge_mask,
    kept_positions,
)


def add_device_argument(parser: argparse.ArgumentParser) -> None:
    r"""Adds :obj:`--device` (default: :obj:`cpu`)."""
    parser.add_argument(
        '--device',
        default='cpu',
        help='where to run, e.g. cuda or cuda:1 (skipped when absent)',
    )


def add_candidate_argument(parser: argparse.ArgumentParser) -> None:
    r"""Adds :obj:`--candidate`: a module of ``candidates/`` to measure in
    place of the library function it replaces (:func:`use_candidate`)."""
    parser.add_argument(
        '--candidate',
        help='a module of benchmarks/candidates, used in place of the '
        'library function it replaces',
    )


def use_candidate(name: str | None) -> None:
    r"""Patches the candidate :obj:`name` (if any) in for this process and
    says so."""
    if name is None:
        return
    from candidates import replaced

    module = importlib.import_module(f'candidates.{name}')
    library, attribute = replaced(module)
    if not hasattr(library, attribute):
        raise ValueError(f'{module.REPLACES} is not in the library')
    setattr(library, attribute, getattr(module, attribute))
    print(f'candidate {name} in place of {module.REPLACES}')


def add_sizes_argument(
    parser: argparse.ArgumentParser, default: list[float]
) -> None:
    r"""Adds :obj:`--sizes`: millions of directed edges of the synthetic
    graphs (:func:`synthetic_graph`)."""
    parser.add_argument(
        '--sizes',
        type=float,
        nargs='+',
        default=default,
        help='millions of directed edges of the synthetic graphs',
    )


def synthetic_graph(
    million_edges: float, num_features: int, device: torch.device
) -> Data:
    r"""A homophilous two-group graph with about 20 neighbours per node and
    :obj:`million_edges` million directed edges, built on :obj:`device`
    (on a GPU in seconds, where the CPU takes minutes at 100M edges)."""
    from pyg_bemap.datasets import biased_sbm

    num_nodes = int(million_edges * 1e6 / 20)
    return biased_sbm(
        num_nodes, avg_degree=20.0, num_features=num_features, device=device
    )


def setup_line(device: torch.device) -> str:
    r"""torch's version, its threads, the device and the install."""
    from torch_geometric.typing import WITH_TORCH_SPARSE

    install = 'installed' if WITH_TORCH_SPARSE else 'missing'
    return (
        f'torch {torch.__version__}, {torch.get_num_threads()} threads, '
        f'{device}, torch-sparse {install}'
    )


def training_step(model: Any, data: Data, graph: Any) -> Callable[[], None]:
    r"""One training step of :obj:`model` on :obj:`graph` (forward,
    cross-entropy against the labels, unlabelled nodes as class 0,
    backward, an Adam step), as a function."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    target = data.y.clamp(min=0)

    def step() -> None:
        model.train()
        optimizer.zero_grad()
        out = model(data.x, graph)
        torch.nn.functional.cross_entropy(out, target).backward()
        optimizer.step()

    return step


class PassThrough(MessagePassing):
    r"""A layer that returns its input: around it, a call of
    :class:`BeMapConv` is the resample alone."""

    def forward(self, x: Tensor, edge_index: Any) -> Tensor:
        return x


def chosen_device(name: str) -> torch.device:
    r"""The device :obj:`name`; when it is a GPU this machine lacks, says
    so in one line and exits with 0, so that a GPU run of the benchmarks
    needs no change of code and a CPU machine skips it."""
    device = torch.device(name)
    if device.type == 'cuda' and not torch.cuda.is_available():
        print(f'skipped: no CUDA device here ({name})')
        sys.exit(0)
    return device


def wall_clock() -> float:
    r"""The wall clock after the GPU's queued work is done, if any."""
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
    return time.perf_counter()


def median_time(fn: Callable[[], object], repeat: int) -> float:
    r"""The median wall time of :obj:`repeat` calls of :obj:`fn`, in
    seconds."""
    times = []
    for _ in range(repeat):
        start = wall_clock()
        fn()
        times.append(wall_clock() - start)
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
            start = wall_clock()
            fn()
            fn_times.append(wall_clock() - start)
    return [float(np.median(fn_times)) for fn_times in times]


def worker_rounds(
    pipes: list[Any], processes: list[Any], rounds: int
) -> list[list[Any]]:
    r"""What each worker process sends back for each of :obj:`rounds`
    rounds, asked by sending :obj:`True` down its pipe, the workers taking
    turns (the order rotating each round, so that the machine's drift
    affects all alike); then :obj:`False` stops them."""
    results: list[list[Any]] = [[] for _ in pipes]
    for round_ in range(rounds):
        for i in range(len(pipes)):
            which = (round_ + i) % len(pipes)
            pipes[which].send(True)
            results[which].append(pipes[which].recv())
    for pipe, process in zip(pipes, processes):
        pipe.send(False)
        process.join()
    return results


def host_and_wall_ms(
    fn: Callable[[], object], repeat: int
) -> tuple[float, float]:
    r"""Milliseconds per call of :obj:`fn`: until the host returns, and
    until the device is done too."""
    wall_clock()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    host = time.perf_counter() - start
    wall = wall_clock() - start
    return host / repeat * 1e3, wall / repeat * 1e3


def syncs_per_call(fn: Callable[[], object], device: torch.device) -> int:
    r"""The host synchronisations of one call of :obj:`fn` on a CUDA
    device (torch's sync debug mode, counted as its warnings); 0
    elsewhere."""
    if device.type != 'cuda':
        return 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        torch.cuda.set_sync_debug_mode('warn')
        try:
            fn()
        finally:
            torch.cuda.set_sync_debug_mode('default')
    return sum('synchroniz' in str(w.message) for w in caught)


def profile_calls(
    name: str, fn: Callable[[], object], device: torch.device, repeat: int
) -> None:
    r"""Prints where the time of a call of :obj:`fn` goes: host and wall
    time, host synchronisations, and the kernels and device time
    (:mod:`torch.profiler`) with the costliest kernels."""
    for _ in range(5):
        fn()
    host, wall = host_and_wall_ms(fn, repeat)
    syncs = syncs_per_call(fn, device)
    print(
        f'{name}: {host:.3f} ms on the host, {wall:.3f} ms in all, '
        f'{syncs} syncs'
    )
    activities = [ProfilerActivity.CPU]
    if device.type == 'cuda':
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as prof:
        for _ in range(repeat):
            fn()
        wall_clock()
    kernels = [
        event
        for event in prof.key_averages()
        if event.device_type.name != 'CPU'
    ]
    launched = sum(event.count for event in kernels) / repeat
    busy = sum(event.self_device_time_total for event in kernels) / repeat
    ops = sum(map(_is_outer_op, prof.events())) / repeat
    print(
        f'  {ops:.0f} torch ops, {launched:.0f} kernels a call, '
        f'{busy / 1e3:.3f} ms device time'
    )
    for event in sorted(kernels, key=lambda e: -e.self_device_time_total)[:8]:
        share = event.self_device_time_total / repeat / 1e3
        print(f'  {share:7.3f} ms  {event.key[:58]}')


def _is_outer_op(event: Any) -> bool:
    r"""Whether a profiler event is a torch op called from Python, not
    from another op (what launches kernels on a GPU)."""
    parent = event.cpu_parent
    return event.name.startswith('aten::') and (
        parent is None or not parent.name.startswith('aten::')
    )


def resampler(prepared: Data) -> tuple[SamplingPlan, Callable[[], Tensor]]:
    r"""The default sampling plan of a prepared graph and a function that
    draws one sample and applies it, as a training pass does."""
    plain = prepared.edge_index.as_tensor()
    cache = prepared.edge_index.bemap.sampler(prepared.edge_index, plain)
    plan = cache.plan(SamplerSettings())

    def resample() -> Tensor:
        mask = draw_edge_mask(plan)
        positions = kept_positions(mask, plan.num_kept)
        return masked_columns(plain, mask, positions)

    return plan, resample


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
