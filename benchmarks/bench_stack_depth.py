r"""Does a training call cost more when the caller's stack is deep?

Times training-mode forward calls of a two-layer GCN with BeMap, converted
by to_bemap and written by hand, and of the vanilla model, call by call in
turn, made at several depths of the Python stack (the frames below the
call: a test runner, a training framework, a recursive driver), on a small
graph. A vanilla call too costs more at some depths (the interpreter's
own work), so BeMap's cost is its excess over the vanilla call. With
``--against DIR``, a second worker imports the library from ``DIR/src``
(another checkout, e.g. the commit before a change), and the two take
turns, one round each at a time, so that the machine's drift affects both
alike. Prints the median time per
call at each depth, and each depth's excess over the shallowest one.

    python benchmarks/bench_stack_depth.py [--against DIR] [--rounds 30]
"""

import argparse
import inspect
import multiprocessing as mp
import os.path as osp
import sys
import threading
import time

import numpy as np
import torch

DEPTHS = (5, 30, 130, 400)
NODES = 60  # small, so that the call's own work hides little
OFFSETS = range(0, 16, 3)


def models():
    from torch_geometric.nn import GCNConv

    from pyg_bemap import BalanceAwareSampling, BeMapConv, to_bemap
    from pyg_bemap.datasets import biased_sbm

    class Vanilla(torch.nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.first, self.second = GCNConv(channels, 16), GCNConv(16, 2)

        def forward(self, x, edge_index):
            return self.second(self.first(x, edge_index).relu(), edge_index)

    class ByHand(Vanilla):
        def __init__(self, channels):
            super().__init__(channels)
            self.first = BeMapConv(channels, 16)
            self.second = BeMapConv(16, 2)

    data = BalanceAwareSampling()(biased_sbm(NODES, seed=0))
    torch.manual_seed(0)
    channels = data.num_features
    return data, {
        'vanilla': Vanilla(channels),
        'to_bemap': to_bemap(Vanilla(channels)),
        'by hand': ByHand(channels),
    }


def at_depth(depth, fn):
    r"""Calls :obj:`fn` from a frame with :obj:`depth` frames on the stack
    (itself included), or from this one if it is deeper."""
    return _below(depth - len(inspect.stack(0)), fn)


def _below(frames, fn):
    return fn() if frames <= 0 else _below(frames - 1, fn)


def worker(source, connection, calls):
    if source is not None:  # before anything imports the library
        sys.path.insert(0, source)
    torch.set_num_threads(1)
    # in a thread of its own, whose stack starts shallow (4 frames)
    thread = threading.Thread(target=measure, args=(connection, calls))
    thread.start()
    thread.join()


def measure(connection, calls):
    import pyg_bemap

    connection.send(osp.dirname(osp.dirname(pyg_bemap.__file__)))
    data, built = models()
    x, edge_index = data.x, data.edge_index
    graphs = {name: edge_index for name in built}
    graphs['vanilla'] = edge_index.as_tensor()

    def timed():
        times: dict[str, list[float]] = {name: [] for name in built}
        for _ in range(calls):  # the models take turns, call by call
            for name, model in built.items():
                start = time.perf_counter()
                model(x, graphs[name])
                times[name].append(time.perf_counter() - start)
        return {name: float(np.median(t)) for name, t in times.items()}

    for depth in DEPTHS:  # the first calls, and a warm-up
        at_depth(depth, timed)
    while connection.recv():
        connection.send({depth: near(depth, timed) for depth in DEPTHS})


def near(depth, timed):
    r"""Each model's least time at a few depths from :obj:`depth` on: a
    call whose frames cross a boundary of the interpreter's frame memory
    costs more at some depths than at their neighbours (a bare module call
    here: 0.7 us at depths 5, 30 and 400, 5.4 us at 130), whoever makes
    it."""
    runs = [at_depth(depth + offset, timed) for offset in OFFSETS]
    return {name: min(run[name] for run in runs) for name in runs[0]}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--against', default=None)
    parser.add_argument('--rounds', type=int, default=30)
    parser.add_argument('--calls', type=int, default=50)
    args = parser.parse_args()

    context = mp.get_context('spawn')
    sources = {'this checkout': None}
    if args.against is not None:
        sources[args.against] = osp.join(args.against, 'src')
    pipes, workers = [], []
    for source in sources.values():
        parent, child = context.Pipe()
        process = context.Process(
            target=worker, args=(source, child, args.calls)
        )
        process.start()
        print(f'worker {len(pipes)}: pyg_bemap from {parent.recv()}')
        pipes.append(parent)
        workers.append(process)
    # imported here: the workers import this module, and timing imports
    # the library before a worker could choose where from
    from timing import worker_rounds

    report(sources, worker_rounds(pipes, workers, args.rounds), args)


def report(sources, rounds, args):
    print(
        f'training-mode forward of a 2-layer GCN, {NODES} nodes, 1 thread, '
        f'{args.rounds} rounds x {args.calls} calls each; us per call at '
        f'each stack depth; BeMap: its excess over the vanilla call'
    )
    print(f'{"code":<16}{"model":<10}' + ''.join(f'{d:>9}' for d in DEPTHS))
    for label, results in zip(sources, rounds):
        row = ''.join(f'{_us(results, "vanilla", d):9.1f}' for d in DEPTHS)
        print(f'{label[-15:]:<16}{"vanilla":<10}{row}')
        for name in ('to_bemap', 'by hand'):
            values = [_us(results, name, d, 'vanilla') for d in DEPTHS]
            row = ''.join(f'{v:+9.1f}' for v in values)
            growth = values[-1] - values[0]
            print(f'{"":<16}{name:<10}{row}  {growth:+.1f} at {DEPTHS[-1]}')


def _us(results, name, depth, minus=None):
    r"""The median over rounds of a model's time (less another's), in us."""
    return 1e6 * np.median(
        [r[depth][name] - (r[depth][minus] if minus else 0.0) for r in results]
    )


if __name__ == '__main__':
    main()
