import copy

import pytest
import torch
from torch_geometric.nn import GCNConv
from torch_geometric.utils import to_dense_adj

from pyg_bemap import BalanceAwareSampling, BeMapConv
from pyg_bemap.infra.sparse import MaskedAdjacency
from pyg_bemap.routes.gcn import GCNGraph, computes_gcn, gcn_forward, propagate
from tests.conftest import random_graph


def gcn_graph(edge_index, num_nodes, dtype=torch.float32):
    everything = torch.ones(edge_index.size(1), dtype=torch.bool)
    parts = MaskedAdjacency(edge_index, num_nodes).csr_parts(everything)
    return GCNGraph(parts, dtype)


def dense_gcn(edge_index, num_nodes, x):
    r"""GCN's propagation by its definition, on a dense matrix."""
    adj = to_dense_adj(edge_index, max_num_nodes=num_nodes)[0].t()
    adj = adj.to(x.dtype) + torch.eye(num_nodes, dtype=x.dtype)
    scale = adj.sum(1).rsqrt()
    return scale.view(-1, 1) * adj * scale.view(1, -1) @ x


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_propagation_and_its_gradient_are_gcns(dtype):
    data = random_graph(40, 300, simple=True)  # isolated nodes too
    edge_index, n = data.edge_index, data.num_nodes
    graph = gcn_graph(edge_index, n, dtype)
    x = data.x.to(dtype).requires_grad_()
    expected_x = x.detach().clone().requires_grad_()
    out = propagate(x, graph)
    expected = dense_gcn(edge_index, n, expected_x)
    torch.testing.assert_close(out, expected)
    weights = torch.randn_like(out)
    (out * weights).sum().backward()
    (expected * weights).sum().backward()
    torch.testing.assert_close(x.grad, expected_x.grad)
    assert out.dtype == x.grad.dtype == dtype
    with torch.no_grad():
        torch.testing.assert_close(propagate(x, graph), expected)
    assert torch.equal(x.detach(), data.x.to(dtype))  # not modified


@pytest.mark.parametrize(
    'channels', [(8, 16), (8, 3)], ids=['wider', 'narrower']
)
@pytest.mark.parametrize('bias', [True, False])
@pytest.mark.parametrize('simple', [True, False])
def test_the_direct_forward_is_the_layers(channels, bias, simple):
    # any graph: GCNConv keeps one self-loop per node and sums repeats
    data = random_graph(40, 300, simple=simple)
    conv = GCNConv(*channels, bias=bias)
    graph = gcn_graph(data.edge_index, data.num_nodes)
    x = data.x.clone().requires_grad_()
    out = gcn_forward(conv, x, graph)
    twin = copy.deepcopy(conv)
    x_twin = data.x.clone().requires_grad_()
    expected = twin(x_twin, data.edge_index)
    torch.testing.assert_close(out, expected)
    out.square().sum().backward()
    expected.square().sum().backward()
    torch.testing.assert_close(x.grad, x_twin.grad)
    for mine, theirs in zip(conv.parameters(), twin.parameters()):
        torch.testing.assert_close(mine.grad, theirs.grad)


def test_only_plain_gcn_layers_are_computed_directly():
    assert computes_gcn(GCNConv(4, 4))
    refused = [
        GCNConv(4, 4, improved=True),
        GCNConv(4, 4, normalize=False),
        GCNConv(4, 4, add_self_loops=False),
        GCNConv(4, 4, aggr='mean'),
        type('Sub', (GCNConv,), {})(4, 4),
    ]
    replaced = GCNConv(4, 4)
    replaced.lin = torch.nn.Linear(4, 4, bias=False)
    for conv in refused + [replaced]:
        assert not computes_gcn(conv), conv


def test_bemap_gcn_never_calls_the_layers_propagation():
    data = BalanceAwareSampling()(random_graph(60, 600, simple=True))
    inner = GCNConv(8, 4)
    expected_eval = inner(data.x, data.edge_index.as_tensor())
    conv = BeMapConv(copy.deepcopy(inner))

    def refuse(*args, **kwargs):
        raise AssertionError('the layer propagated itself')

    conv.conv.propagate = refuse
    conv(data.x, data.edge_index).sum().backward()  # training
    out = conv.eval()(data.x, data.edge_index)
    torch.testing.assert_close(out, expected_eval)


def test_bemap_gcn_samples_come_with_their_transpose(monkeypatch):
    given = []
    transpose = GCNGraph.transpose

    def spy(graph):
        given.append(graph)
        return transpose(graph)

    monkeypatch.setattr(GCNGraph, 'transpose', spy)
    data = BalanceAwareSampling()(random_graph(60, 600, simple=True))
    first, second = BeMapConv(GCNConv(8, 4)), BeMapConv(GCNConv(4, 4))
    for _ in range(3):
        x = data.x.clone().requires_grad_()
        second(first(x, data.edge_index), data.edge_index).sum().backward()
    # every backward product used the transpose built with its sample
    assert len(given) == 6  # two layers, each its own pass, three times
