import pytest
import torch

import pyg_bemap.utils.layout as layout
from pyg_bemap.utils.layout import transposed_adjacency


@pytest.mark.parametrize('with_torch_sparse', [True, False])
def test_transposed_adjacency_aggregates_sources_into_targets(
    monkeypatch, with_torch_sparse
):
    if with_torch_sparse and not layout.WITH_TORCH_SPARSE:
        pytest.skip('needs torch-sparse')
    monkeypatch.setattr(layout, 'WITH_TORCH_SPARSE', with_torch_sparse)
    edge_index = torch.tensor([[1, 2, 0, 2], [0, 0, 1, 1]])  # sorted
    x = torch.tensor([[1.0], [10.0], [100.0]])
    for is_sorted in (True, False):
        adj_t = transposed_adjacency(edge_index, 3, is_sorted=is_sorted)
        if with_torch_sparse:
            out = adj_t.matmul(x)
        else:
            assert adj_t.layout == torch.sparse_csr
            out = adj_t @ x
        assert out.view(-1).tolist() == [110.0, 101.0, 0.0]
