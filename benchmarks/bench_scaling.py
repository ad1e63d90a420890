r"""Performance envelope: synthetic homophilous graphs of about 20 neighbours
per node (1M, 4M and 16M directed edges by default; 100M fit on 23 GiB).
For each size, measured in one run:

* the transform's time and peak extra memory, exact and walk counting, and
  exact counting alone against its documented bound;
* one resample (the draw and :obj:`edge_index[:, mask]`), its throughput
  and peak extra memory;
* one full-batch training step (forward, backward, Adam) of a 2-layer GCN
  (128 hidden): PyG's on the edge list, unless its per-edge messages
  cannot fit in the memory free on the device, and :obj:`to_bemap` of it
  on the transformed data (a sparse adjacency of the sample);
* with :obj:`--loader`, one epoch of BeMap-GCN over the training nodes
  with :obj:`NeighborLoader` mini-batches (10 and 10 neighbours, batches of
  2048, needs torch-sparse or pyg-lib).

Memory is the kernel's resident-memory high-water mark (Linux), measured in
a child process with glibc's mmap threshold fixed (MALLOC_MMAP_THRESHOLD_)
so that freed tensors leave the process at once; on a GPU, torch's peak of
allocated memory. Times are measured with the default allocator.

    python benchmarks/bench_scaling.py [--sizes 1 4 16] [--loader]
        [--budget-mib 256] [--device cuda]
"""

import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import warnings

import psutil
import torch
import torch.nn.functional as F
from timing import (
    add_device_argument,
    add_sizes_argument,
    chosen_device,
    median_time,
    resampler,
    synthetic_graph,
    training_step,
    wall_clock,
)
from torch_geometric.nn.models import GCN
from torch_geometric.typing import WITH_PYG_LIB, WITH_TORCH_SPARSE

from pyg_bemap import AttachBeMap, BalanceAwareSampling, to_bemap
from pyg_bemap.rules.counts import exact_counting_memory, hop_group_counts

#: glibc returns freed blocks above this size to the system at once, so the
#: resident-memory high-water mark measures what a step really holds.
MMAP_THRESHOLD = '65536'
HIDDEN = 128


class PeakMemory:
    r"""Peak memory above the level at entry: on the CPU, the kernel's
    resident-memory high-water mark (Linux), reset at entry; on a GPU,
    torch's peak of allocated memory."""

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        if self.device.type == 'cuda':
            torch.cuda.reset_peak_memory_stats(self.device)
            self.base = torch.cuda.memory_allocated(self.device)
            return self
        gc.collect()
        ctypes.CDLL('libc.so.6').malloc_trim(0)
        with open('/proc/self/clear_refs', 'w') as handle:
            handle.write('5')  # resets VmHWM to the current VmRSS
        self.base = _status_bytes('VmRSS')
        return self

    def __exit__(self, *args):
        if self.device.type == 'cuda':
            peak = torch.cuda.max_memory_allocated(self.device)
        else:
            peak = _status_bytes('VmHWM')
        self.extra = peak - self.base


def _status_bytes(field):
    with open('/proc/self/status') as handle:
        for line in handle:
            if line.startswith(field + ':'):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f'{field} missing from /proc/self/status')


def message_bytes(data):
    r"""What PyG's GCN on an edge list holds per layer for its messages and
    their gradients: two float32 rows of :obj:`HIDDEN` per edge."""
    return 2 * data.edge_index.size(1) * HIDDEN * 4


def free_bytes(device):
    r"""The memory a step can take on :obj:`device`: on CUDA the device's
    free memory and the blocks torch's allocator holds unused, elsewhere
    the host's available memory."""
    if device.type != 'cuda':
        return psutil.virtual_memory().available
    unused = torch.cuda.memory_reserved(device)
    unused -= torch.cuda.memory_allocated(device)
    return torch.cuda.mem_get_info(device)[0] + unused


def vanilla_fits(data):
    free = free_bytes(data.edge_index.device)
    return message_bytes(data) < 0.9 * free


def models(data, device):
    torch.manual_seed(0)
    vanilla = GCN(16, HIDDEN, num_layers=2, out_channels=2)
    return vanilla.to(device), to_bemap(vanilla).to(device)


def memory_probe(million_edges, budget, device):
    r"""Peak extra memory of each step; runs in its own process, with the
    fixed mmap threshold (which slows big allocations, so no timing here)."""
    data = synthetic_graph(million_edges, 16, device)
    edges, nodes = data.edge_index.size(1), data.num_nodes
    edge_bytes = data.edge_index.numel() * data.edge_index.element_size()
    row = {}
    with PeakMemory(device) as peak:
        hop_group_counts(data.edge_index, data.s, memory_budget=budget)
    row['counting_mib'] = peak.extra / 2**20
    allowed = exact_counting_memory(nodes, edges, 2, budget, device)
    row['allowed_mib'] = allowed / 2**20
    prepared = None
    for counting in ('walks', 'exact'):
        transform = BalanceAwareSampling(
            counting=counting, memory_budget=budget
        )
        del prepared  # the last graph's state is not part of this peak
        with PeakMemory(device) as peak:
            prepared = transform(data)
        row[f'{counting}_mib'] = peak.extra / 2**20
    _, resample = resampler(prepared)
    resample()
    with PeakMemory(device) as peak:
        resample()
    row['resample_extra_x'] = peak.extra / edge_bytes
    _, bemap = models(data, device)
    step = training_step(bemap, prepared, prepared.edge_index)
    with PeakMemory(device) as peak:
        step()  # the first step also builds the sampler: the peak
    row['bemap_step_mib'] = peak.extra / 2**20
    return row


def loader_epoch(data):
    r"""One epoch of BeMap-GCN over the training nodes with
    :obj:`NeighborLoader` mini-batches, in seconds."""
    from torch_geometric.loader import NeighborLoader

    # PyG's advice to install pyg-lib where torch-sparse samples
    warnings.filterwarnings('ignore', message="Using 'NeighborSampler'")

    loader = NeighborLoader(
        data,
        num_neighbors=[10, 10],
        input_nodes=data.train_mask,
        batch_size=2048,
        shuffle=True,
        transform=AttachBeMap(sens_attr='s'),
    )
    _, model = models(data, data.x.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    start = wall_clock()
    for batch in loader:
        optimizer.zero_grad()
        out = model(batch.x, batch.edge_index)[: batch.batch_size]
        F.cross_entropy(out, batch.y[: batch.batch_size]).backward()
        optimizer.step()
    return wall_clock() - start


def timings(million_edges, budget, device, with_loader):
    start = wall_clock()
    data = synthetic_graph(million_edges, 16, device)
    row = {
        'edges': data.edge_index.size(1),
        'nodes': data.num_nodes,
        'build_s': wall_clock() - start,
        'message_gib': message_bytes(data) / 2**30,
    }
    prepared = None
    for counting in ('walks', 'exact'):
        transform = BalanceAwareSampling(
            counting=counting, memory_budget=budget
        )
        del prepared
        start = wall_clock()
        prepared = transform(data)
        row[f'{counting}_s'] = wall_clock() - start
    _, resample = resampler(prepared)
    resample()
    row['resample_s'] = median_time(resample, 5)
    vanilla, bemap = models(data, device)
    if vanilla_fits(data):
        step = training_step(vanilla, data, data.edge_index)
        step()
        row['vanilla_step_s'] = median_time(step, 2)
    del vanilla
    step = training_step(bemap, prepared, prepared.edge_index)
    step()  # builds the sampler once per graph
    row['bemap_step_s'] = median_time(step, 3)
    del step, bemap
    if with_loader:
        row['loader_epoch_s'] = loader_epoch(prepared)
        row['train_nodes'] = int(prepared.train_mask.sum())
    return row


def run(million_edges, budget_mib, device, with_loader):
    row = timings(million_edges, budget_mib * 2**20, device, with_loader)
    print(report_times(row), flush=True)
    gc.collect()
    if device.type == 'cuda':  # the probe's process needs what was cached
        torch.cuda.empty_cache()
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=MMAP_THRESHOLD)
    probe = subprocess.run(
        [
            sys.executable,
            __file__,
            '--memory-probe',
            str(million_edges),
            '--budget-mib',
            str(budget_mib),
            '--device',
            str(device),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:  # its own error, not the parent's traceback
        lines = probe.stderr.strip().splitlines() or ['(no output)']
        sys.exit(
            f'the memory probe at {million_edges:g}M edges failed: {lines[-1]}'
        )
    row.update(json.loads(probe.stdout.splitlines()[-1]))
    print(report_memory(row), flush=True)


def report_times(r):
    r"""The times of one size, one per line, within 80 columns."""
    lines = [
        f'{r["edges"]:,} directed edges, {r["nodes"]:,} nodes '
        f'(built in {r["build_s"]:.1f} s)',
        f'  transform, exact       {r["exact_s"]:8.2f} s',
        f'  transform, walks       {r["walks_s"]:8.2f} s',
        f'  one resample           {r["resample_s"] * 1e3:8.1f} ms '
        f'{r["edges"] / r["resample_s"] / 1e6:8.1f}M edges/s',
    ]
    if 'vanilla_step_s' in r:
        lines.append(f'  GCN step, edge list    {r["vanilla_step_s"]:8.2f} s')
    else:
        lines.append(
            f'  GCN step, edge list    not run: its messages need '
            f'{r["message_gib"]:.0f} GiB'
        )
    lines.append(f'  BeMap-GCN step, full   {r["bemap_step_s"]:8.2f} s')
    if 'loader_epoch_s' in r:
        lines.append(
            f'  NeighborLoader epoch   {r["loader_epoch_s"]:8.1f} s '
            f'({r["train_nodes"]:,} training nodes, BeMap-GCN)'
        )
    return '\n'.join(lines)


def report_memory(r):
    r"""The peak extra memory of one size's steps, one per line."""
    within = 'within' if r['counting_mib'] <= r['allowed_mib'] else 'ABOVE'
    return '\n'.join(
        [
            f'  peak memory: exact counting alone {r["counting_mib"]:.0f} '
            f'MiB ({within} its bound of {r["allowed_mib"]:.0f} MiB),',
            f'  transform {r["exact_mib"]:.0f} MiB exact and '
            f'{r["walks_mib"]:.0f} MiB walks, resample '
            f'{r["resample_extra_x"]:.2f}x edge_index,',
            f'  BeMap-GCN step {r["bemap_step_mib"]:.0f} MiB (the first)',
        ]
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    add_sizes_argument(parser, [1, 4, 16])
    parser.add_argument('--budget-mib', type=int, default=256)
    parser.add_argument(
        '--loader',
        action='store_true',
        help='also time one NeighborLoader epoch',
    )
    parser.add_argument(
        '--memory-probe', type=float, default=None, help=argparse.SUPPRESS
    )
    add_device_argument(parser)
    args = parser.parse_args()
    device = chosen_device(args.device)
    if args.memory_probe is not None:
        row = memory_probe(args.memory_probe, args.budget_mib * 2**20, device)
        print(json.dumps(row))
        return
    if args.loader and not (WITH_PYG_LIB or WITH_TORCH_SPARSE):
        parser.exit(1, '--loader needs torch-sparse or pyg-lib\n')
    print(
        f'torch {torch.__version__}, {torch.get_num_threads()} threads, '
        f'{device}, exact-counting budget {args.budget_mib} MiB;\n'
        f'memory: peak above the level before the step'
    )
    for size in args.sizes:
        run(size, args.budget_mib, device, args.loader)


if __name__ == '__main__':
    main()
