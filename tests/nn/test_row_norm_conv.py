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
