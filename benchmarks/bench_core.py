r"""Core benchmark of issue #2, on a synthetic graph the size of Pokec-z.

Prints, measured in one run: the transform's time, one resample, one GCN
training step, their ratio, and a per-node Python reference sampler with the
speed-up over it.

    python benchmarks/bench_core.py [--nodes 67797] [--degree 18.2]
"""

import argparse
import os
import sys

import torch
from torch_geometric.nn.models import GCN

from pyg_bemap import BalanceAwareSampling
from pyg_bemap.datasets import biased_sbm
from pyg_bemap.rules.draw import draw_edge_mask

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
from timing import (  # noqa: E402
    add_device_argument,
    chosen_device,
    median_time,
    resampler,
)

from tests.reference import reference_sample  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--nodes', type=int, default=67797)
    parser.add_argument(
        '--degree',
        type=float,
        default=18.2,
        help='mean neighbours (617k undirected edges)',
    )
    parser.add_argument('--features', type=int, default=64)
    parser.add_argument('--repeat', type=int, default=10)
    parser.add_argument('--skip-reference', action='store_true')
    add_device_argument(parser)
    args = parser.parse_args()
    device = chosen_device(args.device)

    data = biased_sbm(args.nodes, args.degree, num_features=args.features)
    data = data.to(device)
    num_edges = data.edge_index.size(1)
    print(
        f'graph: {args.nodes:,} nodes, {num_edges // 2:,} undirected edges '
        f'({num_edges:,} directed)\ntorch {torch.__version__}, '
        f'{torch.get_num_threads()} threads, {device}'
    )

    transform = BalanceAwareSampling(sens_attr='s')
    t_transform = median_time(lambda: transform(data), 3)
    prepared = transform(data)
    plain = prepared.edge_index.as_tensor()
    plan, resample = resampler(prepared)
    resample()
    t_resample = median_time(resample, args.repeat * 3)
    kept = int(draw_edge_mask(plan).sum())

    model = GCN(args.features, 128, num_layers=2, out_channels=2).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    def train_step():
        optimizer.zero_grad()
        out = model(data.x, plain)
        torch.nn.functional.cross_entropy(out, data.y).backward()
        optimizer.step()

    train_step()
    t_step = median_time(train_step, args.repeat)

    print(f'transform (counts, balance, grouping): {t_transform * 1e3:.1f} ms')
    print(
        f'one resample (mask + edge_index[:, mask]): {t_resample * 1e3:.2f} '
        f'ms\n  ({num_edges / t_resample / 1e6:.1f}M edges/s, keeps '
        f'{kept:,} of {num_edges:,} edges)'
    )
    print(
        f'one GCN training step (2 x GCNConv, 128 hidden, fwd+bwd): '
        f'{t_step * 1e3:.1f} ms'
    )
    print(
        f'resample / training step: {t_resample / t_step:9.2%}  (target <= 5%)'
    )
    if not args.skip_reference:
        sens = prepared.s.tolist()
        weight = prepared.bemap_balance.tolist()
        edges = plain.cpu()
        t_ref = median_time(lambda: reference_sample(edges, sens, weight), 1)
        print(f'per-node Python reference sampler: {t_ref * 1e3:9.1f} ms')
        print(
            f'speed-up over the reference: {t_ref / t_resample:9.0f}x  '
            f'(target >= 100x)'
        )
    print(f'transform target < 2 s: {"met" if t_transform < 2 else "MISSED"}')


if __name__ == '__main__':
    main()
