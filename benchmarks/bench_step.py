r"""BeMap's training step against the best vanilla step, as users write
them: PyG's :obj:`GCN` (2 layers, 128 hidden units, forward, backward and
an Adam step) on PyG's edge list and on a :obj:`torch.sparse` CSR
adjacency, against :obj:`to_bemap` of the same model on the data from
:obj:`BalanceAwareSampling`, with no layout chosen by hand. The three
steps alternate in one run; the ratio divides the BeMap median step by the
faster vanilla one. Target: at most 1x at every size (PyG's layer).

Graphs: NBA and synthetic homophilous graphs of about 20 neighbours per
node with the given millions of directed edges.

With :obj:`--profile`, where the time of each of the three NBA steps goes
instead: host and wall time, host synchronisations, kernels and device
time.

    python benchmarks/bench_step.py [--sizes 0.1 0.5 2.2] [--device cuda]
        [--profile]
"""

import argparse
import warnings

import torch
from timing import (
    add_candidate_argument,
    add_device_argument,
    add_sizes_argument,
    chosen_device,
    interleaved_median_times,
    profile_calls,
    setup_line,
    synthetic_graph,
    training_step,
    use_candidate,
)
from torch_geometric.nn.models import GCN
from torch_geometric.utils import to_torch_csr_tensor

from pyg_bemap import BalanceAwareSampling, to_bemap
from pyg_bemap.datasets import load_nba


def three_steps(data, device):
    r"""The vanilla steps on the edge list and on a CSR adjacency, and the
    BeMap step, each called once (BeMap builds its sampler there)."""
    data = BalanceAwareSampling(sens_attr='s')(data.to(device))
    plain = data.edge_index.as_tensor()
    n = data.num_nodes
    with torch.sparse.check_sparse_tensor_invariants(enable=False):
        adj_t = to_torch_csr_tensor(plain.flip(0), size=(n, n))
    torch.manual_seed(0)
    model = GCN(data.num_features, 128, num_layers=2, out_channels=2)
    bemap = to_bemap(model).to(device)
    model = model.to(device)
    steps = [
        training_step(model, data, plain),
        training_step(model, data, adj_t),
        training_step(bemap, data, data.edge_index),
    ]
    for step in steps:
        step()  # warm-up: BeMap builds its sampler here, once per graph
    return plain.size(1), steps


def measure(name, data, device, repeat):
    num_edges, steps = three_steps(data, device)
    times = interleaved_median_times(steps, repeat)
    best = min(times[:2])
    print(
        f'{name:<9}{num_edges:>11,}'
        + ''.join(f'{t * 1e3:>9.1f}' for t in times)
        + f'{times[2] / best:>7.2f}x'
    )
    return times[2] / best


def main():
    # torch's one-time notice on the vanilla CSR adjacency built here
    warnings.filterwarnings('ignore', message='Sparse CSR tensor support')
    parser = argparse.ArgumentParser(description=__doc__)
    add_sizes_argument(parser, [0.1, 0.5, 2.2])
    parser.add_argument(
        '--repeat', type=int, default=20, help='steps of NBA, fewer beyond'
    )
    add_device_argument(parser)
    add_candidate_argument(parser)
    parser.add_argument(
        '--profile', action='store_true', help='where an NBA step spends'
    )
    args = parser.parse_args()
    device = chosen_device(args.device)
    print(setup_line(device))
    use_candidate(args.candidate)
    if args.profile:
        _, steps = three_steps(load_nba(), device)
        names = ['vanilla, edge list', 'vanilla, CSR', 'BeMap']
        for name, step in zip(names, steps):
            profile_calls(f'NBA step, {name}', step, device, args.repeat)
        return
    print(f'{"":<20}{"vanilla":>18}{"BeMap":>9}{"BeMap":>8}')
    print(
        f'{"graph":<9}{"edges":>11}{"list":>9}{"CSR":>9}{"step":>9}'
        f'{"/ best":>8}'
    )
    ratios = [measure('NBA', load_nba(), device, args.repeat)]
    for size in args.sizes:
        data = synthetic_graph(size, 64, device)
        repeat = max(3, int(args.repeat / max(1.0, 4 * size)))
        ratios.append(measure(f'SBM {size:g}M', data, device, repeat))
    worst = max(ratios)
    print('(ms per step; list: edge list, CSR: torch.sparse CSR adjacency)')
    print(
        f"worst ratio of PyG's layer {worst:.2f}x (target <= 1x at every "
        f'size: {"met" if worst <= 1 else "MISSED"})'
    )


if __name__ == '__main__':
    main()
