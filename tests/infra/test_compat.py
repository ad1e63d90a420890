import torch
from torch_geometric import EdgeIndex

from pyg_bemap import BalanceAwareSampling, balanced_edge_sample
from pyg_bemap.datasets import biased_sbm
from pyg_bemap.infra.compat import plain_tensor


def test_a_plain_tensor_of_every_kind_of_edge_list():
    edges = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    wrapped = EdgeIndex(edges, sparse_size=(3, 3))
    carried = BalanceAwareSampling()(
        biased_sbm(30, seed=0)
    ).edge_index  # a BeMapEdgeIndex
    for tensor, memory in (
        (edges, edges),
        (wrapped, edges),
        (carried, carried),
    ):
        plain = plain_tensor(tensor)
        assert type(plain) is torch.Tensor
        assert plain.data_ptr() == memory.data_ptr()  # no copy
        assert plain.shape == tensor.shape
    assert plain_tensor(wrapped).tolist() == edges.tolist()


def test_pyg_edge_index_input_gives_what_a_tensor_gives():
    data = biased_sbm(80, seed=4)
    wrapped = data.clone()
    wrapped.edge_index = EdgeIndex(data.edge_index, sparse_size=(80, 80))
    plain, pyg = BalanceAwareSampling()(data), BalanceAwareSampling()(wrapped)
    assert torch.equal(plain.bemap_count, pyg.bemap_count)
    assert torch.equal(plain.edge_index, pyg.edge_index)
    gen = (torch.Generator().manual_seed(1) for _ in range(2))
    (a, _), (b, _) = (
        balanced_edge_sample(e, data.s, plain.bemap_balance, generator=g)
        for e, g in zip((data.edge_index, wrapped.edge_index), gen)
    )
    assert torch.equal(plain_tensor(a), plain_tensor(b))
