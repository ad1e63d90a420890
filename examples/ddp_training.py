r"""BeMap with DistributedDataParallel: every process holds the full graph
(its scores computed once with BalanceAwareSampling), trains on its own shard
of the training nodes with a NeighborLoader whose transform re-attaches the
scores, and gradients are averaged across processes (gloo backend, CPU).

    python examples/ddp_training.py [--world-size 2] [--epochs 5]

Across machines, start one copy per process with torchrun and a rendezvous
endpoint reachable by all of them, e.g. on each of 2 machines:

    torchrun --nnodes 2 --nproc-per-node 1 --rdzv-backend c10d \
        --rdzv-endpoint HOST:29500 examples/ddp_training.py --torchrun

Each process needs the full graph here (the scores are full-graph
statistics); for graphs beyond one machine's memory, compute the scores once,
store them as node attributes, and give them to a distributed graph and
feature store (cuGraph-PyG's; torch_geometric.distributed is deprecated since
PyG 2.7), whose loaders slice node attributes like NeighborLoader does.
"""

import argparse
import datetime
import os
import socket

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch_geometric.loader import NeighborLoader
from torch_geometric.typing import WITH_PYG_LIB, WITH_TORCH_SPARSE

from pyg_bemap import AttachBeMap, BalanceAwareSampling, BeMapGCN
from pyg_bemap.datasets import biased_sbm


def train(rank, world_size, epochs, nodes):
    torch.manual_seed(0)  # the same graph and initial model everywhere
    data = BalanceAwareSampling(sens_attr='s')(
        biased_sbm(nodes, signal=2.0, seed=0)
    )
    shard = data.train_mask.nonzero().view(-1)[rank::world_size]
    loader = NeighborLoader(
        data,
        num_neighbors=[10, 10],
        batch_size=128,
        input_nodes=shard,
        shuffle=True,
        transform=AttachBeMap(sens_attr='s'),
    )
    model = DistributedDataParallel(
        BeMapGCN(data.num_features, 64, num_layers=2, out_channels=2)
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    torch.manual_seed(1 + rank)  # each process draws its own samples
    losses = []
    for _ in range(epochs):
        total = 0.0
        for batch in loader:
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index)[: batch.batch_size]
            loss = torch.nn.functional.cross_entropy(
                out, batch.y[: batch.batch_size]
            )
            loss.backward()
            optimizer.step()
            total += float(loss) * batch.batch_size
        losses.append(total / shard.numel())
    flat = torch.cat([p.detach().view(-1) for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world_size)]
    dist.all_gather(gathered, flat)
    same = all(torch.equal(gathered[0], g) for g in gathered)
    if rank == 0:
        print(
            'loss per epoch (rank 0): ' + ', '.join(f'{v:.4f}' for v in losses)
        )
        print(f'loss decreased: {losses[-1] < losses[0]}')
        print(f'identical parameters on all {world_size} processes: {same}')


def worker(rank, world_size, port, epochs, nodes):
    os.environ['MASTER_ADDR'] = '127.0.0.1'
    os.environ['MASTER_PORT'] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group(
        'gloo',
        rank=rank,
        world_size=world_size,
        timeout=datetime.timedelta(seconds=120),
    )
    try:
        train(rank, world_size, epochs, nodes)
    finally:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


NEEDS_SAMPLER = (
    'This example needs NeighborLoader, which needs torch-sparse or pyg-lib: '
    'pip install --no-build-isolation torch-sparse (or pyg-bemap[sparse])\n'
)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument('--world-size', type=int, default=2)
    parser.add_argument('--epochs', type=int, default=5)
    parser.add_argument('--nodes', type=int, default=3000)
    parser.add_argument(
        '--torchrun',
        action='store_true',
        help='started by torchrun (reads RANK, WORLD_SIZE)',
    )
    args = parser.parse_args()
    if not (WITH_PYG_LIB or WITH_TORCH_SPARSE):
        parser.exit(1, NEEDS_SAMPLER)
    if args.torchrun:
        dist.init_process_group('gloo')
        try:
            train(
                dist.get_rank(), dist.get_world_size(), args.epochs, args.nodes
            )
        finally:
            dist.destroy_process_group()
        return
    torch.multiprocessing.spawn(
        worker,
        args=(args.world_size, free_port(), args.epochs, args.nodes),
        nprocs=args.world_size,
        join=True,
    )


if __name__ == '__main__':
    main()
