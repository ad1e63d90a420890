import pytest
import torch
from torch_geometric.utils import to_dense_adj

from pyg_bemap.utils.gcn_graph import GCNGraph, gcn_propagate
from pyg_bemap.utils.layout import csr_of_ones
from tests.conftest import random_graph


def dense_gcn(edge_index, num_nodes, x):
    r"""GCN's propagation by its definition, on a dense matrix."""
    adj = to_dense_adj(edge_index, max_num_nodes=num_nodes)[0].t()
    adj = adj.to(x.dtype) + torch.eye(num_nodes, dtype=x.dtype)
    scale = adj.sum(1).rsqrt()
    return scale.view(-1, 1) * adj * scale.view(1, -1) @ x


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
@pytest.mark.parametrize('given_transpose', [True, False])
def test_propagation_and_its_gradient_are_gcns(dtype, given_transpose):
    data = random_graph(40, 300, simple=True)  # isolated nodes too
    edge_index, n = data.edge_index, data.num_nodes
    adj = csr_of_ones(edge_index, n, dtype=dtype)
    adj_t = csr_of_ones(edge_index.flip(0), n, dtype=dtype)
    graph = GCNGraph(adj, adj_t if given_transpose else None)
    x = data.x.to(dtype).requires_grad_()
    expected_x = x.detach().clone().requires_grad_()
    out = gcn_propagate(x, graph)
    expected = dense_gcn(edge_index, n, expected_x)
    torch.testing.assert_close(out, expected)
    weights = torch.randn_like(out)
    (out * weights).sum().backward()
    (expected * weights).sum().backward()
    torch.testing.assert_close(x.grad, expected_x.grad)
    assert out.dtype == x.grad.dtype == dtype
    if given_transpose:  # no transpose is built
        assert graph.transposed() is adj_t
    with torch.no_grad():
        torch.testing.assert_close(gcn_propagate(x, graph), expected)
    assert torch.equal(x.detach(), data.x.to(dtype))  # not modified


def test_a_missing_transpose_is_built_once():
    data = random_graph(20, 100, simple=True)
    graph = GCNGraph(csr_of_ones(data.edge_index, data.num_nodes))
    first = graph.transposed()
    assert first is graph.transposed()
    expected = csr_of_ones(data.edge_index.flip(0), data.num_nodes)
    assert torch.equal(first.to_dense(), expected.to_dense())
