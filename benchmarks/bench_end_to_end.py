r"""End to end, as a user writes it: BeMap(sym) against the vanilla model.

PyG's GCN (2 layers, 128 hidden units), trained for 60 epochs with an
evaluation on the full graph after every epoch. The vanilla model runs on
PyG's edge list; its BeMap version is the same model converted by
to_bemap, on the data from BalanceAwareSampling (timed apart), with no
layout chosen by hand. A run starts from a fresh model on a fresh graph,
so BeMap's first pass builds the graph's sampler as a user's does. The
two kinds of run alternate (the order swapping every pair), with torch's
default threads unless --threads says otherwise; whole runs alternate,
not epochs, since one model's epoch would evict the other's data from the
caches. Prints the median run of each (and of its first two epochs, which
pay for what a run builds once: BeMap's sampler and plan in the first, a
GPU's CUDA graph of the draw, captured at the second draw, in the second)
and the median of the paired ratios BeMap / vanilla with their range
(target: at most 0.35x on the CPU, 0.8x on a GPU), and without the first
two epochs.

    python benchmarks/bench_end_to_end.py [--epochs 60] [--pairs 9]
        [--datasets nba recidivism] [--root DATA] [--threads 1]

Without --root, graphs other than NBA come from ../shared/datasets.
"""

import argparse
import statistics

import torch
import torch.nn.functional as F
from timing import (
    add_candidate_argument,
    add_device_argument,
    chosen_device,
    shared_root,
    use_candidate,
    wall_clock,
)
from torch_geometric.nn.models import GCN

from pyg_bemap import BalanceAwareSampling, to_bemap
from pyg_bemap.datasets import FairGraphDataset, load_nba


def run(model, data, edge_index, epochs):
    r"""Trains :obj:`model` for :obj:`epochs` epochs with an evaluation
    after each; returns the seconds of training and of evaluation, and of
    the first two epochs (training and evaluation), which also pay for
    what is built once per run (BeMap's sampler, its plan, a GPU's CUDA
    graph of the draw)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    mask = data.train_mask
    target = data.y[mask].float()
    train = evaluation = first_two = 0.0
    for epoch in range(epochs):
        start = wall_clock()
        model.train()
        optimizer.zero_grad()
        out = model(data.x, edge_index).view(-1)
        F.binary_cross_entropy_with_logits(out[mask], target).backward()
        optimizer.step()
        middle = wall_clock()
        model.eval()
        with torch.no_grad():
            model(data.x, edge_index)
        end = wall_clock()
        train += middle - start
        evaluation += end - middle
        if epoch < 2:
            first_two += end - start
    return train, evaluation, first_two


def load(name, root, device):
    data = load_nba() if name == 'nba' else FairGraphDataset(root, name)[0]
    return data.to(device)


def pair(data, seed, epochs, bemap_first):
    r"""One vanilla run and one BeMap run from the same initialisation."""
    torch.manual_seed(seed)
    vanilla = GCN(data.num_features, 128, num_layers=2, out_channels=1)
    vanilla = vanilla.to(data.x.device)
    bemap = to_bemap(vanilla)  # a copy: both start from the same weights
    start = wall_clock()
    prepared = BalanceAwareSampling(sens_attr='s')(data.clone())
    transform = wall_clock() - start
    if bemap_first:
        ours = run(bemap, prepared, prepared.edge_index, epochs)
    theirs = run(vanilla, data, data.edge_index, epochs)
    if not bemap_first:
        ours = run(bemap, prepared, prepared.edge_index, epochs)
    return theirs, ours, transform


def measure(name, data, epochs, pairs):
    vanilla, bemap, transforms = [], [], []
    for seed in range(pairs):
        a, b, transform = pair(data, seed, epochs, bemap_first=seed % 2 == 1)
        vanilla.append(a)
        bemap.append(b)
        transforms.append(transform)
    ratios = [_total(b) / _total(a) for a, b in zip(vanilla, bemap)]
    later = [
        (_total(b) - b[2]) / (_total(a) - a[2]) for a, b in zip(vanilla, bemap)
    ]
    for label, times in (('vanilla', vanilla), ('BeMap', bemap)):
        train, evaluation, first_two = (
            statistics.median(t) for t in zip(*times)
        )
        print(
            f'{name:<11}{label:<9}{train:9.2f}{evaluation:9.2f}'
            f'{train + evaluation:9.2f}{first_two * 1e3:10.1f}'
        )
    print(
        f'{"":<11}BeMap / vanilla: median {statistics.median(ratios):.2f}x '
        f'(range {min(ratios):.2f}-{max(ratios):.2f}x; target <= '
        f'{0.35 if data.x.device.type == "cpu" else 0.8}x)'
    )
    print(
        f'{"":<11}without the first two epochs: median '
        f'{statistics.median(later):.2f}x'
    )
    print(
        f'{"":<11}({data.num_nodes:,} nodes, {data.num_edges:,} edges; '
        f'the transform: {statistics.median(transforms):.2f} s)'
    )


def _total(times):
    train, evaluation, _ = times
    return train + evaluation


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--epochs', type=int, default=60)
    parser.add_argument('--pairs', type=int, default=9)
    parser.add_argument('--root', default=None)
    parser.add_argument('--datasets', nargs='+', default=['nba'])
    parser.add_argument(
        '--threads', type=int, default=None, help="default: torch's"
    )
    add_device_argument(parser)
    add_candidate_argument(parser)
    args = parser.parse_args()
    device = chosen_device(args.device)
    use_candidate(args.candidate)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    root = args.root or shared_root(
        [name for name in args.datasets if name != 'nba']
    )
    print(
        f'GCN, 2 layers, 128 hidden, {args.epochs} epochs with evaluation, '
        f'{torch.get_num_threads()} threads, {device};\nmedians of '
        f'{args.pairs} run{"s" if args.pairs != 1 else ""}'
    )
    print(
        f'{"graph":<11}{"model":<9}{"train s":>9}{"eval s":>9}{"total s":>9}'
        f'{"ep1-2 ms":>10}'
    )
    for name in args.datasets:
        measure(name, load(name, root, device), args.epochs, args.pairs)


if __name__ == '__main__':
    main()
