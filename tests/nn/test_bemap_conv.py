import copy
import pickle

import pytest
import torch
from torch_geometric import EdgeIndex
from torch_geometric.nn import (
    EdgeConv,
    GATConv,
    GATv2Conv,
    GCNConv,
    GENConv,
    GINConv,
    GraphConv,
    LEConv,
    MessagePassing,
    ResGatedGraphConv,
    SAGEConv,
    TransformerConv,
)
from torch_geometric.nn.models import GCN
from torch_geometric.typing import WITH_TORCH_SPARSE, SparseTensor
from torch_geometric.utils import (
    to_edge_index,
    to_torch_coo_tensor,
    to_torch_csc_tensor,
    to_torch_csr_tensor,
)

from pyg_bemap import (
    BalanceAwareSampling,
    BeMapConv,
    BeMapInfo,
    RowNormConv,
    balanced_edge_sample,
    to_bemap,
)
from pyg_bemap.routes.gcn import computes_gcn
from pyg_bemap.routes.sparse import same_on_sparse
from pyg_bemap.rules.quotas import STRATEGIES
from tests.conftest import random_graph

CONVS = {
    'gcn': lambda: GCNConv(8, 16),
    'gat': lambda: GATConv(8, 16, heads=2),
    'sage': lambda: SAGEConv(8, 16),
    'graph': lambda: GraphConv(8, 16),
    'gin': lambda: GINConv(torch.nn.Linear(8, 16)),
    'row': lambda: RowNormConv(8, 16),
}


def prepared(num_nodes=60, num_edges=600, seed=0, simple=False):
    r"""A multigraph with self-loops and repeated edges, or, with
    :obj:`simple`, the same graph without them, transformed."""
    graph = random_graph(num_nodes, num_edges, 2, seed, simple=simple)
    return BalanceAwareSampling()(graph)


def test_repr():
    conv = BeMapConv(GCNConv(16, 32))
    assert str(conv) == (
        'BeMapConv(GCNConv(16, 32), beta=0.25, min_keep=4, '
        "strategy='balance', layout='auto')"
    )
    conv = BeMapConv(GATConv(16, 32), beta=0.5, min_keep=2, strategy='degree')
    assert str(conv) == (
        'BeMapConv(GATConv(16, 32, heads=1), beta=0.5, '
        "min_keep=2, strategy='degree', layout='auto')"
    )


def test_channel_counts_build_a_gcn_conv():
    torch.manual_seed(0)
    conv = BeMapConv(16, 32, improved=True, beta=0.5)
    assert str(conv) == (
        'BeMapConv(GCNConv(16, 32), beta=0.5, min_keep=4, '
        "strategy='balance', layout='auto')"
    )
    assert isinstance(conv.conv, GCNConv) and conv.conv.improved
    torch.manual_seed(0)
    assert torch.equal(conv.conv.lin.weight, GCNConv(16, 32).lin.weight)
    # renaming the class is the whole change, positional arguments too
    conv = BeMapConv(
        16, 32, True, False, False
    )  # improved, cached, self-loops
    assert conv.conv.improved and not conv.conv.add_self_loops


def test_bad_constructor_arguments_name_the_fix():
    with pytest.raises(ValueError, match='needs both channel counts'):
        BeMapConv(16)
    with pytest.raises(ValueError, match='pass the arguments to the layer'):
        BeMapConv(GCNConv(8, 4), 4)
    with pytest.raises(ValueError, match="'improved'"):
        BeMapConv(GCNConv(8, 4), improved=True)
    with pytest.raises(ValueError, match=r"a layer and \['True'\]"):
        BeMapConv(GCNConv(8, 4), None, True)
    with pytest.raises(ValueError, match='MessagePassing'):
        BeMapConv(torch.nn.Linear(8, 4))
    with pytest.raises(ValueError, match='cached=False'):
        BeMapConv(16, 32, cached=True)


def test_state_dict_has_the_inner_layers_keys():
    inner = GCNConv(8, 4)
    conv = BeMapConv(copy.deepcopy(inner))
    assert list(conv.state_dict()) == list(inner.state_dict())
    fresh = GCNConv(8, 4)
    fresh.load_state_dict(conv.state_dict())  # and back, strictly
    conv = BeMapConv(GCNConv(8, 4))
    conv.load_state_dict(inner.state_dict())
    assert torch.equal(conv.conv.lin.weight, inner.lin.weight)
    # a state dict saved under the wrapper's own names loads too
    saved = {f'conv.{k}': v for k, v in inner.state_dict().items()}
    other = BeMapConv(GCNConv(8, 4))
    other.load_state_dict(saved)
    assert torch.equal(other.conv.bias, inner.bias)


@pytest.mark.parametrize('name', list(CONVS))
@pytest.mark.parametrize('simple', [True, False])
def test_eval_is_the_inner_conv_on_the_full_graph(name, simple):
    data = prepared(simple=simple)
    inner = CONVS[name]().eval()
    plain = data.edge_index.as_tensor()
    expected = inner(data.x, plain)
    exact = BeMapConv(copy.deepcopy(inner), layout='edge_index').eval()
    assert torch.equal(exact(data.x, data.edge_index), expected)
    fast = BeMapConv(copy.deepcopy(inner)).eval()  # layout='auto'
    out = fast(data.x, data.edge_index)
    if (simple and same_on_sparse(inner)) or computes_gcn(inner):
        torch.testing.assert_close(out, expected, atol=1e-5, rtol=1e-5)
    else:  # self-loops or repeated edges: the inner layer's own call
        assert torch.equal(out, expected)


def test_eval_builds_the_full_sparse_graph_once():
    data = prepared(simple=True)
    first, second = BeMapConv(SpyConv(8, 8)), BeMapConv(SpyConv(8, 4))
    for _ in range(2):
        for layer in (first, second):
            layer.eval()(data.x[:, :8], data.edge_index)
    graphs = first.conv.graphs + second.conv.graphs
    assert all(g is graphs[0] for g in graphs)
    assert not isinstance(graphs[0], torch.Tensor) or graphs[0].is_sparse_csr


@pytest.mark.parametrize('name', list(CONVS))
@pytest.mark.parametrize('strategy', STRATEGIES)
def test_training_runs_the_inner_conv_on_the_fair_sample(name, strategy):
    data = prepared()
    inner = CONVS[name]()
    conv = BeMapConv(copy.deepcopy(inner), strategy=strategy)
    torch.manual_seed(7)
    out = conv(data.x, data.edge_index)
    plain = data.edge_index.as_tensor()
    torch.manual_seed(7)
    sampled, mask = balanced_edge_sample(
        plain, data.s, data.bemap_balance, strategy=strategy
    )
    assert 0 < int(mask.sum()) < mask.numel()
    assert torch.allclose(out, inner(data.x, sampled), atol=1e-6)
    out.sum().backward()
    assert all(p.grad is not None for p in conv.parameters())


def test_sampling_settings_reach_the_sampler():
    data = prepared(seed=3)
    conv = BeMapConv(GCNConv(8, 4), beta=1.0, min_keep=0)
    torch.manual_seed(1)
    out = conv(data.x, data.edge_index)
    torch.manual_seed(1)
    sampled, _ = balanced_edge_sample(
        data.edge_index.as_tensor(),
        data.s,
        data.bemap_balance,
        beta=1.0,
        min_keep=0,
    )
    assert torch.allclose(out, conv.conv(data.x, sampled), atol=1e-6)


class Recorder(MessagePassing):
    r"""A conv that records the graphs it is given."""

    def __init__(self):
        super().__init__()
        self.seen = []

    def forward(self, x, edge_index, edge_weight=None):
        self.seen.append((edge_index, edge_weight))
        return x


class Stack(torch.nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = torch.nn.ModuleList(layers)

    def forward(self, x, edge_index):
        for layer in self.layers:
            x = layer(x, edge_index)
        return x


def test_one_sample_per_pass_shared_by_all_layers():
    data = prepared()
    layers = [BeMapConv(Recorder()) for _ in range(3)]
    model = Stack(layers)  # written by hand: a pass is a call of it
    model(data.x, data.edge_index)
    model(data.x, data.edge_index)
    first = [seen[0] for seen in (layer.conv.seen for layer in layers)]
    second = [seen[1] for seen in (layer.conv.seen for layer in layers)]
    assert all(torch.equal(e[0], first[0][0]) for e in first)
    assert all(torch.equal(e[0], second[0][0]) for e in second)
    assert not torch.equal(first[0][0], second[0][0])


def test_two_line_adoption_with_basic_gnn():
    class FairGCN(GCN):
        def init_conv(self, in_channels, out_channels, **kwargs):
            return BeMapConv(
                super().init_conv(in_channels, out_channels, **kwargs)
            )

    data = prepared()
    torch.manual_seed(0)
    model = FairGCN(8, 16, num_layers=2, out_channels=2)
    torch.manual_seed(0)
    vanilla = GCN(8, 16, num_layers=2, out_channels=2)
    assert all(isinstance(conv, BeMapConv) for conv in model.convs)
    model.train()
    out = model(data.x, data.edge_index)
    out.sum().backward()
    model.eval(), vanilla.eval()
    plain = data.edge_index.as_tensor()
    torch.testing.assert_close(
        model(data.x, data.edge_index), vanilla(data.x, plain)
    )
    # training output is the vanilla model on the shared fair sample
    model.train(), vanilla.train()
    model.dropout.p = vanilla.dropout.p = 0.0
    torch.manual_seed(4)
    out = model(data.x, data.edge_index)
    torch.manual_seed(4)
    sampled, _ = balanced_edge_sample(plain, data.s, data.bemap_balance)
    assert torch.allclose(out, vanilla(data.x, sampled), atol=1e-6)


def test_training_without_information_names_the_transform():
    data = random_graph()
    conv = BeMapConv(GCNConv(8, 4))
    with pytest.raises(RuntimeError, match='BalanceAwareSampling'):
        conv(data.x, data.edge_index)
    conv.eval()
    conv(data.x, data.edge_index)  # inference needs nothing
    data = prepared()  # a model that builds its layer's graph: said too
    conv.train()
    with pytest.raises(RuntimeError, match='graph the model builds in its'):
        conv(data.x, data.edge_index.flip(0))


def test_explicit_information_for_plain_edges():
    data = random_graph(60, 600)
    balance = torch.rand(60) + 0.1
    conv = BeMapConv(GCNConv(8, 4))
    torch.manual_seed(2)
    out = conv(data.x, data.edge_index, bemap=BeMapInfo(data.s, balance))
    torch.manual_seed(2)
    sampled, _ = balanced_edge_sample(data.edge_index, data.s, balance)
    assert torch.allclose(out, conv.conv(data.x, sampled), atol=1e-6)


@pytest.mark.parametrize('training', [False, True])
def test_pyg_edge_index_graphs_with_one_bemap_info(training):
    # two graphs of as many edges, as PyG's EdgeIndex, share one BeMapInfo:
    # each must be computed on its own edges (the second once took the
    # first one's sampler, and torch 2.8 refused EdgeIndex there)
    first = random_graph(60, 600, seed=1, simple=True).contiguous()
    second = random_graph(60, 900, seed=2, simple=True)
    second.edge_index = second.edge_index[:, : first.num_edges].contiguous()
    info = BeMapInfo(first.s, torch.rand(60) + 0.1)
    conv = BeMapConv(SAGEConv(8, 4)).train(training)
    for data in (first, second):
        edge_index = EdgeIndex(data.edge_index, sparse_size=(60, 60))
        torch.manual_seed(3)
        out = conv(first.x, edge_index, bemap=info)
        kept = data.edge_index
        if training:
            torch.manual_seed(3)
            kept, _ = balanced_edge_sample(kept, first.s, info.balance)
        assert torch.allclose(out, conv.conv(first.x, kept), atol=1e-6)


def test_cached_inner_conv_is_refused():
    with pytest.raises(ValueError, match='cached=False'):
        BeMapConv(GCNConv(8, 4, cached=True))
    with pytest.raises(ValueError, match='message-passing layer'):
        BeMapConv('GCNConv')
    with pytest.raises(ValueError, match='beta'):
        BeMapConv(GCNConv(8, 4), beta=2.0)


@pytest.mark.parametrize('positional', [True, False])
def test_edge_weight_is_masked_with_the_edges(positional):
    data = prepared()
    weight = torch.rand(data.edge_index.size(1))
    weight_copy = weight.clone()
    conv = BeMapConv(Recorder())
    if positional:
        conv(data.x, data.edge_index, weight)
    else:
        conv(data.x, data.edge_index, edge_weight=weight)
    edges, masked = conv.conv.seen[0]
    plain = data.edge_index.as_tensor()
    keep = (plain.t().unsqueeze(1) == edges.t().unsqueeze(0)).all(-1)
    assert masked.numel() == edges.size(1)
    # the weights follow their edges: compare as (src, dst, weight) triples
    triples = set(zip(*edges.tolist(), masked.tolist()))
    full = set(zip(*plain.tolist(), weight.tolist()))
    assert triples <= full and keep.any(0).all()
    assert torch.equal(weight, weight_copy)


def test_edge_attr_is_masked_for_gat():
    data = prepared()
    edge_attr = torch.randn(data.edge_index.size(1), 3)
    conv = BeMapConv(GATConv(8, 4, edge_dim=3))
    torch.manual_seed(5)
    out = conv(data.x, data.edge_index, edge_attr=edge_attr)
    torch.manual_seed(5)
    _, mask = balanced_edge_sample(
        data.edge_index.as_tensor(), data.s, data.bemap_balance
    )
    expected = conv.conv(
        data.x, data.edge_index.as_tensor()[:, mask], edge_attr=edge_attr[mask]
    )
    assert torch.allclose(out, expected, atol=1e-6)


def test_edge_level_argument_with_wrong_rows():
    data = prepared()
    conv = BeMapConv(GCNConv(8, 4))
    with pytest.raises(ValueError, match='one row per edge'):
        conv(data.x, data.edge_index, edge_weight=torch.ones(3))


@pytest.mark.parametrize('layout', ['coo', 'csr'])
def test_torch_sparse_adjacency(layout):
    data = prepared()
    plain = data.edge_index.as_tensor()
    convert = to_torch_csr_tensor if layout == 'csr' else to_torch_coo_tensor
    adj_t = convert(plain.flip(0), size=(60, 60))
    info = BeMapInfo(data.s, data.bemap_balance)
    conv = BeMapConv(GCNConv(8, 4))
    torch.manual_seed(3)
    out = conv(data.x, adj_t, bemap=info)
    # the same sample as on the edge list, up to the order of the edges
    reference = copy.deepcopy(conv)
    ordered = to_edge_index(adj_t)[0].flip(0)
    torch.manual_seed(3)
    sampled, _ = balanced_edge_sample(ordered, data.s, data.bemap_balance)
    assert torch.allclose(out, reference.conv(data.x, sampled), atol=1e-5)
    conv.eval()
    assert torch.equal(conv(data.x, adj_t), conv.conv(data.x, adj_t))


ADJACENCIES = {
    'coo': lambda index, n: to_torch_coo_tensor(index, size=(n, n)),
    'uncoalesced coo': lambda index, n: torch.sparse_coo_tensor(
        index, torch.ones(index.size(1)), (n, n)
    ),
    # as PyG's to_edge_index, which its layers call, leaves one
    'unsorted coo marked coalesced': lambda index, n: torch.sparse_coo_tensor(
        index, torch.ones(index.size(1)), (n, n)
    )._coalesced_(True),
    'csr': lambda index, n: to_torch_csr_tensor(index, size=(n, n)),
    'csc': lambda index, n: to_torch_csc_tensor(index, size=(n, n)),
}


@pytest.mark.parametrize('layout', ADJACENCIES)
def test_every_torch_sparse_layout_gives_the_layer_its_kept_entries(layout):
    data = prepared()  # repeated edges: an uncoalesced COO repeats entries
    n = data.num_nodes
    adj_t = ADJACENCIES[layout](data.edge_index.as_tensor().flip(0), n)
    coo = adj_t.layout == torch.sparse_coo
    index, value = (
        (adj_t._indices(), adj_t._values()) if coo else to_edge_index(adj_t)
    )
    marked = coo and adj_t.is_coalesced()
    info = BeMapInfo(data.s, data.bemap_balance)
    conv = BeMapConv(GraphConv(8, 4))
    torch.manual_seed(3)
    out = conv(data.x, adj_t, bemap=info)
    torch.manual_seed(3)  # the draw over the entries in their stored order
    _, kept = balanced_edge_sample(index.flip(0), data.s, data.bemap_balance)
    kept_adj = torch.sparse_coo_tensor(index[:, kept], value[kept], (n, n))
    assert torch.allclose(out, conv.conv(data.x, kept_adj.coalesce()))
    assert not coo or adj_t.is_coalesced() == marked  # as given
    conv.eval()
    assert torch.equal(conv(data.x, adj_t), conv.conv(data.x, adj_t))


COO_READERS = {  # layers that read a COO adjacency's indices
    'gat': lambda: GATConv(8, 4, add_self_loops=False),
    'gatv2': lambda: GATv2Conv(8, 4, add_self_loops=False),
    'transformer': lambda: TransformerConv(8, 4),
    'gen': lambda: GENConv(8, 4),
    'resgated': lambda: ResGatedGraphConv(8, 4),
    'le': lambda: LEConv(8, 4),
    'edge': lambda: EdgeConv(torch.nn.Linear(16, 4)),
}


@pytest.mark.parametrize('make', COO_READERS)
def test_a_coalesced_coo_sample_stays_marked_coalesced(make):
    # the kept entries of a coalesced adjacency are in order: a layer
    # that reads the indices of the sample it gets must find them marked
    data = prepared()
    n = data.num_nodes
    adj_t = to_torch_coo_tensor(data.edge_index.as_tensor().flip(0), size=n)
    torch.manual_seed(0)
    conv = BeMapConv(COO_READERS[make]())
    info = BeMapInfo(data.s, data.bemap_balance)
    conv(data.x, adj_t, bemap=info).sum().backward()
    conv.eval()
    assert torch.equal(conv(data.x, adj_t), conv.conv(data.x, adj_t))


def test_options_changed_after_a_call_take_effect():
    data = prepared(simple=True)
    plain = data.edge_index.as_tensor()
    conv = BeMapConv(GCNConv(8, 4)).eval()
    conv(data.x, data.edge_index)
    conv.conv.add_self_loops = False  # no longer what the GCN route does
    out = conv(data.x, data.edge_index)
    assert torch.allclose(out, conv.conv(data.x, plain), atol=1e-6)
    # 'edge_index' for a second derivative (the sparse route has none)
    conv = BeMapConv(SAGEConv(8, 4))
    conv(data.x, data.edge_index)
    conv.layout = 'edge_index'
    x = data.x.clone().requires_grad_()
    (grad,) = torch.autograd.grad(
        conv(x, data.edge_index).square().sum(), x, create_graph=True
    )
    grad.square().sum().backward()
    assert bool(x.grad.abs().sum() > 0)


def test_an_uncoalesced_coo_adjacency_with_gradients_names_the_fix():
    data = prepared()
    index = data.edge_index.as_tensor().flip(0)
    weight = torch.ones(index.size(1), requires_grad=True)
    adj_t = torch.sparse_coo_tensor(index, weight, (60, 60))
    conv = BeMapConv(GraphConv(8, 4))
    info = BeMapInfo(data.s, data.bemap_balance)
    with pytest.raises(ValueError, match=r"pass 'adj.coalesce\(\)'"):
        conv(data.x, adj_t, bemap=info)
    with torch.no_grad():  # no gradient to lose
        conv(data.x, adj_t, bemap=info)


def test_a_sparse_adjacency_rebuilt_every_epoch_with_one_bemap_info():
    # the last pass keeps the last adjacency alive: telling the new one
    # from it must not compare sparse tensors with ==
    data = prepared()
    plain = data.edge_index.as_tensor()
    info = BeMapInfo(data.s, data.bemap_balance)
    conv = BeMapConv(GCNConv(8, 4))
    for convert in [to_torch_csr_tensor, to_torch_coo_tensor] * 2:
        adj_t = convert(plain.flip(0), size=(60, 60))
        torch.manual_seed(3)
        out = conv(data.x, adj_t, bemap=info)
        ordered = to_edge_index(adj_t)[0].flip(0)
        torch.manual_seed(3)
        sampled, _ = balanced_edge_sample(ordered, data.s, data.bemap_balance)
        assert torch.allclose(out, conv.conv(data.x, sampled), atol=1e-5)


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_sparse_tensor_adjacency():
    data = prepared()
    plain = data.edge_index.as_tensor()
    adj_t = SparseTensor(row=plain[1], col=plain[0], sparse_sizes=(60, 60))
    info = BeMapInfo(data.s, data.bemap_balance)
    conv = BeMapConv(GCNConv(8, 4))
    torch.manual_seed(3)
    out = conv(data.x, adj_t, bemap=info)
    row, col, _ = adj_t.coo()
    torch.manual_seed(3)
    sampled, _ = balanced_edge_sample(
        torch.stack([col, row]), data.s, data.bemap_balance
    )
    assert torch.allclose(out, conv.conv(data.x, sampled), atol=1e-5)


def test_bad_graph_type():
    data = prepared()
    conv = BeMapConv(GCNConv(8, 4))
    with pytest.raises(ValueError, match='must be a BeMapInfo'):
        conv(data.x, data.edge_index, bemap=(data.s, data.bemap_balance))
    with pytest.raises(ValueError, match='must be a tensor'):
        conv(data.x, [[0, 1], [1, 0]], bemap=data.edge_index.bemap)


def test_generator_makes_samples_reproducible():
    data = prepared()
    outs = []
    for _ in range(2):
        conv = BeMapConv(
            Recorder(), generator=torch.Generator().manual_seed(11)
        )
        graph = copy.deepcopy(data.edge_index)
        conv(data.x, graph)
        outs.append(conv.conv.seen[0][0])
    assert torch.equal(*outs)


def test_reset_parameters_delegates():
    conv = BeMapConv(GCNConv(8, 4))
    before = conv.conv.lin.weight.clone()
    conv.reset_parameters()
    assert not torch.equal(before, conv.conv.lin.weight)


def test_the_inner_layers_attributes_read_through_the_wrapper():
    inner = GATConv(8, 16, heads=2)
    conv = BeMapConv(inner)
    assert (conv.heads, conv.in_channels, conv.out_channels) == (2, 8, 16)
    assert conv.lin is inner.lin and conv.bias is inner.bias
    assert conv.settings.beta == 0.25  # the wrapper's own come first
    with pytest.raises(AttributeError, match="layer 'GATConv' have no attri"):
        getattr(conv, 'no_such_attribute')  # noqa: B009
    again = pickle.loads(pickle.dumps(copy.deepcopy(conv)))
    assert again.heads == 2 and again.lin is again.conv.lin


def test_inputs_are_not_modified():
    data = prepared()
    snapshot = [data.x.clone(), data.edge_index.as_tensor().clone()]
    BeMapConv(GCNConv(8, 4))(data.x, data.edge_index)
    assert torch.equal(snapshot[0], data.x)
    assert torch.equal(snapshot[1], data.edge_index.as_tensor())


class TwiceModel(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = BeMapConv(Recorder())
        self.shared = BeMapConv(Recorder())

    def forward(self, x, edge_index):
        x = self.first(x, edge_index)
        x = self.shared(x, edge_index)
        return self.shared(x, edge_index)  # the same layer again


def test_inside_a_model_every_call_of_a_pass_shares_the_sample():
    data = prepared()
    model = to_bemap(TwiceModel())
    model(data.x, data.edge_index)
    model(data.x, data.edge_index)
    seen = model.first.conv.seen + model.shared.conv.seen
    first_pass = [seen[0], seen[2], seen[3]]
    second_pass = [seen[1], seen[4], seen[5]]
    assert all(torch.equal(e[0], first_pass[0][0]) for e in first_pass)
    assert all(torch.equal(e[0], second_pass[0][0]) for e in second_pass)
    assert not torch.equal(first_pass[0][0], second_pass[0][0])


def test_a_new_model_never_reuses_the_previous_models_sample():
    data = prepared()
    first, second = to_bemap(TwiceModel()), to_bemap(TwiceModel())
    torch.manual_seed(0)
    first(data.x, data.edge_index)
    first(data.x, data.edge_index)
    drawn_with_seed_0, last = (e[0] for e in first.first.conv.seen)
    assert not torch.equal(drawn_with_seed_0, last)
    torch.manual_seed(0)
    second(data.x, data.edge_index)  # a fresh draw, not the last sample
    assert torch.equal(second.first.conv.seen[0][0], drawn_with_seed_0)


def SpyConv(*args, **kwargs):
    r"""A GraphConv that records the graphs it is given."""
    return recording(GraphConv(*args, **kwargs))


def recording(conv):
    r""":obj:`conv`, recording the graphs it is given in :obj:`conv.graphs`
    by its own :obj:`forward` (a subclass, or a hook, would take the edge
    list: see same_on_sparse and honours)."""
    conv.graphs, forward = [], conv.forward

    def recording(x, edge_index, *args, **kwargs):
        conv.graphs.append(edge_index)
        return forward(x, edge_index, *args, **kwargs)

    conv.forward = recording
    return conv


@pytest.mark.parametrize('name', [n for n in CONVS if n != 'gat'])
def test_sparse_layout_computes_the_same_function(name):
    data = prepared(simple=True)
    outs, grads = [], []
    for layout in ('edge_index', 'sparse'):
        torch.manual_seed(0)
        conv = BeMapConv(CONVS[name](), layout=layout)
        torch.manual_seed(9)
        out = conv(data.x, data.edge_index)
        out.square().sum().backward()
        outs.append(out)
        grads.append([p.grad for p in conv.parameters()])
    assert torch.allclose(outs[0], outs[1], atol=1e-5)
    for a, b in zip(*grads):
        assert torch.allclose(a, b, atol=1e-4)


def test_auto_layout_picks_sparse_for_fused_layers_only():
    data = prepared(simple=True)
    gcn = BeMapConv(SpyConv(8, 4))
    gcn(data.x, data.edge_index)
    assert (
        not isinstance(gcn.conv.graphs[-1], torch.Tensor)
        or gcn.conv.graphs[-1].layout != torch.strided
    )
    gcn(data.x, data.edge_index, edge_weight=torch.rand(data.num_edges))
    assert isinstance(gcn.conv.graphs[-1], torch.Tensor)
    assert gcn.conv.graphs[-1].dim() == 2 and gcn.conv.graphs[-1].size(0) == 2
    plain = BeMapConv(SpyConv(8, 4), layout='edge_index')
    plain(data.x, data.edge_index)
    assert plain.conv.graphs[-1].size(0) == 2
    assert not getattr(GATConv(8, 4), 'fuse', False)
    if WITH_TORCH_SPARSE:  # RowNormConv says it computes the same
        inner = recording(RowNormConv(8, 4))
        BeMapConv(inner)(data.x, data.edge_index)
        assert isinstance(inner.graphs[-1], SparseTensor)
    with pytest.raises(ValueError, match='layout'):
        BeMapConv(GCNConv(8, 4), layout='dense')
    conv = BeMapConv(GCNConv(8, 4))
    conv.layout = 'edge-index'  # set after construction: no silent 'auto'
    for mode in (conv.train, conv.eval):
        mode()
        with pytest.raises(ValueError, match="got 'edge-index'"):
            conv(data.x, data.edge_index)


def test_sparse_adjacency_is_shared_by_the_layers_of_a_pass():
    data = prepared(simple=True)

    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = BeMapConv(SpyConv(8, 8))
            self.b = BeMapConv(SpyConv(8, 8))

        def forward(self, x, edge_index):
            return self.b(self.a(x, edge_index), edge_index)

    model = Two()
    model(data.x, data.edge_index)
    assert model.a.conv.graphs[0] is model.b.conv.graphs[0]
    model(data.x, data.edge_index)
    assert model.a.conv.graphs[1] is not model.a.conv.graphs[0]


def test_repeated_edges_take_the_edge_list_in_training():
    data = prepared()  # a multigraph: the sparse path is not used
    gcn = BeMapConv(SpyConv(8, 4))
    gcn(data.x, data.edge_index)
    assert gcn.conv.graphs[-1].layout == torch.strided
    assert gcn.conv.graphs[-1].size(0) == 2


def test_nested_bemap_conv_is_refused():
    with pytest.raises(ValueError, match='already a BeMapConv'):
        BeMapConv(BeMapConv(GCNConv(8, 4)))


class ScaledMessages(GCNConv):
    r"""A subclass whose messages the sparse path would skip."""

    def message(self, x_j, edge_weight):
        return 2 * super().message(x_j, edge_weight)


def test_subclasses_and_hooked_layers_take_the_edge_list():
    assert same_on_sparse(GCNConv(8, 4))
    assert not same_on_sparse(ScaledMessages(8, 4))
    assert not same_on_sparse(GCNConv(8, 4, improved=True))
    hooked = GCNConv(8, 4)
    hooked.register_message_forward_hook(lambda module, inputs, out: out * 2)
    data = prepared(simple=True)
    for inner in (ScaledMessages(8, 4), hooked):
        expected = inner(data.x, data.edge_index.as_tensor())
        out = BeMapConv(copy.deepcopy(inner)).eval()(data.x, data.edge_index)
        assert torch.equal(out, expected)
