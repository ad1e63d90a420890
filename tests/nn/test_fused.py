import pytest
import torch
from torch_geometric.nn import GATConv, GCNConv
from torch_geometric.typing import WITH_TORCH_SPARSE, torch_sparse
from torch_geometric.utils import (
    remove_self_loops,
    sort_edge_index,
    to_torch_csr_tensor,
    to_undirected,
)

import pyg_bemap.nn.fused as fused_module
from pyg_bemap import BalanceAwareSampling, BeMapConv, RowNormConv
from pyg_bemap.nn.fused import FusedGATConv, FusedGCNConv, csr_matmul
from pyg_bemap.utils.layout import transposed_adjacency
from tests.conftest import random_graph

PAIRS = {
    'gcn': (lambda: GCNConv(8, 6), lambda: FusedGCNConv(8, 6)),
    'gcn-widening': (lambda: GCNConv(8, 24), lambda: FusedGCNConv(8, 24)),
    'gcn-cached': (
        lambda: GCNConv(8, 6, cached=True),
        lambda: FusedGCNConv(8, 6, cached=True),
    ),
    'gat': (lambda: GATConv(8, 6), lambda: FusedGATConv(8, 6)),
    'gat-2-heads': (
        lambda: GATConv(8, 6, heads=2),
        lambda: FusedGATConv(8, 6, heads=2),
    ),
    'gat-mean': (
        lambda: GATConv(8, 6, heads=3, concat=False),
        lambda: FusedGATConv(8, 6, heads=3, concat=False),
    ),
}


def graph(num_nodes=40, num_edges=300, seed=0):
    gen = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, num_nodes, (2, num_edges), generator=gen)
    edge_index = remove_self_loops(to_undirected(edge_index))[0]
    return torch.randn(num_nodes, 8, generator=gen), edge_index


def count_calls(monkeypatch, module, name):
    r"""Replaces :obj:`module.name` by a wrapper that records each call."""
    calls, original = [], getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def matched(name):
    r"""PyG's layer and the fused one of :obj:`PAIRS[name]`, same weights."""
    make_reference, make_fused = PAIRS[name]
    torch.manual_seed(0)
    reference, fused = make_reference(), make_fused()
    fused.load_state_dict(reference.state_dict())
    return reference, fused


def run(conv, x, graph):
    x = x.clone().requires_grad_()
    out = conv(x, graph)
    (out * torch.linspace(-1, 1, out.numel()).view_as(out)).sum().backward()
    return out, x.grad, [p.grad for p in conv.parameters()]


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
@pytest.mark.parametrize('name', list(PAIRS))
def test_outputs_and_gradients_equal_pygs(name):
    x, edge_index = graph()
    reference, fused = matched(name)
    expected = run(reference, x, edge_index)
    adj = transposed_adjacency(edge_index, x.size(0))
    for _ in range(2):  # the second call reuses caches (cached GCN, CSC)
        got = run(fused, x, adj)
        fused.zero_grad()
        torch.testing.assert_close(got[0], expected[0], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(got[1], expected[1], rtol=1e-4, atol=1e-5)
        for a, b in zip(got[2], expected[2]):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_csr_matmul_gradients_match_a_dense_product():
    from torch_sparse import SparseTensor

    gen = torch.Generator().manual_seed(1)
    dense = torch.rand(7, 5, generator=gen) * (
        torch.rand(7, 5, generator=gen) < 0.5
    )
    value = dense[dense != 0].clone().requires_grad_()
    row, col = dense.nonzero().t()
    adj = SparseTensor(row=row, col=col, value=value, sparse_sizes=(7, 5))
    x = torch.randn(5, 3, generator=gen, requires_grad=True)
    weight = torch.randn(7, 3, generator=gen)
    (csr_matmul(adj, x) * weight).sum().backward()
    dense_value = dense.clone().requires_grad_()
    x_ref = x.detach().clone().requires_grad_()
    (dense_value @ x_ref * weight).sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad)
    torch.testing.assert_close(value.grad, dense_value.grad[dense != 0])


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_csr_matmul_with_a_diagonal():
    from torch_sparse import SparseTensor

    gen = torch.Generator().manual_seed(2)
    dense = torch.rand(6, 6, generator=gen) * (
        torch.rand(6, 6, generator=gen) < 0.5
    )
    row, col = dense.nonzero().t()
    adj = SparseTensor(
        row=row, col=col, value=dense[row, col], sparse_sizes=(6, 6)
    )
    diagonal = torch.rand(6, 1, generator=gen)
    x = torch.randn(6, 3, generator=gen, requires_grad=True)
    (csr_matmul(adj, x, diagonal) ** 2).sum().backward()
    x_ref = x.detach().clone().requires_grad_()
    ((dense + torch.diag(diagonal.view(-1))) @ x_ref).pow(2).sum().backward()
    torch.testing.assert_close(x.grad, x_ref.grad)
    with pytest.raises(ValueError, match="'diagonal' must be a column"):
        csr_matmul(adj, x, torch.rand(6))
    edge_index = torch.stack([row, col])
    with pytest.raises(ValueError, match="'diagonal' needs a SparseTensor"):
        csr_matmul(to_torch_csr_tensor(edge_index, size=(6, 6)), x, diagonal)


@pytest.mark.parametrize('name', ['gcn', 'gat-2-heads'])
def test_torch_sparse_inputs_equal_pygs(name):
    x, edge_index = graph()
    reference, fused = matched(name)
    expected = run(reference, x, edge_index)
    adj = to_torch_csr_tensor(edge_index.flip(0), size=(x.size(0),) * 2)
    got = run(fused, x, adj)
    torch.testing.assert_close(got[0], expected[0], rtol=1e-5, atol=1e-5)
    for a, b in zip(got[2], expected[2]):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


def test_edge_lists_take_pygs_path():
    x, edge_index = graph()
    torch.manual_seed(0)
    reference, fused = GATConv(8, 6), FusedGATConv(8, 6)
    fused.load_state_dict(reference.state_dict())
    assert torch.equal(reference(x, edge_index), fused(x, edge_index))
    assert fused.fuse and not reference.fuse


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_bemap_picks_the_sparse_path_with_the_same_result():
    data = BalanceAwareSampling()(random_graph(60, 600, 2, 0, simple=True))
    outs, graphs = [], []
    for layout in ('edge_index', 'auto'):
        torch.manual_seed(0)
        conv = BeMapConv(FusedGATConv(8, 4, heads=2), layout=layout)
        conv.conv.register_forward_pre_hook(lambda m, a: graphs.append(a[1]))
        torch.manual_seed(9)
        out = conv(data.x, data.edge_index)
        outs.append(out)
    assert isinstance(graphs[1], torch_sparse.SparseTensor)
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_layers_share_the_normalisation_of_a_graph(monkeypatch):
    calls = count_calls(monkeypatch, fused_module, '_gcn_norm_off_diagonal')
    sorts, csr2csc = [], torch_sparse.SparseStorage.csr2csc

    def sorting_csr2csc(storage):
        sorts.append(not storage.has_csr2csc())  # a sort, not a cache hit
        return csr2csc(storage)

    monkeypatch.setattr(torch_sparse.SparseStorage, 'csr2csc', sorting_csr2csc)
    x, edge_index = graph()
    reference, fused = matched('gcn')
    second = FusedGCNConv(6, 6)
    full = transposed_adjacency(edge_index, x.size(0))
    expected = reference(x, edge_index)
    for _ in range(3):  # alternating modes, as in training with evaluation
        fused.train(), second.train()
        sample = transposed_adjacency(edge_index[:, ::2], x.size(0))
        x_grad = x.clone().requires_grad_()
        second(fused(x_grad, sample), sample).sum().backward()
        fused.eval()
        torch.testing.assert_close(fused(x, full), expected)
    # each sample once for both layers, the full graph once
    assert len(calls) == 3 + 1
    assert sum(sorts) == 3 and len(sorts) == 6  # one sort for two layers
    improved = FusedGCNConv(8, 6, improved=True)
    improved(x, full)  # other settings: their own normalisation
    assert len(calls) == 5


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
@pytest.mark.parametrize(
    'case', ['self-loops', 'improved', 'weights', 'no-self-loops', 'hook']
)
def test_every_gcn_setting_equals_pygs(case):
    from torch_sparse import SparseTensor

    x, edge_index = graph()
    n = x.size(0)
    weight = None
    if case == 'self-loops':
        edge_index = torch.cat(
            [edge_index, torch.arange(0, n, 3).repeat(2, 1)], 1
        )
    if case == 'weights':
        weight = torch.rand(edge_index.size(1))
    kwargs = {
        'improved': case == 'improved',
        'add_self_loops': case != 'no-self-loops',
    }
    torch.manual_seed(0)
    reference = GCNConv(8, 6, **kwargs)
    fused = FusedGCNConv(8, 6, **kwargs)
    fused.load_state_dict(reference.state_dict())
    if case == 'hook':
        seen = []
        fused.register_propagate_forward_hook(lambda *args: seen.append(1))
    adj = SparseTensor.from_edge_index(
        edge_index.flip(0), weight, sparse_sizes=(n, n)
    )
    expected = run(reference, x, adj)  # PyG's own sparse path
    got = run(fused, x, adj)
    for a, b in zip(
        got[:2] + tuple(got[2]), expected[:2] + tuple(expected[2])
    ):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)
    if case == 'hook':
        assert seen  # the hook ran: PyG's path


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_values_that_need_gradients_are_normalised_every_pass(monkeypatch):
    import torch_geometric.nn.conv.gcn_conv as gcn_module
    from torch_sparse import SparseTensor

    calls = count_calls(monkeypatch, gcn_module, 'gcn_norm')
    x, edge_index = graph()
    weight = torch.rand(edge_index.size(1), requires_grad=True)
    row, col = sort_edge_index(edge_index.flip(0))  # target-major
    adj = SparseTensor(  # the leaf 'weight' as its values
        row=row, col=col, value=weight, sparse_sizes=(x.size(0),) * 2
    )
    assert adj.storage.value() is weight
    conv = FusedGCNConv(8, 6)
    for _ in range(2):  # a remembered normalisation would fail here
        conv(x, adj).sum().backward()
    assert len(calls) == 2 and weight.grad is not None


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_gat_adds_self_loops_once_per_mode_for_the_same_graph(monkeypatch):
    import torch_sparse

    calls = count_calls(monkeypatch, torch_sparse, 'set_diag')
    x, edge_index = graph()
    torch.manual_seed(0)
    reference, fused = GATConv(8, 6, heads=2), FusedGATConv(8, 6, heads=2)
    fused.load_state_dict(reference.state_dict())
    full = transposed_adjacency(edge_index, x.size(0))
    reference.eval()
    expected = reference(x, edge_index)
    for _ in range(3):
        fused.train()
        fused(x, full).sum().backward()
        fused.eval()
        torch.testing.assert_close(fused(x, full), expected)
    assert len(calls) == 1  # once for training and evaluation
    assert fused.add_self_loops


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_fused_gat_never_changes_itself_in_forward(monkeypatch):
    seen = []
    forward = GATConv.forward

    def watching(module, *args, **kwargs):
        seen.append(fused.add_self_loops)  # the layer, during its forward
        return forward(module, *args, **kwargs)

    monkeypatch.setattr(GATConv, 'forward', watching)
    x, edge_index = graph()
    fused = FusedGATConv(8, 6, heads=2)
    state = dict(vars(fused))
    fused(x, transposed_adjacency(edge_index, x.size(0))).sum().backward()
    assert seen == [True] and vars(fused) == state


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_bemap_samples_come_with_their_transpose(monkeypatch):
    sorts, csr2csc = [], torch_sparse.SparseStorage.csr2csc

    def sorting_csr2csc(storage):
        sorts.append(not storage.has_csr2csc())
        return csr2csc(storage)

    monkeypatch.setattr(torch_sparse.SparseStorage, 'csr2csc', sorting_csr2csc)
    data = BalanceAwareSampling()(random_graph(60, 600, 2, 0, simple=True))
    first = BeMapConv(RowNormConv(8, 4))  # GCN layers: test_gcn_propagation
    second = BeMapConv(RowNormConv(4, 4))
    for _ in range(3):
        x = data.x.clone().requires_grad_()
        second(first(x, data.edge_index), data.edge_index).sum().backward()
    assert len(sorts) == 6 and not any(sorts)  # two layers, three passes


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_a_widening_layer_propagates_its_input(monkeypatch):
    # (A X) W: the product of the graph with an input that needs no gradient
    # records no backward pass; a narrowing layer propagates X W, which does
    x, edge_index = graph()
    adj = transposed_adjacency(edge_index, x.size(0))
    calls = count_calls(monkeypatch, fused_module._CSRMatmul, 'apply')
    FusedGCNConv(8, 24)(x, adj).sum().backward()
    assert not calls
    FusedGCNConv(8, 4)(x, adj).sum().backward()
    assert len(calls) == 1


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_the_normalisation_lives_on_the_graph_only():
    x, edge_index = graph()
    adj = transposed_adjacency(edge_index, x.size(0))
    FusedGCNConv(8, 6)(x, adj)
    assert ('gcn_norm', x.dtype, False) in adj.__dict__[fused_module.MEMO_ATTR]
    assert (
        not [  # no module-level memo of graphs
            name
            for name, value in vars(fused_module).items()
            if isinstance(value, dict) and not name.startswith('__')
        ]
    )
