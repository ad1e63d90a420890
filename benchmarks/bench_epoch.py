r"""Fairness at the price of a vanilla epoch: one training step (forward and
backward) of a 2-layer GCN, vanilla and BeMap(sym), with the graph as an edge
list and as a sparse adjacency, measured in one run, the steps of all
variants interleaved (one step of each per round) so that the machine's
drift affects them alike.

    python benchmarks/bench_epoch.py [--threads 1] [--nodes 67797]
"""

import argparse

import torch
from timing import (
    add_device_argument,
    chosen_device,
    interleaved_median_times,
    training_step,
)
from torch_geometric.nn.models import GCN
from torch_geometric.typing import WITH_TORCH_SPARSE, SparseTensor

from pyg_bemap import BalanceAwareSampling, BeMapGCN
from pyg_bemap.datasets import biased_sbm, load_nba


def two_layer_gcn(in_channels, layout=None):
    if layout is None:
        return GCN(in_channels, 128, num_layers=2, out_channels=2)
    return BeMapGCN(in_channels, 128, 2, out_channels=2, layout=layout)


def measure(name, data, repeat, device):
    data = BalanceAwareSampling()(data.to(device))
    n = data.num_nodes
    plain = data.edge_index.as_tensor()
    cases = [('vanilla, edge_index', None, plain)]
    if WITH_TORCH_SPARSE:
        adj_t = SparseTensor(row=plain[1], col=plain[0], sparse_sizes=(n, n))
        cases.append(('vanilla, SparseTensor', None, adj_t))
    cases += [
        ('BeMap(sym), edge_index', 'edge_index', data.edge_index),
        ('BeMap(sym), auto', 'auto', data.edge_index),
    ]
    print(f'\n{name}: {n:,} nodes, {plain.size(1):,} directed edges')
    steps = []
    for _, layout, graph in cases:
        torch.manual_seed(0)
        model = two_layer_gcn(data.num_features, layout).to(device)
        steps.append(training_step(model, data, graph))
        steps[-1]()  # warm-up
    times = interleaved_median_times(steps, repeat)
    for (label, *_), t in zip(cases, times):
        print(
            f'  {label:<31}{t * 1e3:9.1f} ms   {t / times[0]:5.2f}x vanilla '
            f'edge_index'
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--threads', type=int, default=1)
    parser.add_argument('--nodes', type=int, default=67797)
    parser.add_argument('--repeat', type=int, default=30)
    add_device_argument(parser)
    args = parser.parse_args()
    device = chosen_device(args.device)
    torch.set_num_threads(args.threads)
    print(
        f'torch {torch.__version__}, {args.threads} thread(s), '
        f'torch-sparse {"installed" if WITH_TORCH_SPARSE else "missing"}'
    )
    measure('NBA', load_nba(), args.repeat, device)
    measure(
        'synthetic (Pokec-z size)',
        biased_sbm(args.nodes, 18.2, num_features=64),
        max(3, args.repeat // 3),
        device,
    )


if __name__ == '__main__':
    main()
