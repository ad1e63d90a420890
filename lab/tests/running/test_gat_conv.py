import pytest
import torch
from torch_geometric.nn import GATConv
from torch_geometric.typing import WITH_TORCH_SPARSE, torch_sparse
from torch_geometric.utils import (
    remove_self_loops,
    to_torch_csr_tensor,
    to_undirected,
)

from pyg_bemap import BalanceAwareSampling, BeMapConv
from pyg_bemap_lab.running.gat_conv import FusedGATConv
from tests.conftest import random_graph

PAIRS = {
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


def adjacency(edge_index, num_nodes):
    r"""The transposed adjacency PyG's layers take (targets as rows)."""
    return torch_sparse.SparseTensor(
        row=edge_index[1], col=edge_index[0], sparse_sizes=(num_nodes,) * 2
    )


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
    adj = adjacency(edge_index, x.size(0))
    for _ in range(2):  # the second call reuses caches (cached GCN, CSC)
        got = run(fused, x, adj)
        fused.zero_grad()
        torch.testing.assert_close(got[0], expected[0], rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(got[1], expected[1], rtol=1e-4, atol=1e-5)
        for a, b in zip(got[2], expected[2]):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize('name', ['gat', 'gat-2-heads'])
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
        forward = conv.conv.forward  # recorded by itself: a hook would see
        # the layer's own call on the edges, and so take the edge list

        def recording(x, edge_index, forward=forward, **kwargs):
            graphs.append(edge_index)
            return forward(x, edge_index, **kwargs)

        conv.conv.forward = recording
        torch.manual_seed(9)
        out = conv(data.x, data.edge_index)
        outs.append(out)
    assert isinstance(graphs[1], torch_sparse.SparseTensor)
    torch.testing.assert_close(outs[0], outs[1], rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_gat_on_a_sparse_adjacency_in_both_modes():
    x, edge_index = graph()
    torch.manual_seed(0)
    reference, fused = GATConv(8, 6, heads=2), FusedGATConv(8, 6, heads=2)
    fused.load_state_dict(reference.state_dict())
    full = adjacency(edge_index, x.size(0))
    reference.eval()
    expected = reference(x, edge_index)
    for _ in range(3):
        fused.train()
        fused(x, full).sum().backward()
        fused.eval()
        torch.testing.assert_close(fused(x, full), expected)
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
    fused(x, adjacency(edge_index, x.size(0))).sum().backward()
    assert seen == [True] and vars(fused) == state
