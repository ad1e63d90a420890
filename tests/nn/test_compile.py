import pytest
import torch
from torch_geometric.nn import GATConv, GCNConv, SAGEConv
from torch_geometric.utils import scatter

from pyg_bemap import BalanceAwareSampling, BeMapConv, attach_bemap
from pyg_bemap.datasets import biased_sbm
from tests.conftest import random_graph


class Net(torch.nn.Module):
    def __init__(self, make, layout='auto'):
        super().__init__()
        self.conv1 = BeMapConv(make(32, 16), layout=layout)
        self.conv2 = BeMapConv(make(16, 2), layout=layout)

    def forward(self, x, edge_index):
        return self.conv2(self.conv1(x, edge_index).relu(), edge_index)


@pytest.fixture(scope='module')
def data():
    return BalanceAwareSampling()(biased_sbm(300, seed=0))


def test_eval_path_adds_no_graph_break(data):
    torch._dynamo.reset()
    bare = SAGEConv(32, 16).eval()
    wrapped = BeMapConv(SAGEConv(32, 16)).eval()
    plain = data.edge_index.as_tensor()
    count = torch._dynamo.explain(bare)(data.x, plain).graph_break_count
    assert count == 0
    for graph in (plain, data.edge_index):
        explained = torch._dynamo.explain(wrapped)(data.x, graph)
        assert explained.graph_break_count == count
    # layers inside a model, which dynamo inlines: no break of BeMap's own
    # (GCNConv breaks in PyG's add_remaining_self_loops, which dynamo may
    # then meet once more per layer)
    for make in (SAGEConv, GCNConv):
        model = Net(make).eval()
        for graph in (plain, data.edge_index):
            torch._dynamo.reset()
            explained = torch._dynamo.explain(model)(data.x, graph)
            assert (explained.graph_break_count == 0) == (make is SAGEConv)
            for reason in explained.break_reasons:
                where = reason.user_stack[-1].filename
                assert 'torch_geometric' in where, reason


@pytest.mark.parametrize('make', [GCNConv, GATConv])
def test_a_layer_that_breaks_breaks_where_it_does_alone(data, make):
    # PyG's self-loop insertion breaks the graph; with the carrier, its
    # plain view before that break is one more graph, which explain counts
    # as one more break (the count of graphs less one), as docs/adoption.md
    # says
    plain = data.edge_index.as_tensor()
    bare, wrapped = make(32, 16).eval(), BeMapConv(make(32, 16)).eval()
    counts = []
    for layer, graph in (
        (bare, plain),
        (wrapped, plain),
        (wrapped, data.edge_index),
    ):
        torch._dynamo.reset()
        explained = torch._dynamo.explain(layer)(data.x, graph)
        for reason in explained.break_reasons:
            assert 'torch_geometric' in reason.user_stack[-1].filename
        counts.append(explained.graph_break_count)
    assert counts[0] > 0 and counts == [counts[0], counts[0], counts[0] + 1]


@pytest.mark.parametrize(
    'make, layout',
    [(SAGEConv, 'auto'), (GCNConv, 'auto'), (GCNConv, 'edge_index')],
)
def test_compiled_model_matches_eager(data, make, layout):
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = Net(make, layout)
    compiled = torch.compile(model)
    for training in (True, False):
        model.train(training)
        torch.manual_seed(3)
        eager = model(data.x, data.edge_index)
        torch.manual_seed(3)
        out = compiled(data.x, data.edge_index)
        assert torch.allclose(eager, out, atol=1e-5), training


def mean_of_neighbours(x, edge_index):
    return scatter(
        x[edge_index[0]], edge_index[1], 0, dim_size=x.size(0), reduce='mean'
    )


def test_compiled_training_can_save_the_carrier_for_backward():
    # The backward pass of the gather needs the edges: the compiled forward
    # saves the carrier, a graph input, itself. On its first call, torch
    # 2.13 detaches each saved view under a dispatch mode that refuses
    # tensor subclasses, so a carrier that is a view failed there with
    # "Multiple dispatch failed for 'aten.detach.default'".
    graph = random_graph(20, 80)
    edge_index = attach_bemap(graph.edge_index, graph.s, torch.rand(20) + 1)
    torch._dynamo.reset()
    compiled = torch.compile(mean_of_neighbours)
    grads = []
    for fn in (mean_of_neighbours, compiled):
        x = graph.x.clone().requires_grad_()
        out = fn(x, edge_index)
        out.square().sum().backward()
        grads.append((out.detach(), x.grad))
    for eager, got in zip(*grads):
        torch.testing.assert_close(got, eager)
