import pytest
import torch
from torch_geometric.typing import (
    WITH_TORCH_SPARSE,
    SparseTensor,
    torch_sparse,
)

from pyg_bemap import BalanceAwareSampling, BeMapConv, RowNormConv
from tests.conftest import random_graph


def test_row_norm_conv_is_the_mean_over_node_and_neighbours():
    conv = RowNormConv(4, 3)
    assert str(conv) == 'RowNormConv(4, 3)'
    x = torch.randn(4, 4)
    # 1 -> 0, 2 -> 0, 0 -> 0 (self-loop, replaced), 3 isolated
    edge_index = torch.tensor([[1, 2, 0], [0, 0, 0]])
    out = conv(x, edge_index)
    h = conv.lin(x)
    expected = torch.stack([(h[0] + h[1] + h[2]) / 3, h[1], h[2], h[3]])
    assert torch.allclose(out, expected, atol=1e-6)
    out.sum().backward()
    assert conv.lin.weight.grad is not None


def test_both_orders_compute_the_same_function():
    torch.manual_seed(0)
    wide = RowNormConv(3, 5)  # aggregates first
    x = torch.randn(6, 3)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 5, 5], [1, 2, 3, 4, 5, 0, 2]])
    h = wide.lin(x)
    src, dst = edge_index
    expected = h.clone()
    for i in range(6):
        members = [i] + src[dst == i].tolist()
        expected[i] = h[members].mean(0)
    assert torch.allclose(wide(x, edge_index), expected, atol=1e-6)


def graph_with_loops_and_repeats():
    # a self-loop (2 -> 2) and a repeated edge (1 -> 0 twice)
    edge_index = torch.tensor(
        [[1, 1, 2, 2, 3, 4, 0, 5], [0, 0, 1, 2, 2, 3, 4, 4]]
    )
    return edge_index, 6


@pytest.mark.parametrize('channels', [(3, 5), (5, 3)])  # both orders
@pytest.mark.parametrize('layout', ['torch_sparse', 'torch.sparse'])
def test_sparse_adjacency_gives_the_edge_list_result(channels, layout):
    if layout == 'torch_sparse' and not WITH_TORCH_SPARSE:
        pytest.skip('needs torch_sparse')
    torch.manual_seed(0)
    conv = RowNormConv(*channels)
    edge_index, n = graph_with_loops_and_repeats()
    if layout == 'torch_sparse':
        adj = SparseTensor.from_edge_index(
            edge_index.flip(0), sparse_sizes=(n, n)
        ).set_value(torch.rand(edge_index.size(1)), layout='coo')  # ignored
    else:  # keeps the repeated edge as two entries, as BeMap's samples
        adj = torch.sparse_coo_tensor(
            edge_index.flip(0), torch.rand(edge_index.size(1)), (n, n)
        )
    x = torch.randn(n, channels[0])
    xs = [x.clone().requires_grad_() for _ in range(2)]
    expected, out = conv(xs[0], edge_index), conv(xs[1], adj)
    torch.testing.assert_close(out, expected)
    grads = []
    for result, x_ in ((expected, xs[0]), (out, xs[1])):
        conv.zero_grad()
        result.square().sum().backward()
        grads.append((x_.grad, conv.lin.weight.grad.clone()))
    for a, b in zip(*grads):
        torch.testing.assert_close(a, b)


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
def test_bemap_samples_come_with_their_transpose(monkeypatch):
    sorts, csr2csc = [], torch_sparse.SparseStorage.csr2csc

    def sorting_csr2csc(storage):
        sorts.append(not storage.has_csr2csc())
        return csr2csc(storage)

    monkeypatch.setattr(torch_sparse.SparseStorage, 'csr2csc', sorting_csr2csc)
    data = BalanceAwareSampling()(random_graph(60, 600, 2, 0, simple=True))
    first = BeMapConv(RowNormConv(8, 4))
    second = BeMapConv(RowNormConv(4, 4))
    for _ in range(3):
        x = data.x.clone().requires_grad_()
        second(first(x, data.edge_index), data.edge_index).sum().backward()
    assert len(sorts) == 6 and not any(sorts)  # two layers, three passes


@pytest.mark.skipif(not WITH_TORCH_SPARSE, reason='needs torch-sparse')
@pytest.mark.parametrize('half', [torch.bfloat16, torch.float16])
@pytest.mark.parametrize('autocast', [False, True])
def test_half_precision_on_a_sparse_tensor_as_on_the_edge_list(half, autocast):
    # torch.sparse's CPU products take no half precision: the edge list's way
    torch.manual_seed(0)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 5, 5], [1, 2, 3, 4, 5, 0, 2]])
    adj_t = SparseTensor(
        row=edge_index[1], col=edge_index[0], sparse_sizes=(6, 6)
    )
    for channels in ((3, 5), (5, 3)):  # both orders of product and map
        conv, x = RowNormConv(*channels), torch.randn(6, channels[0])
        if not autocast:
            conv, x = conv.to(half), x.to(half)
        with torch.autocast('cpu', dtype=half, enabled=autocast):
            expected = conv(x, edge_index)
            out = conv(x, adj_t)
        assert out.dtype == expected.dtype == half
        assert torch.equal(out, expected)
