r"""The promise of BeMapConv, for every conv family, layout and floating
dtype, with and without torch-sparse (the suite runs in both installs):

* in evaluation, the output is the wrapped conv's on the same inputs, for
  every edge list PyG accepts (self-loops, repeated edges, any order,
  isolated nodes, edge weights, edge attributes);
* in training, every layout computes what the inner conv computes on the
  kept edges of the same sample, with outputs and gradients in the input's
  dtype.

``scripts/eval_promise.py`` prints the measured differences as a table.
"""

import copy

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch_geometric.data import Data
from torch_geometric.nn import (
    ChebConv,
    GATConv,
    GATv2Conv,
    GCNConv,
    GENConv,
    GINConv,
    GraphConv,
    LEConv,
    ResGatedGraphConv,
    SAGEConv,
    SGConv,
    TAGConv,
    TransformerConv,
)

from pyg_bemap import BalanceAwareSampling, BeMapConv, RowNormConv
from pyg_bemap.nn.bemap_conv import LAYOUTS

IN, OUT = 6, 5

#: name -> (layer maker, the edge-level argument it takes or None)
FAMILIES = {
    'gcn': (lambda: GCNConv(IN, OUT), 'edge_weight'),
    'gcn-improved': (lambda: GCNConv(IN, OUT, improved=True), 'edge_weight'),
    'gcn-no-loops': (
        lambda: GCNConv(IN, OUT, add_self_loops=False),
        'edge_weight',
    ),
    'gcn-unnormalised': (
        lambda: GCNConv(IN, OUT, normalize=False),
        'edge_weight',
    ),
    'sg': (lambda: SGConv(IN, OUT, K=2), 'edge_weight'),
    'tag': (lambda: TAGConv(IN, OUT, K=2), 'edge_weight'),
    'cheb': (lambda: ChebConv(IN, OUT, K=2), 'edge_weight'),
    'sage-mean': (lambda: SAGEConv(IN, OUT), None),
    'sage-max': (lambda: SAGEConv(IN, OUT, aggr='max'), None),
    'graph': (lambda: GraphConv(IN, OUT), 'edge_weight'),
    'gin': (lambda: GINConv(torch.nn.Linear(IN, OUT)), None),
    'le': (lambda: LEConv(IN, OUT), 'edge_weight'),
    'gat': (lambda: GATConv(IN, OUT, heads=2), None),
    'gat-edge-attr': (lambda: GATConv(IN, OUT, edge_dim=3), 'edge_attr'),
    'gatv2': (lambda: GATv2Conv(IN, OUT), None),
    'transformer': (lambda: TransformerConv(IN, OUT, edge_dim=3), 'edge_attr'),
    'res-gated': (lambda: ResGatedGraphConv(IN, OUT), None),
    'gen': (lambda: GENConv(IN, OUT), None),
    'row': (lambda: RowNormConv(IN, OUT), None),
}
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
#: Tolerances of the sparse path (float sums in another order).
TOLERANCE = {
    torch.float16: 1e-2,
    torch.bfloat16: 5e-2,
    torch.float32: 1e-5,
    torch.float64: 1e-12,
}
#: Graph cases of the table in scripts/eval_promise.py.
CASES = (
    'simple',
    'self-loops',
    'repeated',
    'unsorted',
    'isolated',
    'edge-level',
)


def build_graph(
    num_nodes,
    pairs,
    sens,
    loops=(),
    repeats=0,
    isolated=0,
    shuffle_seed=None,
):
    r"""A graph of :obj:`num_nodes` nodes (the last :obj:`isolated` of them
    without edges), the given (source, target) pairs, self-loops at
    :obj:`loops` and the first :obj:`repeats` pairs again, transformed."""
    total = num_nodes + isolated
    edges = torch.tensor(pairs, dtype=torch.long).view(-1, 2).t()
    loops = torch.tensor(list(loops), dtype=torch.long).repeat(2, 1)
    edges = torch.cat([edges, loops.view(2, -1), edges[:, :repeats]], 1)
    if shuffle_seed is not None:
        perm = torch.randperm(
            edges.size(1),
            generator=torch.Generator().manual_seed(shuffle_seed),
        )
        edges = edges[:, perm]
    gen = torch.Generator().manual_seed(len(pairs))
    data = Data(
        x=torch.randn(total, IN, generator=gen),
        edge_index=edges,
        s=torch.tensor(list(sens) + [0, 1] * isolated)[:total],
        num_nodes=total,
    )
    return BalanceAwareSampling()(data)


def case_graph(case, seed=0):
    r"""One graph of a named case (for the table)."""
    gen = torch.Generator().manual_seed(seed)
    num_nodes = 30
    src = torch.randint(0, num_nodes, (150,), generator=gen)
    dst = torch.randint(0, num_nodes, (150,), generator=gen)
    keep = src != dst
    pairs = torch.unique(torch.stack([src[keep], dst[keep]], 1), dim=0)
    sens = torch.randint(0, 2, (num_nodes,), generator=gen).tolist()
    sens[:2] = [0, 1]
    return build_graph(
        num_nodes,
        pairs.tolist(),
        sens,
        loops=range(0, num_nodes, 4) if case == 'self-loops' else (),
        repeats=40 if case == 'repeated' else 0,
        isolated=5 if case == 'isolated' else 0,
        shuffle_seed=seed if case == 'unsorted' else None,
    )


def edge_level(name, data, dtype, wanted=True, seed=0):
    r"""The edge-level keyword argument of a family when :obj:`wanted` or
    when the layer needs it (edge attributes), else none."""
    kind = FAMILIES[name][1]
    if not wanted and kind != 'edge_attr':
        return {}
    gen = torch.Generator().manual_seed(seed)
    num_edges = data.edge_index.size(1)
    if kind == 'edge_weight':
        return {kind: torch.rand(num_edges, generator=gen).to(dtype) + 0.1}
    if kind == 'edge_attr':
        return {kind: torch.randn(num_edges, 3, generator=gen).to(dtype)}
    return {}


def inner_layer(name, dtype):
    torch.manual_seed(0)
    return FAMILIES[name][0]().to(dtype)


def eval_difference(name, data, layout, dtype, extra):
    r"""Max |BeMapConv - inner conv| in evaluation, or the name of the
    error both raise (the inner conv cannot run in this dtype)."""
    inner = inner_layer(name, dtype).eval()
    x = data.x.to(dtype)
    plain = data.edge_index.as_tensor()
    try:
        expected = inner(x, plain, **extra)
    except (RuntimeError, NotImplementedError) as error:
        wrapped = BeMapConv(inner, layout=layout).eval()
        with pytest.raises(type(error)):
            wrapped(x, data.edge_index, **extra)
        return type(error).__name__
    out = BeMapConv(copy.deepcopy(inner), layout=layout).eval()(
        x, data.edge_index, **extra
    )
    assert out.dtype == expected.dtype and out.shape == expected.shape
    return (out.double() - expected.double()).abs().max().item()


def train_difference(name, data, layout, dtype, extra):
    r"""Max |layout - edge list| of a training pass on the same sample
    (after checking dtypes of outputs and gradients), or the name of the
    error the edge list raises."""
    outs = []
    for each in ('edge_index', layout):
        conv = BeMapConv(
            inner_layer(name, dtype),
            layout=each,
            generator=torch.Generator().manual_seed(3),
        )
        x = data.x.detach().to(dtype).clone().requires_grad_()
        try:
            out = conv(x, data.edge_index, **extra)
        except (RuntimeError, NotImplementedError) as error:
            assert each == 'edge_index', error  # the sparse path never fails
            return type(error).__name__
        out.float().square().sum().backward()
        # (no gradient reaches x or a weight that no edge uses, e.g. on a
        # graph without edges)
        grads = [x.grad] + [p.grad for p in conv.parameters()]
        assert out.dtype == dtype
        assert all(g.dtype == dtype for g in grads if g is not None)
        outs.append(out.detach().double())
    return (outs[0] - outs[1]).abs().max().item()


@st.composite
def graphs(draw):
    num_nodes = draw(st.integers(2, 16))
    node = st.integers(0, num_nodes - 1)
    pairs = draw(st.lists(st.tuples(node, node), max_size=60))
    pairs = [p for p in pairs if p[0] != p[1]]
    sens = draw(
        st.lists(st.integers(0, 1), min_size=num_nodes, max_size=num_nodes)
    )
    sens[:2] = [0, 1]  # both groups present
    return build_graph(
        num_nodes,
        pairs,
        sens,
        loops=draw(st.lists(node, max_size=4)),
        repeats=draw(st.integers(0, 5)),
        isolated=draw(st.integers(0, 3)),
        shuffle_seed=draw(st.none() | st.integers(0, 100)),
    )


@given(
    data=graphs(),
    name=st.sampled_from(sorted(FAMILIES)),
    layout=st.sampled_from(LAYOUTS),
    dtype=st.sampled_from(DTYPES),
    with_edge_level=st.booleans(),
)
def test_eval_is_the_inner_conv_and_training_keeps_the_dtype(
    data, name, layout, dtype, with_edge_level
):
    extra = edge_level(name, data, dtype, wanted=with_edge_level)
    diff = eval_difference(name, data, layout, dtype, extra)
    if isinstance(diff, float):
        assert diff <= TOLERANCE[dtype] * 10
    diff = train_difference(name, data, layout, dtype, extra)
    if isinstance(diff, float):
        assert diff <= TOLERANCE[dtype] * 10


@pytest.mark.parametrize('case', CASES)
@pytest.mark.parametrize('name', ['gcn', 'gcn-improved', 'sg', 'sage-mean'])
def test_named_cases_in_float64(case, name):
    r"""The cases of the issue, in float64 (which crashed before)."""
    data = case_graph(case)
    extra = edge_level(name, data, torch.float64, case == 'edge-level')
    for layout in LAYOUTS:
        assert (
            eval_difference(name, data, layout, torch.float64, extra) < 1e-12
        )
        assert (
            train_difference(name, data, layout, torch.float64, extra) < 1e-12
        )
