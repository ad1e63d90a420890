import copy

import pytest
import torch
import torch.nn.modules.module as modules
from torch_geometric.nn import GCNConv

from pyg_bemap import BalanceAwareSampling, BeMapConv
from pyg_bemap.nn.fused import FusedGCNConv
from pyg_bemap.nn.gcn_propagation import gcn_forward, propagates_directly
from pyg_bemap.utils.gcn_graph import GCNGraph
from pyg_bemap.utils.layout import csr_of_ones
from tests.conftest import random_graph


@pytest.mark.parametrize(
    'channels', [(8, 16), (8, 3)], ids=['wider', 'narrower']
)
@pytest.mark.parametrize('bias', [True, False])
def test_the_direct_forward_is_the_layers(channels, bias):
    data = random_graph(40, 300, simple=True)
    conv = GCNConv(*channels, bias=bias)
    graph = GCNGraph(csr_of_ones(data.edge_index, data.num_nodes))
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


X = torch.zeros(3, 4)


def test_only_plain_gcn_layers_without_hooks_propagate_directly():
    assert propagates_directly(GCNConv(4, 4), X)
    assert propagates_directly(FusedGCNConv(4, 4), X)
    refused = [
        GCNConv(4, 4, improved=True),
        GCNConv(4, 4, normalize=False),
        GCNConv(4, 4, add_self_loops=False),
        GCNConv(4, 4, aggr='mean'),
        GCNConv(4, 4, flow='target_to_source'),
        type('Sub', (GCNConv,), {})(4, 4),
    ]
    hooked = [GCNConv(4, 4) for _ in range(4)]
    hooked[0].register_forward_hook(lambda *args: None)
    hooked[1].lin.register_forward_pre_hook(lambda *args: None)
    hooked[2].register_message_forward_hook(lambda *args: None)
    hooked[3].lin = torch.nn.Linear(4, 4, bias=False)
    for conv in refused + hooked:
        assert not propagates_directly(conv, X), conv
    assert not propagates_directly(GCNConv(4, 4), X.unsqueeze(1))
    handle = modules.register_module_forward_hook(lambda *args: None)
    try:
        assert not propagates_directly(GCNConv(4, 4), X)
    finally:
        handle.remove()


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
    built = []
    transposed = GCNGraph.transposed

    def spy(graph):
        built.append(graph._adj_t is None)
        return transposed(graph)

    monkeypatch.setattr(GCNGraph, 'transposed', spy)
    data = BalanceAwareSampling()(random_graph(60, 600, simple=True))
    first, second = BeMapConv(GCNConv(8, 4)), BeMapConv(GCNConv(4, 4))
    for _ in range(3):
        x = data.x.clone().requires_grad_()
        second(first(x, data.edge_index), data.edge_index).sum().backward()
    assert len(built) == 6 and not any(built)  # two layers, three passes
