r"""Does BeMap slow down models that do not use it?

Times the forward pass of an unrelated model (an MLP of 50 linear layers) in
three worker processes: one that imports torch only, one that builds and
trains vanilla PyG models on a graph, and one that does the same with BeMap
models (a model converted by to_bemap, a BeMapGCN, a layer called on its
own, a checkpointed pass). The workers take turns, one short round each at
a time (the order rotating), so that the machine's drift affects all alike;
each round gives paired ratios of the workers' median times. Prints each
worker's median time and the medians of the paired ratios with 95 %
bootstrap intervals. The target is on BeMap against vanilla models (the
same work without BeMap): at most 1.02x.

    python benchmarks/bench_unrelated.py [--rounds 300] [--calls 25]
"""

import argparse
import multiprocessing as mp

import numpy as np
import torch
from timing import (
    add_device_argument,
    chosen_device,
    wall_clock,
    worker_rounds,
)


def unrelated_model(device):
    torch.manual_seed(0)
    layers = []
    for _ in range(50):
        layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(device)
    return model, torch.randn(32, 64, device=device)


def train_models(bemap, device):
    r"""Builds and trains GCN models on a small graph, vanilla or BeMap
    (the ways a user adopts it), and returns them."""
    from torch.utils.checkpoint import checkpoint
    from torch_geometric.nn import GCNConv
    from torch_geometric.nn.models import GCN

    from pyg_bemap import BalanceAwareSampling, BeMapConv, BeMapGCN, to_bemap
    from pyg_bemap.datasets import biased_sbm

    data = BalanceAwareSampling()(biased_sbm(300, seed=0).to(device))
    convert = to_bemap if bemap else (lambda model: model)
    layer = GCNConv(data.num_features, 4)
    models = [
        convert(GCN(data.num_features, 16, num_layers=2, out_channels=2)),
        (BeMapGCN if bemap else GCN)(
            data.num_features, 16, num_layers=2, out_channels=2
        ),
        BeMapConv(layer) if bemap else layer,
    ]
    models = [model.to(device) for model in models]
    for model in models:
        for _ in range(3):
            model(data.x, data.edge_index).sum().backward()
    out = checkpoint(models[0], data.x, data.edge_index, use_reentrant=False)
    out.sum().backward()
    return models


def worker(kind, connection, calls, device):
    torch.set_num_threads(1)
    kept = train_models(kind == 'bemap', device) if kind != 'torch' else None
    model, x = unrelated_model(device)
    with torch.no_grad():
        for _ in range(calls):  # warm-up
            model(x)
        while connection.recv():
            times = []
            for _ in range(calls):
                start = wall_clock()
                model(x)
                times.append(wall_clock() - start)
            connection.send(float(np.median(times)))
    del kept


def paired_ratio(a, b, rng):
    r"""The median of the per-round ratios a / b and its 95 % bootstrap
    interval."""
    ratios = np.array(a) / np.array(b)
    boot = np.median(rng.choice(ratios, (2000, ratios.size)), axis=1)
    return np.median(ratios), *np.percentile(boot, [2.5, 97.5])


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--rounds', type=int, default=300)
    parser.add_argument('--calls', type=int, default=25)
    add_device_argument(parser)
    args = parser.parse_args()
    device = chosen_device(args.device)

    context = mp.get_context('spawn')  # fresh interpreters
    kinds = ('torch', 'vanilla', 'bemap')
    pipes, workers = [], []
    for kind in kinds:
        parent, child = context.Pipe()
        process = context.Process(
            target=worker, args=(kind, child, args.calls, str(device))
        )
        process.start()
        pipes.append(parent)
        workers.append(process)
    medians = worker_rounds(pipes, workers, args.rounds)

    rng = np.random.default_rng(0)
    labels = {
        'torch': 'torch only',
        'vanilla': 'vanilla PyG models',
        'bemap': 'BeMap models',
    }
    print(
        f'unrelated MLP (50 x Linear(64, 64)), batch 32, 1 thread, '
        f'{args.rounds} rounds x {args.calls} calls'
    )
    for kind, times in zip(kinds, medians):
        print(
            f'  process with {labels[kind]:<19} '
            f'{np.median(times) * 1e6:7.1f} us per forward'
        )
    for other, target in ((1, ' (target <= 1.02x)'), (0, '')):
        ratio, low, high = paired_ratio(medians[2], medians[other], rng)
        print(
            f'  BeMap / {labels[kinds[other]]}: {ratio:.3f}x '
            f'(95% CI {low:.3f}-{high:.3f}){target}'
        )


if __name__ == '__main__':
    main()
