import torch

from pyg_bemap import RowNormConv


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
