import copy

import pytest
import torch
from torch_geometric.nn import (
    GATConv,
    GCN2Conv,
    GCNConv,
    GENConv,
    HeteroConv,
    PointNetConv,
    SAGEConv,
    Sequential,
    to_hetero,
)
from torch_geometric.nn.models import GAT, GCN, GIN, EdgeCNN, GraphSAGE

from pyg_bemap import (
    BalanceAwareSampling,
    BeMapConv,
    SamplerSettings,
    to_bemap,
)
from tests.conftest import random_graph
from tests.nn.test_checkpointing import DeepGCN


class OwnModel(torch.nn.Module):
    r"""A user's own class: layers in a ModuleList and a torch Sequential."""

    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList([SAGEConv(8, 16), GCNConv(16, 16)])
        self.more = torch.nn.Sequential(GENConv(16, 4))
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, edge_index):
        for conv in self.convs:
            x = conv(x, edge_index).relu()
        for conv in self.more:
            x = conv(x, edge_index)
        return self.lin(x)


MODELS = {
    'GCN': lambda: GCN(8, 16, num_layers=2, out_channels=4),
    'GAT': lambda: GAT(8, 16, num_layers=2, out_channels=4, heads=2),
    'GraphSAGE': lambda: GraphSAGE(8, 16, num_layers=2, out_channels=4),
    'GIN': lambda: GIN(8, 16, num_layers=2, out_channels=4),
    'EdgeCNN': lambda: EdgeCNN(8, 16, num_layers=2, out_channels=4),
    'DeepGCNLayer': lambda: DeepGCN(ckpt_grad=False),
    'pyg Sequential': lambda: Sequential(
        'x, edge_index',
        [
            (GCNConv(8, 16), 'x, edge_index -> x'),
            torch.nn.ReLU(),
            (SAGEConv(16, 4), 'x, edge_index -> x'),
        ],
    ),
    'own class': OwnModel,
}


@pytest.fixture(scope='module', params=['multigraph', 'simple'])
def data(request):
    # the multigraph takes the edge list, the simple graph the sparse path
    graph = random_graph(60, 600, 2, 0, simple=request.param == 'simple')
    return BalanceAwareSampling()(graph)


def bemap_layers(model):
    return [m for m in model.modules() if isinstance(m, BeMapConv)]


@pytest.mark.parametrize('name', list(MODELS))
def test_every_family(data, name):
    torch.manual_seed(0)
    vanilla = MODELS[name]()
    model = to_bemap(vanilla)
    plain = data.edge_index.as_tensor()
    assert bemap_layers(model) and not bemap_layers(vanilla)
    # evaluation: the original model, exactly with the edge list, up to
    # floating-point summation order in the default (sparse) layout
    vanilla.eval(), model.eval()
    expected = vanilla(data.x, plain)
    exact = to_bemap(vanilla, layout='edge_index').eval()
    assert torch.equal(exact(data.x, data.edge_index), expected)
    close = dict(atol=1e-5, rtol=1e-5)
    out = model(data.x, data.edge_index)
    torch.testing.assert_close(out, expected, **close)
    # training: a fresh fair sample every pass
    model.train()
    if name == 'DeepGCNLayer':  # dropout: fix the seed, vary the sample
        model.apply(lambda m: setattr(m, 'dropout', 0.0))
    first = model(data.x, data.edge_index)
    assert not torch.allclose(first, model(data.x, data.edge_index))
    first.sum().backward()
    # a vanilla checkpoint loads, strictly, and the BeMap one loads back
    fresh = to_bemap(MODELS[name]())
    fresh.load_state_dict(vanilla.state_dict())
    fresh.eval()
    torch.testing.assert_close(fresh(data.x, data.edge_index), out, **close)
    again = MODELS[name]()
    again.load_state_dict(fresh.state_dict())
    again.eval()
    assert torch.equal(again(data.x, plain), expected)


def test_settings_reach_every_layer():
    generator = torch.Generator()
    model = to_bemap(
        OwnModel(),
        beta=0.5,
        min_keep=2,
        strategy='degree',
        layout='edge_index',
        generator=generator,
    )
    settings = SamplerSettings(beta=0.5, min_keep=2, strategy='degree')
    assert [
        (layer.settings, layer.layout, layer.generator)
        for layer in bemap_layers(model)
    ] == [(settings, 'edge_index', generator)] * 3


def test_copy_by_default_or_in_place():
    vanilla = GCN(8, 16, num_layers=2)
    model = to_bemap(vanilla)
    assert model is not vanilla and not bemap_layers(vanilla)
    assert to_bemap(vanilla, inplace=True) is vanilla
    assert len(bemap_layers(vanilla)) == 2


def test_idempotent(data):
    model = to_bemap(GCN(8, 16, num_layers=2))
    layers = bemap_layers(model)
    again = to_bemap(model, inplace=True)
    assert bemap_layers(again) == layers
    # one pair of hooks opens its passes, installed once
    assert len(again._forward_pre_hooks) == len(again._forward_hooks) == 1
    assert all(not isinstance(m.conv, BeMapConv) for m in layers)
    with pytest.raises(ValueError, match="'convs.0' is already a BeMapConv"):
        to_bemap(model, beta=0.5)


def test_idempotent_with_a_generator_in_a_copy():
    generator = torch.Generator().manual_seed(0)
    model = to_bemap(GCN(8, 16, num_layers=2), generator=generator)
    assert all(m.generator is generator for m in bemap_layers(model))
    again = to_bemap(model, generator=generator)  # a copy, same settings
    assert all(m.generator is generator for m in bemap_layers(again))
    assert bemap_layers(again)[0] is not bemap_layers(model)[0]


class Tied(torch.nn.Module):
    r"""One layer applied three times, and a layer under two names."""

    def __init__(self):
        super().__init__()
        self.convs = torch.nn.ModuleList([GCNConv(8, 8)] * 3)
        self.first = GCNConv(8, 8)
        self.second = self.first

    def forward(self, x, edge_index):
        for conv in [*self.convs, self.first, self.second]:
            x = conv(x, edge_index).relu()
        return x


def test_a_layer_registered_twice_is_wrapped_wherever_it_is(data):
    model = to_bemap(Tied())
    convs = list(model.convs)
    assert all(isinstance(c, BeMapConv) for c in [*convs, model.second])
    # still tied: one wrapper, one set of weights, as before
    assert convs[0] is convs[1] is convs[2] and model.first is model.second
    assert len(list(model.parameters())) == len(list(Tied().parameters()))
    model.eval()
    vanilla = Tied()
    vanilla.load_state_dict(model.state_dict())
    x, edge_index = data.x, data.edge_index
    assert torch.allclose(model(x, edge_index), vanilla(x, edge_index))


class ReadsItsLayer(torch.nn.Module):
    r"""A model whose forward reads its layer's attributes."""

    def __init__(self):
        super().__init__()
        self.conv = GATConv(8, 4, heads=3, concat=True)

    def forward(self, x, edge_index):
        out = self.conv(x, edge_index)
        return out.view(-1, self.conv.heads, self.conv.out_channels).mean(1)


def test_a_model_reading_its_layers_attributes_still_runs(data):
    model = to_bemap(ReadsItsLayer())
    model(data.x, data.edge_index).sum().backward()
    vanilla = ReadsItsLayer()
    vanilla.load_state_dict(model.state_dict())
    model.eval()
    assert torch.allclose(
        model(data.x, data.edge_index), vanilla(data.x, data.edge_index)
    )


def test_pyg_explainer_explains_a_converted_model_as_the_original(data):
    from torch_geometric.explain import Explainer, GNNExplainer

    vanilla = GCN(8, 16, num_layers=2, out_channels=2)
    converted = to_bemap(vanilla)
    masks = []
    for model, edge_index in (
        (vanilla, data.edge_index.as_tensor()),
        (converted, data.edge_index),
    ):
        torch.manual_seed(1)
        explainer = Explainer(
            model,
            GNNExplainer(epochs=5),
            explanation_type='model',
            edge_mask_type='object',
            model_config=dict(
                mode='multiclass_classification',
                task_level='node',
                return_type='raw',
            ),
        )
        masks.append(explainer(data.x, edge_index, index=3).edge_mask)
    assert torch.allclose(*masks, atol=1e-6)


def test_a_layer_whose_second_argument_is_not_the_graph_is_refused():
    class GCNII(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = GCN2Conv(8, alpha=0.1)

        def forward(self, x, edge_index):
            return self.conv(x, x, edge_index)

    with pytest.raises(ValueError, match="'conv': .*takes 'x_0' there"):
        to_bemap(GCNII())
    with pytest.raises(ValueError, match="PointNetConv takes 'pos'"):
        BeMapConv(PointNetConv())


def test_a_single_layer(data):
    model = to_bemap(GCNConv(8, 4))
    assert isinstance(model, BeMapConv)
    model(data.x, data.edge_index).sum().backward()
    assert to_bemap(model, inplace=True) is model  # not wrapped twice
    assert to_bemap(model).conv is not model.conv  # a copy, wrapped once
    assert not isinstance(to_bemap(model).conv, BeMapConv)
    with pytest.raises(ValueError, match="'model' is already a BeMapConv"):
        to_bemap(model, beta=0.5)


def test_refusals_name_the_layer():
    with pytest.raises(ValueError, match=r"'convs.1': GCNConv.*cached=True"):
        model = GCN(8, 16, num_layers=2)
        model.convs[1].cached = True
        to_bemap(model)
    with pytest.raises(ValueError, match='found no message-passing layer'):
        to_bemap(torch.nn.Sequential(torch.nn.Linear(8, 8)))
    hetero = torch.nn.ModuleDict(
        {'conv': HeteroConv({('a', 'to', 'b'): SAGEConv(-1, 4)})}
    )
    with pytest.raises(ValueError, match="'conv'.*homogeneous"):
        to_bemap(hetero)
    with pytest.raises(ValueError, match='torch.nn.Module'):
        to_bemap('GCN')
    with pytest.raises(ValueError, match='beta'):
        to_bemap(GCN(8, 16, num_layers=2), beta=3.0)


@pytest.mark.parametrize('bemap_first', [True, False])
def test_a_to_hetero_model_is_told_bemap_is_for_homogeneous_graphs(
    bemap_first,
):
    from torch_geometric.data import HeteroData

    graph = HeteroData()
    graph['a'].x, graph['b'].x = torch.randn(10, 4), torch.randn(8, 4)
    edges = torch.stack([torch.arange(10), torch.arange(10) % 8])
    graph['a', 'to', 'b'].edge_index = edges
    graph['b', 'from', 'a'].edge_index = edges.flip(0)
    model = GraphSAGE((-1, -1), 8, num_layers=2)
    if bemap_first:
        model = to_hetero(to_bemap(model), graph.metadata())
    else:  # to_bemap finds the layers to_hetero made
        model = to_bemap(to_hetero(model, graph.metadata()))
    with pytest.raises(RuntimeError, match='homogeneous graphs only'):
        model(graph.x_dict, graph.edge_index_dict)


def test_original_model_is_untouched_by_training_the_copy(data):
    vanilla = GCN(8, 16, num_layers=2)
    before = copy.deepcopy(vanilla.state_dict())
    model = to_bemap(vanilla)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model(data.x, data.edge_index).sum().backward()
    optimizer.step()
    for key, value in vanilla.state_dict().items():
        assert torch.equal(value, before[key])
