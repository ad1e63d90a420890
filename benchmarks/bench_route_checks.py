r"""How many checks does a training call of a BeMap layer make?

Counts the conditional branches that the interpreter evaluates in
pyg_bemap's own code during one call of a model holding one
:class:`~pyg_bemap.BeMapConv`, after warm-up calls, by tracing the call's
bytecode (:func:`sys.settrace` with opcode events): every ``if``, ``and``,
``or``, ``while`` and conditional expression is one branch each time it is
evaluated. A value that is only computed and kept (a tuple of a layer's
options) counts where a branch reads it: the comparison of a layer's
options with those of its last call is one branch. Prints, for a plain
``GCNConv`` (the GCN route) and a ``SAGEConv`` (the sparse route), in
training and in evaluation, the branches of choosing the route
(``choose_route`` and all it calls) and of the whole call, and with
``--by-function`` the functions they come from. The counts depend on the
code and the Python version only, not on the machine.

    python benchmarks/bench_route_checks.py [--by-function]
"""

import argparse
import collections
import dis
import os.path as osp
import sys

import torch
from torch_geometric.nn import GCNConv, SAGEConv

import pyg_bemap
from pyg_bemap import BalanceAwareSampling, BeMapConv
from pyg_bemap.datasets import load_nba

ROOT = osp.dirname(pyg_bemap.__file__) + osp.sep  # not pyg_bemap_lab
#: The conditional jumps of CPython's bytecode (their names in 3.10 to
#: 3.13; the figures in docs/performance.md are 3.11's).
BRANCHES = {
    code
    for name, code in dis.opmap.items()
    if 'JUMP' in name and '_IF_' in name
}
ROUTES = ('edge_list_route', 'sparse_route', 'gcn_route')
LAYERS = {'GCNConv': GCNConv, 'SAGEConv': SAGEConv}


class Model(torch.nn.Module):
    def __init__(self, conv):
        super().__init__()
        self.conv = BeMapConv(conv)

    def forward(self, x, edge_index):
        return self.conv(x, edge_index)


def in_route_choice(frame):
    while frame is not None:
        if frame.f_code.co_name == 'choose_route':
            return True
        frame = frame.f_back
    return False


def count_branches(call):
    r"""The branches :obj:`call()` evaluates in the package's frames, by
    (function, whether it runs for choosing the route), and the routes
    that ran."""
    counts, routes = collections.Counter(), set()

    def trace(frame, event, arg):
        code = frame.f_code
        if not code.co_filename.startswith(ROOT):
            return None
        if code.co_name in ROUTES:
            routes.add(code.co_name)
        frame.f_trace_opcodes = True
        where = osp.relpath(code.co_filename, ROOT) + ':' + code.co_name
        choosing = in_route_choice(frame)

        def opcodes(frame, event, arg):
            if event == 'opcode' and code.co_code[frame.f_lasti] in BRANCHES:
                counts[where, choosing] += 1
            return opcodes

        return opcodes

    previous = sys.gettrace()  # a coverage tool's, say
    sys.settrace(trace)
    try:
        call()
    finally:
        sys.settrace(previous)
    return counts, routes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--by-function', action='store_true')
    args = parser.parse_args()
    data = BalanceAwareSampling()(load_nba())
    print(f'python {sys.version.split()[0]}, torch {torch.__version__}, NBA')
    print(
        f'{"layer":9} {"mode":6} {"route":16} {"route choice":>12} '
        f'{"whole call":>10}'
    )
    details = []
    for name, layer in LAYERS.items():
        for mode in ('train', 'eval'):
            torch.manual_seed(0)
            model = Model(layer(data.num_features, 16))
            model.train(mode == 'train')
            for _ in range(3):  # the sampler, plan and route built
                model(data.x, data.edge_index)
            counts, routes = count_branches(
                lambda model=model: model(data.x, data.edge_index)
            )
            choice = sum(n for (_, choosing), n in counts.items() if choosing)
            print(
                f'{name:9} {mode:6} {",".join(sorted(routes)):16} '
                f'{choice:12d} {sum(counts.values()):10d}'
            )
            details.append((f'{name}, {mode}', counts))
    for title, counts in details if args.by_function else ():
        print(f'\n{title} (* choosing the route)')
        for (where, choosing), n in sorted(counts.items()):
            print(f'{n:5d} {"*" if choosing else " "} {where}')


if __name__ == '__main__':
    main()
