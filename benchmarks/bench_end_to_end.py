r"""End to end, as a user writes it: BeMap(sym) against the vanilla model.

For NBA and Recidivism: PyG's GCN (2 layers, 128 hidden units), trained
for 400 epochs with an evaluation on the full graph after every epoch, as
the paper does. The vanilla model runs on the plain edge_index; its BeMap
version is the same model converted by to_bemap, on the data from
BalanceAwareSampling, with no layout chosen by hand. One thread; the two
runs advance one epoch each in turn, so that the machine's drift affects
both alike. Prints each run's training and evaluation time, the total and
the ratio BeMap / vanilla (target: at most 0.35x).

    python benchmarks/bench_end_to_end.py [--epochs 400] [--root DATA]

Without --root, the graphs come from ../shared/datasets.
"""

import argparse

import torch
import torch.nn.functional as F
from timing import add_device_argument, chosen_device, shared_root, wall_clock
from torch_geometric.nn.models import GCN

from pyg_bemap import BalanceAwareSampling, to_bemap
from pyg_bemap.datasets import FairGraphDataset, load_nba


class Run:
    r"""One model's training run, advanced one epoch at a time."""

    def __init__(self, model, data, edge_index):
        self.model, self.data, self.edge_index = model, data, edge_index
        self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        self.target = data.y[data.train_mask].float()
        self.train_time = self.eval_time = 0.0

    def epoch(self):
        data, model = self.data, self.model
        start = wall_clock()
        model.train()
        self.optimizer.zero_grad()
        out = model(data.x, self.edge_index).view(-1)
        loss = F.binary_cross_entropy_with_logits(
            out[data.train_mask], self.target
        )
        loss.backward()
        self.optimizer.step()
        middle = wall_clock()
        model.eval()
        with torch.no_grad():
            model(data.x, self.edge_index)
        self.train_time += middle - start
        self.eval_time += wall_clock() - middle


def load(name, root):
    if name == 'nba':
        return load_nba()
    return FairGraphDataset(root, name)[0]


def measure(name, root, epochs, device):
    data = load(name, root).to(device)
    data = BalanceAwareSampling(sens_attr='s')(data)
    plain = data.edge_index.as_tensor()
    torch.manual_seed(0)
    vanilla = GCN(data.num_features, 128, num_layers=2, out_channels=1)
    vanilla = vanilla.to(device)
    runs = [
        Run(vanilla, data, plain),
        Run(to_bemap(vanilla), data, data.edge_index),
    ]
    for run in runs:  # warm-up, not timed
        run.epoch()
        run.train_time = run.eval_time = 0.0
    for _ in range(epochs):
        for run in runs:
            run.epoch()
    return data, runs


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--epochs', type=int, default=400)
    parser.add_argument('--root', default=None)
    parser.add_argument('--datasets', nargs='+', default=['nba', 'recidivism'])
    add_device_argument(parser)
    args = parser.parse_args()
    device = chosen_device(args.device)
    torch.set_num_threads(1)
    root = args.root or shared_root(
        [name for name in args.datasets if name != 'nba']
    )
    print(
        f'GCN, 2 layers, 128 hidden, {args.epochs} epochs with evaluation, '
        f'1 thread'
    )
    print(
        f'{"graph":<11}{"model":<9}{"train s":>9}{"eval s":>9}'
        f'{"total s":>9}{"ratio":>8}'
    )
    for name in args.datasets:
        data, runs = measure(name, root, args.epochs, device)
        totals = [run.train_time + run.eval_time for run in runs]
        for label, run, total in zip(('vanilla', 'BeMap'), runs, totals):
            ratio = f'{total / totals[0]:.2f}x' if label == 'BeMap' else ''
            print(
                f'{name:<11}{label:<9}{run.train_time:9.1f}'
                f'{run.eval_time:9.1f}{total:9.1f}{ratio:>8}'
            )
        print(
            f'{"":<11}({data.num_nodes:,} nodes, {data.num_edges:,} '
            f'directed edges; target: BeMap <= 0.35x)'
        )


if __name__ == '__main__':
    main()
