r"""The fast routes never change a result or raise where the inner layer's
own call would not: every call they cannot honour takes the edge list."""

import copy

import pytest
import torch
from torch.nn import Linear
from torch_geometric.nn import (
    GATConv,
    GCNConv,
    GINConv,
    GraphConv,
    SAGEConv,
    SGConv,
    TAGConv,
)
from torch_geometric.typing import WITH_TORCH_SPARSE, SparseTensor
from torch_geometric.utils import to_torch_csr_tensor

import pyg_bemap.routes as routes
from pyg_bemap import BalanceAwareSampling, BeMapConv
from pyg_bemap.datasets import load_nba
from pyg_bemap.routes import (
    GraphInput,
    LayerCall,
    RouteChoice,
    choose_route,
    edge_list_route,
    gcn_route,
    layer_route,
    sparse_route,
)
from tests.conftest import random_graph

FLOWS = {
    'gcn': lambda **kw: GCNConv(8, 16, **kw),
    'sage': lambda **kw: SAGEConv(8, 16, **kw),
    'graph': lambda **kw: GraphConv(8, 16, **kw),
    'gin': lambda **kw: GINConv(Linear(8, 16), **kw),
    'sg': lambda **kw: SGConv(8, 16, **kw),
    'tag': lambda **kw: TAGConv(8, 16, **kw),
}


@pytest.fixture(scope='module')
def data():
    return BalanceAwareSampling()(random_graph(60, 600, 2, 0, simple=True))


def pair(make):
    torch.manual_seed(0)
    vanilla = make()
    return vanilla, BeMapConv(copy.deepcopy(vanilla))


def test_the_fast_route_of_each_layer():
    assert layer_route(GCNConv(8, 4), 'auto') is gcn_route
    assert layer_route(SAGEConv(8, 4), 'auto') is sparse_route
    assert layer_route(GCNConv(8, 4), 'edge_index') is edge_list_route
    flow = GCNConv(8, 4, flow='target_to_source')
    assert layer_route(flow, 'auto') is edge_list_route
    # every layer of the sparse route keeps it (a lost optimisation would
    # change no result, so no other test would notice)
    for make in ('graph', 'gin', 'sg', 'tag'):
        assert layer_route(FLOWS[make](), 'auto') is sparse_route
    for conv in (GATConv(8, 4), SAGEConv(8, 4, aggr='max')):
        assert layer_route(conv, 'auto') is edge_list_route


@pytest.mark.parametrize('dtype', [torch.float16, torch.bfloat16])
@pytest.mark.parametrize('make', ['gcn', 'sage'])
def test_half_precision_features_take_the_edge_list(data, dtype, make):
    # torch.sparse's CPU products take no half precision
    conv = FLOWS[make]().to(dtype)
    graph = GraphInput(data.edge_index, None, conv.flow)
    call = LayerCall(conv, (), data.x.to(dtype), (), {})
    assert layer_route(conv, 'auto') is not edge_list_route
    assert choose_route(RouteChoice(), call, graph, None) is edge_list_route


@pytest.mark.parametrize('name', list(FLOWS))
def test_target_to_source_layers_work_as_the_vanilla_layer(data, name):
    vanilla, bemap = pair(lambda: FLOWS[name](flow='target_to_source'))
    plain = data.edge_index.as_tensor()
    vanilla.eval(), bemap.eval()
    assert torch.equal(bemap(data.x, data.edge_index), vanilla(data.x, plain))
    bemap.train()(data.x, data.edge_index).sum().backward()


@pytest.mark.parametrize('make', ['gcn', 'sage'])
def test_inference_mode_takes_the_fast_route(data, make):
    # Lightning validates under inference mode
    vanilla, bemap = pair(FLOWS[make])
    graph = GraphInput(data.edge_index, None, 'source_to_target')
    call = LayerCall(bemap.conv, bemap._arg_names, data.x, (), {})
    with torch.inference_mode():
        out = bemap.eval()(data.x, data.edge_index)
        route = choose_route(RouteChoice(), call, graph, None)
    assert route is layer_route(bemap.conv, 'auto') is not edge_list_route
    expected = vanilla.eval()(data.x, data.edge_index.as_tensor())
    torch.testing.assert_close(out, expected)


def test_inference_mode_leaves_nothing_behind(data):
    vanilla, bemap = pair(lambda: GCNConv(8, 16))
    bemap.eval()
    with torch.inference_mode():
        bemap(data.x, data.edge_index)
        torch.manual_seed(0)
        bemap.train()(data.x, data.edge_index)  # a sample drawn in it
    torch.manual_seed(0)  # the same sample, reused
    bemap(data.x.clone().requires_grad_(), data.edge_index).sum().backward()
    bemap.eval()
    x = data.x.clone().requires_grad_()
    out = bemap(x, data.edge_index)
    out.sum().backward()  # no inference tensor was saved for backward
    expected = vanilla.eval()(data.x, data.edge_index.as_tensor())
    torch.testing.assert_close(out, expected)


@pytest.mark.parametrize('training', [True, False])
def test_cpu_autocast_takes_the_layers_own_call(data, training):
    vanilla, bemap = pair(lambda: GCNConv(8, 16))
    bemap.train(training), vanilla.train(training)
    with torch.autocast('cpu', dtype=torch.bfloat16):
        out = bemap(data.x, data.edge_index)
        expected = vanilla(data.x, data.edge_index.as_tensor())
    assert out.dtype == expected.dtype
    if not training:
        assert torch.equal(out, expected)


def test_a_sparse_feature_matrix_with_a_widening_gcn():
    data = BalanceAwareSampling()(load_nba())
    x = data.x.to_sparse()
    vanilla, bemap = pair(lambda: GCNConv(data.num_features, 128))
    expected = vanilla(x, data.edge_index.as_tensor())
    torch.testing.assert_close(bemap.eval()(x, data.edge_index), expected)
    bemap.train()(x, data.edge_index).sum().backward()


def test_batched_features_with_as_many_batches_as_nodes(data):
    x = torch.randn(data.num_nodes, data.num_nodes, 8)  # B == N
    vanilla, bemap = pair(lambda: GCNConv(8, 16))
    expected = vanilla(x, data.edge_index.as_tensor())
    assert torch.equal(bemap.eval()(x, data.edge_index), expected)
    assert bemap.train()(x, data.edge_index).shape == expected.shape


def test_hooks_and_other_arguments_take_the_edge_list(data):
    vanilla, bemap = pair(lambda: GCNConv(8, 16))
    seen = []
    bemap.conv.lin.register_forward_hook(lambda *args: seen.append(1))
    bemap.eval()(data.x, data.edge_index)
    assert seen  # the hook saw the call: the layer's own
    for make in (lambda: SAGEConv(8, 16), lambda: GINConv(Linear(8, 16))):
        _, bemap = pair(make)  # layers of the sparse route
        graphs = []
        bemap.conv.register_forward_pre_hook(
            lambda m, a, seen=graphs: seen.append(a[1])
        )
        for mode in (bemap.eval, bemap.train):
            mode()(data.x, data.edge_index)
        assert [graph.layout for graph in graphs] == [torch.strided] * 2
        assert torch.equal(graphs[0], data.edge_index.as_tensor())
    weight = torch.rand(data.num_edges)
    expected = vanilla(data.x, data.edge_index.as_tensor(), weight)
    out = BeMapConv(copy.deepcopy(vanilla)).eval()(
        data.x, data.edge_index, weight
    )
    assert torch.equal(out, expected)


GRAPH_FORMS = {
    'edge list, flow target_to_source': lambda plain, n: plain,
    'torch.sparse CSR': lambda plain, n: to_torch_csr_tensor(
        plain.flip(0), size=(n, n)
    ),
    'SparseTensor': lambda plain, n: SparseTensor(
        row=plain[1], col=plain[0], sparse_sizes=(n, n)
    ),
}


@pytest.mark.parametrize('form', GRAPH_FORMS)
def test_a_training_call_reads_the_pairs_only_to_build_a_sampler(
    form, monkeypatch
):
    # the pairs of such a graph are a copy of its edges: a call whose
    # sampler is kept has no use for them
    if form == 'SparseTensor' and not WITH_TORCH_SPARSE:
        pytest.skip('needs torch-sparse')
    data = BalanceAwareSampling()(random_graph(60, 600, 2, 0, simple=True))
    read = []
    pairs_of = routes.edge_pairs
    monkeypatch.setattr(
        routes, 'edge_pairs', lambda adj: read.append(1) or pairs_of(adj)
    )
    graph = GRAPH_FORMS[form](data.edge_index.as_tensor(), data.num_nodes)
    flow = 'target_to_source' if form.startswith('edge') else None
    conv = BeMapConv(SAGEConv(8, 16, **({'flow': flow} if flow else {})))
    info = data.edge_index.bemap
    for _ in range(3):
        conv(data.x, graph, bemap=info).sum().backward()
    assert len(read) == 1


MAX_OR_MIN = {
    'graph-max': lambda: GraphConv(8, 16, aggr='max'),
    'gin-min': lambda: GINConv(Linear(8, 16), aggr='min'),
    'sg-max': lambda: SGConv(8, 16, aggr='max'),
    'tag-max': lambda: TAGConv(8, 16, aggr='max'),
    'gcn-max': lambda: GCNConv(8, 16, normalize=False, aggr='max'),
}


@pytest.mark.parametrize('make', list(MAX_OR_MIN))
def test_gradients_at_tied_maxima_are_the_vanilla_layers(data, make):
    # all features equal: every maximum ties, and a sparse product's
    # gradient picked another of the tied values than the edge list's
    vanilla, bemap = pair(MAX_OR_MIN[make])
    vanilla.eval(), bemap.eval()
    x = torch.ones_like(data.x)
    grads = []
    for conv, graph in (
        (vanilla, data.edge_index.as_tensor()),
        (bemap, data.edge_index),
    ):
        x_ = x.clone().requires_grad_()
        conv(x_, graph).square().sum().backward()
        grads.append(x_.grad)
    torch.testing.assert_close(grads[0], grads[1])


@pytest.mark.parametrize('aggr', ['max', 'mean', 'add'])
@pytest.mark.parametrize('make', ['graph', 'gcn'])
def test_an_aggr_set_after_construction_computes_as_the_layer(
    data, make, aggr
):
    # the edge list aggregates by the module built from 'aggr' at
    # construction, a sparse adjacency by the name 'aggr' has at the call
    vanilla, bemap = pair(
        lambda: (
            FLOWS[make](normalize=False) if make == 'gcn' else FLOWS[make]()
        )
    )
    vanilla.aggr = bemap.conv.aggr = aggr
    vanilla.eval(), bemap.eval()
    expected = vanilla(data.x, data.edge_index.as_tensor())
    torch.testing.assert_close(bemap(data.x, data.edge_index), expected)


def test_a_layers_route_is_decided_once(data, monkeypatch):
    decided = []
    decide = routes.layer_route
    monkeypatch.setattr(
        routes, 'layer_route', lambda *a: decided.append(a) or decide(*a)
    )
    bemap = BeMapConv(GCNConv(8, 16))
    for training in (True, False, True):
        bemap.train(training)
        bemap(data.x, data.edge_index)
    assert len(decided) == 1
    bemap.conv.aggr = 'mean'  # an option changed: decided again, once
    bemap(data.x, data.edge_index)
    bemap(data.x, data.edge_index)
    assert len(decided) == 2


def used_route(bemap, data):
    return bemap._route.of(bemap.conv, bemap.layout)


@pytest.mark.parametrize(
    'change, expected',
    [
        (lambda c: setattr(c, 'aggr', 'max'), edge_list_route),
        (lambda c: setattr(c, 'normalize', False), sparse_route),
        (lambda c: setattr(c, 'improved', True), edge_list_route),
        (lambda c: setattr(c, 'add_self_loops', False), sparse_route),
        (lambda c: setattr(c, 'flow', 'target_to_source'), edge_list_route),
        (lambda c: setattr(c, 'explain', True), edge_list_route),
        (
            lambda c: setattr(
                c.lin, 'bias', torch.nn.Parameter(torch.zeros(16))
            ),
            sparse_route,
        ),
        (lambda c: setattr(c, 'lin', Linear(8, 16, bias=False)), sparse_route),
        (lambda c: c.register_forward_hook(lambda *a: None), edge_list_route),
        (
            lambda c: c.lin.register_forward_pre_hook(lambda *a: None),
            edge_list_route,
        ),
        (
            lambda c: c.register_propagate_forward_hook(lambda *a: None),
            edge_list_route,
        ),
    ],
)
def test_an_option_changed_after_a_call_decides_the_route_again(
    data, change, expected
):
    # D5: the route follows the layer as it computes, at the next call
    bemap = BeMapConv(GCNConv(8, 16)).eval()
    bemap(data.x, data.edge_index)
    assert used_route(bemap, data) is gcn_route
    change(bemap.conv)
    assert used_route(bemap, data) is expected
    assert layer_route(bemap.conv, 'auto') is expected


def test_a_layout_set_after_a_call_decides_the_route_again(data):
    bemap = BeMapConv(SAGEConv(8, 16)).eval()
    bemap(data.x, data.edge_index)
    assert used_route(bemap, data) is sparse_route
    bemap.layout = 'edge_index'
    assert used_route(bemap, data) is edge_list_route


def test_an_aggr_changed_after_a_call_computes_as_the_layer(data):
    vanilla, bemap = pair(FLOWS['graph'])
    vanilla.eval(), bemap.eval()
    bemap(data.x, data.edge_index)  # decided for 'add'
    vanilla.aggr = bemap.conv.aggr = 'max'
    expected = vanilla(data.x, data.edge_index.as_tensor())
    torch.testing.assert_close(bemap(data.x, data.edge_index), expected)


def test_a_hook_registered_after_a_call_sees_the_layers_own_call(data):
    bemap = BeMapConv(GCNConv(8, 16)).eval()
    bemap(data.x, data.edge_index)
    seen = []
    bemap.conv.register_forward_pre_hook(lambda m, args: seen.append(args))
    bemap(data.x, data.edge_index)
    assert len(seen) == 1 and seen[0][1].layout == torch.strided
    assert seen[0][1].dim() == 2 and seen[0][1].size(0) == 2


def test_the_fast_route_comes_back_when_a_hook_is_removed(data):
    bemap = BeMapConv(GCNConv(8, 16)).eval()
    handle = bemap.conv.lin.register_forward_hook(lambda *a: None)
    bemap(data.x, data.edge_index)
    assert used_route(bemap, data) is edge_list_route
    handle.remove()
    assert used_route(bemap, data) is gcn_route
