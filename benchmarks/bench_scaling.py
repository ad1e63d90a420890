r"""Performance envelope: synthetic homophilous graphs with about 1M, 4M and
16M directed edges (average degree about 20). For each size, measured in one
run: the transform's time and peak extra memory (exact and walk counting),
one resample and its throughput and peak extra memory, one training step
of a 2-layer GCN (128 hidden, forward and backward, edge list), and the peak
memory of exact counting against its budget. Memory is the kernel's
resident-memory high-water mark (Linux), measured in a child process with
glibc's mmap threshold fixed (MALLOC_MMAP_THRESHOLD_) so that freed tensors
leave the process at once; times are measured with the default allocator.

    python benchmarks/bench_scaling.py [--sizes 1 4 16] [--budget-mib 256]
"""

import argparse
import ctypes
import json
import os
import subprocess
import sys
import time

import torch
from timing import median_time, resampler
from torch_geometric.nn.models import GCN

from pyg_bemap import BalanceAwareSampling
from pyg_bemap.datasets import biased_sbm
from pyg_bemap.utils.counts import exact_counting_memory, hop_group_counts

#: glibc returns freed blocks above this size to the system at once, so the
#: resident-memory high-water mark measures what a step really holds.
MMAP_THRESHOLD = '65536'


class PeakMemory:
    r"""Peak resident memory above the level at entry, from the kernel's
    high-water mark (Linux), which is reset at entry."""

    def __enter__(self):
        ctypes.CDLL('libc.so.6').malloc_trim(0)
        with open('/proc/self/clear_refs', 'w') as handle:
            handle.write('5')  # resets VmHWM to the current VmRSS
        self.base = _status_bytes('VmRSS')
        return self

    def __exit__(self, *args):
        self.extra = _status_bytes('VmHWM') - self.base


def _status_bytes(field):
    with open('/proc/self/status') as handle:
        for line in handle:
            if line.startswith(field + ':'):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f'{field} missing from /proc/self/status')


def graph(million_edges):
    num_nodes = int(million_edges * 1e6 / 20)
    return biased_sbm(num_nodes, avg_degree=20.0, num_features=16)


def memory_probe(million_edges, budget):
    r"""Peak extra memory of each step; runs in its own process, with the
    fixed mmap threshold (which slows big allocations, so no timing here)."""
    data = graph(million_edges)
    edges, nodes = data.edge_index.size(1), data.num_nodes
    edge_bytes = data.edge_index.numel() * data.edge_index.element_size()
    row = {}
    with PeakMemory() as peak:
        hop_group_counts(data.edge_index, data.s, memory_budget=budget)
    row['counting_mib'] = peak.extra / 2**20
    row['allowed_mib'] = exact_counting_memory(nodes, edges, 2, budget) / 2**20
    for counting in ('exact', 'walks'):
        transform = BalanceAwareSampling(
            counting=counting, memory_budget=budget
        )
        with PeakMemory() as peak:
            prepared = transform(data)
        row[f'{counting}_mib'] = peak.extra / 2**20
    _, resample = resampler(prepared)
    resample()
    with PeakMemory() as peak:
        resample()
    row['resample_extra_x'] = peak.extra / edge_bytes
    return row


def timings(million_edges, budget):
    data = graph(million_edges)
    row = {'edges': data.edge_index.size(1), 'nodes': data.num_nodes}
    for counting in ('exact', 'walks'):
        transform = BalanceAwareSampling(
            counting=counting, memory_budget=budget
        )
        start = time.perf_counter()
        prepared = transform(data)
        row[f'{counting}_s'] = time.perf_counter() - start
    plain = prepared.edge_index.as_tensor()
    _, resample = resampler(prepared)
    resample()
    row['resample_s'] = median_time(resample, 5)
    model = GCN(16, 128, num_layers=2, out_channels=2)

    def step():
        model.zero_grad()
        out = model(data.x, plain)
        torch.nn.functional.cross_entropy(out, data.y).backward()

    step()
    row['step_s'] = median_time(step, 2)
    return row


def run(million_edges, budget_mib):
    row = timings(million_edges, budget_mib * 2**20)
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_=MMAP_THRESHOLD)
    probe = subprocess.run(
        [
            sys.executable,
            __file__,
            '--memory-probe',
            str(million_edges),
            '--budget-mib',
            str(budget_mib),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    row.update(json.loads(probe.stdout.splitlines()[-1]))
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        '--sizes',
        type=float,
        nargs='+',
        default=[1, 4, 16],
        help='millions of directed edges',
    )
    parser.add_argument('--budget-mib', type=int, default=256)
    parser.add_argument(
        '--memory-probe', type=float, default=None, help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.memory_probe is not None:
        print(
            json.dumps(
                memory_probe(args.memory_probe, args.budget_mib * 2**20)
            )
        )
        return
    print(
        f'torch {torch.__version__}, {torch.get_num_threads()} threads, '
        f'exact-counting budget {args.budget_mib} MiB; memory = peak '
        f'resident memory above the level before the step'
    )
    print(
        f'{"edges":>11} {"exact s":>8} {"exact MiB":>10} {"walks s":>8} '
        f'{"walks MiB":>10} {"resample ms":>12} {"Medges/s":>9} '
        f'{"extra/edge_index":>17} {"GCN step ms":>12} {"ratio":>7}'
    )
    rows = []
    for size in args.sizes:
        r = run(size, args.budget_mib)
        rows.append(r)
        print(
            f'{r["edges"]:>11,} {r["exact_s"]:>8.2f} {r["exact_mib"]:>10.0f} '
            f'{r["walks_s"]:>8.2f} {r["walks_mib"]:>10.0f} '
            f'{r["resample_s"] * 1e3:>12.1f} '
            f'{r["edges"] / r["resample_s"] / 1e6:>9.1f} '
            f'{r["resample_extra_x"]:>16.2f}x {r["step_s"] * 1e3:>12.0f} '
            f'{r["resample_s"] / r["step_s"]:>7.2%}',
            flush=True,
        )
    print(
        '\nexact counting alone: peak extra memory vs. its documented bound '
        '(pyg_bemap.exact_counting_memory)'
    )
    for r in rows:
        within = 'within' if r['counting_mib'] <= r['allowed_mib'] else 'ABOVE'
        print(
            f'{r["edges"]:>11,} edges: {r["counting_mib"]:7.0f} MiB of '
            f'{r["allowed_mib"]:.0f} MiB allowed ({within})'
        )


if __name__ == '__main__':
    main()
