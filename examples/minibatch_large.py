r"""BeMap(sym) with mini-batches on a large synthetic graph (about 1M nodes
and 20M directed edges by default): the scores are computed once on the full
graph, NeighborLoader's transform re-attaches them to every mini-batch, and
the fair neighbourhood is drawn inside each mini-batch's edges.

    python examples/minibatch_large.py [--nodes 1000000] [--degree 20]
"""

import argparse
import time
import warnings

import psutil
import torch
from torch_geometric.loader import NeighborLoader
from torch_geometric.typing import WITH_PYG_LIB, WITH_TORCH_SPARSE
from tqdm import tqdm

from pyg_bemap import (
    AttachBeMap,
    BalanceAwareSampling,
    BeMapGCN,
    fairness_report,
)
from pyg_bemap.datasets import biased_sbm


def loader(data, nodes, shuffle, args):
    return NeighborLoader(
        data,
        num_neighbors=[10, 10],
        input_nodes=nodes,
        batch_size=args.batch_size,
        shuffle=shuffle,
        transform=AttachBeMap(sens_attr='s'),
    )


NEEDS_SAMPLER = (
    'This example needs NeighborLoader, which needs torch-sparse or pyg-lib: '
    'pip install --no-build-isolation torch-sparse (or pyg-bemap[sparse])\n'
)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--nodes', type=int, default=1_000_000)
    parser.add_argument('--degree', type=float, default=20.0)
    parser.add_argument('--epochs', type=int, default=1)
    parser.add_argument('--batch-size', type=int, default=2048)
    args = parser.parse_args()
    if not (WITH_PYG_LIB or WITH_TORCH_SPARSE):
        parser.exit(1, NEEDS_SAMPLER)
    warnings.simplefilter('ignore', UserWarning)
    torch.manual_seed(0)

    start = time.perf_counter()
    data = biased_sbm(args.nodes, args.degree, signal=2.0, num_features=32)
    print(
        f'graph: {data.num_nodes:,} nodes, {data.num_edges:,} directed '
        f'edges, built in {time.perf_counter() - start:.1f}s'
    )
    start = time.perf_counter()
    data = BalanceAwareSampling(sens_attr='s')(data)
    print(
        f'BalanceAwareSampling (exact 2-hop counts): '
        f'{time.perf_counter() - start:.1f}s'
    )

    model = BeMapGCN(data.num_features, 128, num_layers=2, out_channels=2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for epoch in range(1, args.epochs + 1):
        model.train()
        start = time.perf_counter()
        for batch in tqdm(
            loader(data, data.train_mask, True, args),
            desc=f'epoch {epoch}',
            leave=False,
        ):
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index)[: batch.batch_size]
            loss = torch.nn.functional.cross_entropy(
                out, batch.y[: batch.batch_size]
            )
            loss.backward()
            optimizer.step()
        print(
            f'epoch {epoch}: {time.perf_counter() - start:.1f}s, last loss '
            f'{float(loss):.4f}'
        )

    model.eval()
    scores, labels, groups = [], [], []
    with torch.no_grad():
        for batch in loader(data, data.test_mask, False, args):
            size = batch.batch_size
            scores.append(model(batch.x, batch.edge_index)[:size])
            labels.append(batch.y[:size])
            groups.append(batch.s[:size])
    print(
        fairness_report(
            torch.cat(scores), torch.cat(labels), torch.cat(groups)
        )
    )
    rss = psutil.Process().memory_info().rss / 2**30
    print(f'resident memory at the end: {rss:.1f} GiB')


if __name__ == '__main__':
    main()
