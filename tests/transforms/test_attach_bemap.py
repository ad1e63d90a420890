import pytest
import torch
from torch_geometric.nn import MessagePassing
from torch_geometric.typing import WITH_PYG_LIB, WITH_TORCH_SPARSE

from pyg_bemap import AttachBeMap, BalanceAwareSampling, BeMapConv
from pyg_bemap.datasets import biased_sbm
from pyg_bemap.edge_index import BeMapEdgeIndex
from tests.reference import assert_rule_4

needs_sampler = pytest.mark.skipif(
    not (WITH_TORCH_SPARSE or WITH_PYG_LIB),
    reason='NeighborLoader needs torch-sparse or pyg-lib',
)


class Recorder(MessagePassing):
    def __init__(self):
        super().__init__()
        self.seen = []

    def forward(self, x, edge_index):
        self.seen.append(edge_index)
        return x


def test_repr_and_missing_information():
    assert str(AttachBeMap()) == "AttachBeMap(sens_attr='s', num_groups=None)"
    data = biased_sbm(50)
    with pytest.raises(ValueError, match='BalanceAwareSampling'):
        AttachBeMap()(data)
    prepared = BalanceAwareSampling()(data)
    with pytest.raises(ValueError, match="'region'"):
        AttachBeMap(sens_attr='region')(prepared)


def test_nodes_added_after_the_transform_are_named():
    import torch_geometric.transforms as T

    data = BalanceAwareSampling()(biased_sbm(50))
    with pytest.raises(ValueError, match='VirtualNode and Pad give'):
        AttachBeMap()(T.VirtualNode()(data))


@needs_sampler
def test_mini_batches_use_full_graph_scores_and_obey_rule_4():
    from torch_geometric.loader import NeighborLoader

    full = BalanceAwareSampling()(biased_sbm(400, seed=5))
    loader = NeighborLoader(
        full,
        num_neighbors=[6, 6],
        batch_size=40,
        input_nodes=full.train_mask,
        shuffle=True,
        transform=AttachBeMap(),
    )
    conv = BeMapConv(Recorder())
    for step, batch in enumerate(loader):
        assert isinstance(batch.edge_index, BeMapEdgeIndex)
        assert torch.equal(batch.bemap_balance, full.bemap_balance[batch.n_id])
        assert torch.equal(batch.bemap_count, full.bemap_count[batch.n_id])
        assert torch.equal(
            batch.edge_index.bemap.balance, full.bemap_balance[batch.n_id]
        )
        conv(batch.x, batch.edge_index)
        plain = batch.edge_index.as_tensor()
        kept = conv.conv.seen[-1]
        mask = torch.zeros(plain.size(1), dtype=torch.bool)
        # recover the mask: kept edges are a subsequence of the batch's edges
        key_all = plain[0] * batch.num_nodes + plain[1]
        key_kept = kept[0] * batch.num_nodes + kept[1]
        mask = torch.isin(key_all, key_kept)
        assert int(mask.sum()) == kept.size(1)  # no duplicate edges
        assert_rule_4(plain, mask, batch.s)
        if step == 3:
            break


def test_a_batch_of_one_group_keeps_the_full_graphs_groups():
    from torch_geometric.data import Data

    full = BalanceAwareSampling()(
        Data(
            edge_index=torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]]),
            s=torch.tensor([0, 1, 1, 1]),
        )
    )
    batch = Data(  # nodes 1 and 2: group 1 alone
        edge_index=torch.tensor([[0, 1], [1, 0]]),
        s=full.s[1:3],
        bemap_balance=full.bemap_balance[1:3],
        bemap_count=full.bemap_count[1:3],
        num_nodes=2,
    )
    assert AttachBeMap()(batch).edge_index.bemap.num_groups == 2
