import pytest
import torch

import pyg_bemap.utils.layout as layout
from pyg_bemap.utils.layout import MaskedAdjacency, transposed_adjacency


@pytest.fixture(params=[True, False], ids=['torch-sparse', 'torch.sparse'])
def with_torch_sparse(request, monkeypatch):
    r"""Runs a test with torch-sparse's layout (when installed) and with the
    :obj:`torch.sparse` fallback."""
    if request.param and not layout.WITH_TORCH_SPARSE:
        pytest.skip('needs torch-sparse')
    monkeypatch.setattr(layout, 'WITH_TORCH_SPARSE', request.param)
    return request.param


def test_transposed_adjacency_aggregates_sources_into_targets(
    with_torch_sparse,
):
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


def test_masked_adjacency_equals_a_sorted_build(with_torch_sparse):
    gen = torch.Generator().manual_seed(0)
    edge_index = torch.randint(0, 30, (2, 400), generator=gen)
    edge_index[:, :10] = torch.arange(10).repeat(2, 1)  # self-loops
    masked = MaskedAdjacency(edge_index, 30)
    original = edge_index.clone()
    for _ in range(3):
        mask = torch.rand(400, generator=gen) < 0.4
        got = masked(mask)
        kept = edge_index[:, mask]
        kept = kept[:, kept[0] != kept[1]]
        target, source = kept[1], kept[0]
        order = torch.sort(target * 30 + source, stable=True)[1]
        expected_row, expected_col = target[order], source[order]
        if not with_torch_sparse:
            assert got.layout == torch.sparse_csr
            row = torch.repeat_interleave(got.crow_indices().diff())
            assert torch.equal(row, expected_row)
            assert torch.equal(got.col_indices(), expected_col)
            continue
        row, col, _ = got.coo()
        assert torch.equal(row, expected_row)
        assert torch.equal(col, expected_col)
        # the transpose it carries equals the one torch-sparse sorts for
        # (up to the order of duplicate edges)
        sorted_ = layout.SparseTensor(row=row, col=col, sparse_sizes=(30, 30))
        assert torch.equal(got.storage.colptr(), sorted_.storage.colptr())
        perm, expected_perm = got.storage.csr2csc(), sorted_.storage.csr2csc()
        assert torch.equal(perm.sort()[0], torch.arange(row.numel()))
        for index in (row, col):
            assert torch.equal(index[perm], index[expected_perm])
    assert torch.equal(edge_index, original)
