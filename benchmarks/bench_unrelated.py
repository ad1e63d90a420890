r"""Does BeMap slow down models that do not use it?

Times the forward pass of an unrelated model (an MLP of 50 linear layers) in
two worker processes: one that never imports pyg_bemap, and one that first
builds and trains BeMap models (a model converted by to_bemap, a BeMapGCN,
layers called on their own, a checkpointed pass). The workers take turns,
one round each at a time (the order alternating), so that the machine's
drift affects both alike. Prints the median forward time of each and their
ratio (target: at most 1.02x).

    python benchmarks/bench_unrelated.py [--rounds 30] [--calls 200]
"""

import argparse
import multiprocessing as mp
import time

import torch


def unrelated_model():
    torch.manual_seed(0)
    layers = []
    for _ in range(50):
        layers += [torch.nn.Linear(64, 64), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers), torch.randn(32, 64)


def use_bemap():
    r"""Builds and trains BeMap models the ways a user would."""
    from torch.utils.checkpoint import checkpoint
    from torch_geometric.nn import GCNConv
    from torch_geometric.nn.models import GCN

    from pyg_bemap import BalanceAwareSampling, BeMapConv, BeMapGCN, to_bemap
    from pyg_bemap.datasets import biased_sbm

    data = BalanceAwareSampling()(biased_sbm(300, seed=0))
    models = [
        to_bemap(GCN(data.num_features, 16, num_layers=2, out_channels=2)),
        BeMapGCN(data.num_features, 16, num_layers=2, out_channels=2),
    ]
    for model in models:
        for _ in range(3):
            model(data.x, data.edge_index).sum().backward()
    layer = BeMapConv(GCNConv(data.num_features, 4))
    layer(data.x, data.edge_index).sum().backward()
    out = checkpoint(models[0], data.x, data.edge_index, use_reentrant=False)
    out.sum().backward()
    return models + [layer]  # kept alive while timing


def worker(with_bemap, connection, calls):
    torch.set_num_threads(1)
    kept = use_bemap() if with_bemap else None
    model, x = unrelated_model()
    with torch.no_grad():
        for _ in range(calls):  # warm-up
            model(x)
        while connection.recv():
            times = []
            for _ in range(calls):
                start = time.perf_counter()
                model(x)
                times.append(time.perf_counter() - start)
            times.sort()
            connection.send(times[len(times) // 2])
    del kept


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--rounds', type=int, default=30)
    parser.add_argument('--calls', type=int, default=200)
    args = parser.parse_args()

    context = mp.get_context('spawn')  # fresh interpreters
    pipes, workers = [], []
    for with_bemap in (False, True):
        parent, child = context.Pipe()
        process = context.Process(
            target=worker, args=(with_bemap, child, args.calls)
        )
        process.start()
        pipes.append(parent)
        workers.append(process)
    medians: list[list[float]] = [[], []]
    for round_ in range(args.rounds):
        order = (0, 1) if round_ % 2 == 0 else (1, 0)
        for which in order:
            pipes[which].send(True)
            medians[which].append(pipes[which].recv())
    for pipe, process in zip(pipes, workers):
        pipe.send(False)
        process.join()

    without, with_ = (sorted(m)[len(m) // 2] * 1e6 for m in medians)
    ratios = sorted(b / a for a, b in zip(*medians))
    print(
        f'unrelated MLP (50 x Linear(64, 64)), batch 32, 1 thread, '
        f'{args.rounds} rounds x {args.calls} calls'
    )
    print(f'  process without pyg_bemap:     {without:8.1f} us per forward')
    print(f'  process with BeMap models:     {with_:8.1f} us per forward')
    print(
        f'  ratio: {with_ / without:.3f}x (per-round ratios: median '
        f'{ratios[len(ratios) // 2]:.3f}, range {ratios[0]:.3f}-'
        f'{ratios[-1]:.3f}; target <= 1.02x)'
    )


if __name__ == '__main__':
    main()
