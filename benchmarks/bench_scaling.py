r"""Performance envelope: synthetic homophilous graphs with about 1M, 4M and
16M directed edges (average degree about 20). For each size, measured in one
run: the transform's time and peak extra memory (exact and walk counting),
one resample and its throughput and peak extra memory, and one training step
of a 2-layer GCN (128 hidden, forward and backward, edge list).

    python benchmarks/bench_scaling.py [--sizes 1 4 16] [--budget-mib 256]
"""
import argparse
import threading
import time

import psutil
import torch
from timing import median_time, resampler
from torch_geometric.nn.models import GCN

from pyg_bemap import BalanceAwareSampling
from pyg_bemap.datasets import biased_sbm


class PeakRSS:
    r"""Peak resident memory above the level at entry, polled every ms."""
    def __enter__(self):
        self.process = psutil.Process()
        self.base = self.peak = self.process.memory_info().rss
        self.running = True
        self.thread = threading.Thread(target=self._poll, daemon=True)
        self.thread.start()
        return self

    def _poll(self):
        while self.running:
            self.peak = max(self.peak, self.process.memory_info().rss)
            time.sleep(0.001)

    def __exit__(self, *args):
        self.running = False
        self.thread.join()
        self.extra = self.peak - self.base


def run(million_edges, budget):
    num_nodes = int(million_edges * 1e6 / 20)
    data = biased_sbm(num_nodes, avg_degree=20.0, num_features=16)
    edges = data.edge_index.size(1)
    edge_bytes = data.edge_index.numel() * data.edge_index.element_size()
    row = {'edges': edges, 'nodes': num_nodes}
    for counting in ('exact', 'walks'):
        transform = BalanceAwareSampling(counting=counting,
                                         memory_budget=budget)
        with PeakRSS() as peak:
            start = time.perf_counter()
            prepared = transform(data)
            row[f'{counting}_s'] = time.perf_counter() - start
        row[f'{counting}_mib'] = peak.extra / 2**20
    plain = prepared.edge_index.as_tensor()
    _, resample = resampler(prepared)
    resample()
    with PeakRSS() as peak:
        resample()
    row['resample_extra_x'] = peak.extra / edge_bytes
    row['resample_s'] = median_time(resample, 5)
    model = GCN(16, 128, num_layers=2, out_channels=2)

    def step():
        model.zero_grad()
        out = model(data.x, plain)
        torch.nn.functional.cross_entropy(out, data.y).backward()

    step()
    row['step_s'] = median_time(step, 2)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--sizes', type=float, nargs='+', default=[1, 4, 16],
                        help='millions of directed edges')
    parser.add_argument('--budget-mib', type=int, default=256)
    args = parser.parse_args()
    budget = args.budget_mib * 2**20
    print(f'torch {torch.__version__}, {torch.get_num_threads()} threads, '
          f'exact-counting budget {args.budget_mib} MiB')
    header = (f"{'edges':>11} {'exact s':>8} {'exact MiB':>10} {'walks s':>8} "
              f"{'walks MiB':>10} {'resample ms':>12} {'Medges/s':>9} "
              f"{'extra/edge_index':>17} {'GCN step ms':>12} {'ratio':>7}")
    print(header)
    for size in args.sizes:
        r = run(size, budget)
        print(f"{r['edges']:>11,} {r['exact_s']:>8.2f} {r['exact_mib']:>10.0f} "
              f"{r['walks_s']:>8.2f} {r['walks_mib']:>10.0f} "
              f"{r['resample_s'] * 1e3:>12.1f} "
              f"{r['edges'] / r['resample_s'] / 1e6:>9.1f} "
              f"{r['resample_extra_x']:>16.2f}x {r['step_s'] * 1e3:>12.0f} "
              f"{r['resample_s'] / r['step_s']:>7.2%}", flush=True)


if __name__ == '__main__':
    main()
