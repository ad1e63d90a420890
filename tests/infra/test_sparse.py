import pytest
import torch

import pyg_bemap.infra.sparse as layout
from pyg_bemap.infra import threads
from pyg_bemap.infra.sparse import (
    MaskedAdjacency,
    csr_tensor,
    masked_columns,
    sparse_product,
)
from pyg_bemap.rules.draw import kept_positions
from tests.conftest import run_python


@pytest.fixture(params=[True, False], ids=['torch-sparse', 'torch.sparse'])
def with_torch_sparse(request, monkeypatch):
    r"""Runs a test with torch-sparse's layout (when installed) and with the
    :obj:`torch.sparse` fallback."""
    if request.param and not layout.WITH_TORCH_SPARSE:
        pytest.skip('needs torch-sparse')
    monkeypatch.setattr(layout, 'WITH_TORCH_SPARSE', request.param)
    return request.param


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


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_csr_parts_are_the_kept_adjacency_and_its_transpose(dtype):
    gen = torch.Generator().manual_seed(1)
    edge_index = torch.randint(0, 30, (2, 400), generator=gen)
    edge_index[:, :10] = torch.arange(10).repeat(2, 1)  # self-loops
    masked = MaskedAdjacency(edge_index, 30)
    mask = torch.rand(400, generator=gen) < 0.4
    rowptr, col, colptr, row = masked.csr_parts(mask)
    ones = torch.ones(col.numel(), dtype=dtype)
    adj = csr_tensor(rowptr, col, ones, (30, 30))
    adj_t = csr_tensor(colptr, row, ones, (30, 30))
    kept = edge_index[:, mask]
    kept = kept[:, kept[0] != kept[1]]
    expected = torch.zeros(30, 30, dtype=dtype).index_put_(
        (kept[1], kept[0]), torch.ones(kept.size(1), dtype=dtype), True
    )  # a repeated edge counts as often as it is kept
    assert torch.equal(adj.to_dense(), expected)
    assert torch.equal(adj_t.to_dense(), expected.t())
    for ptr, index in ((rowptr, col), (colptr, row)):  # sorted in rows
        rows = torch.repeat_interleave(ptr.diff())
        key = rows * 30 + index
        assert bool((key[1:] >= key[:-1]).all())


def random_csr(num_rows, seed):
    gen = torch.Generator().manual_seed(seed)
    dense = torch.rand(num_rows, num_rows, generator=gen)
    dense = dense * (torch.rand(num_rows, num_rows, generator=gen) < 0.4)
    csr = dense.to_sparse_csr()
    csc = dense.t().to_sparse_csr()  # the transpose, and its values' order
    slot = torch.zeros_like(dense, dtype=torch.long)
    slot[dense != 0] = torch.arange(int((dense != 0).sum()))
    perm = slot.t()[dense.t() != 0]
    transpose = (csc.crow_indices(), csc.col_indices(), perm)
    return (
        dense,
        (csr.crow_indices(), csr.col_indices(), csr.values()),
        transpose,
    )


@pytest.mark.parametrize('diagonal', [1.0, 0.5, 'column'])
def test_sparse_product_and_its_gradient_are_the_dense_ones(diagonal):
    dense, csr, transpose = random_csr(7, 0)
    if diagonal == 'column':
        diagonal = torch.rand(7, 1)
    x = torch.randn(7, 3, requires_grad=True)
    weight = torch.randn(7, 3)
    out = sparse_product(*csr, x, diagonal, lambda: transpose)
    (out * weight).sum().backward()
    x_ref = x.detach().clone().requires_grad_()
    constant = isinstance(diagonal, float)
    full = dense + torch.diag(
        torch.full((7,), diagonal) if constant else diagonal.view(-1)
    )
    expected = full @ x_ref
    (expected * weight).sum().backward()
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(x.grad, x_ref.grad)


def test_sparse_product_without_gradients_records_nothing():
    _, csr, transpose = random_csr(5, 1)
    out = sparse_product(*csr, torch.randn(5, 2), 1.0, lambda: transpose)
    assert out.grad_fn is None


_TRAIN_AND_EVALUATE = """
import torch, warnings
from torch_geometric.nn.models import GCN
from pyg_bemap import BalanceAwareSampling, to_bemap
from pyg_bemap.datasets import biased_sbm
data = BalanceAwareSampling()(biased_sbm(200, 8, seed=0))
model = to_bemap(GCN(data.num_features, 8, 2, 2))
filters = list(warnings.filters)
model(data.x, data.edge_index).sum().backward()
model.eval()
model(data.x, data.edge_index)
assert warnings.filters == filters
"""


def test_the_layouts_we_choose_show_users_no_sparse_notices():
    # A fresh process with Python's default warning filters, as a user's
    # script has: torch's one-time notices about CSR tensors (which the
    # package builds without torch-sparse) must not reach it, and no
    # pass touches the process's warning filters.
    run = run_python('-c', _TRAIN_AND_EVALUATE)
    assert run.returncode == 0, run.stderr
    assert 'beta state' not in run.stderr
    assert 'implicitly disabled' not in run.stderr


def test_a_users_own_csr_tensor_still_gets_torchs_notice():
    # The filter is scoped to the package's own module.
    code = (
        'import pyg_bemap, torch\n'
        'torch.sparse_csr_tensor(torch.tensor([0, 1]), torch.tensor([0]),'
        ' torch.ones(1), (1, 1))\n'
    )
    run = run_python('-c', code)
    assert run.returncode == 0, run.stderr
    assert 'beta state' in run.stderr


@pytest.mark.parametrize('chunk', [threads.CHUNK, 10], ids=['one', 'rows'])
@pytest.mark.parametrize('dtype', [torch.long, torch.int32])
def test_masked_columns_equals_boolean_indexing(dtype, chunk, monkeypatch):
    monkeypatch.setattr(threads, 'CHUNK', chunk)  # 10: a row per thread
    gen = torch.Generator().manual_seed(0)
    index = torch.randint(50, (2, 300), generator=gen, dtype=dtype)
    mask = torch.rand(300, generator=gen) < 0.4
    positions = kept_positions(mask, int(mask.sum()))
    for edges in (index, index.t().contiguous().t()):  # and a strided view
        out = masked_columns(edges, mask, positions)
        assert out.dtype == dtype and torch.equal(out, edges[:, mask])
    none = torch.zeros(300, dtype=torch.bool)
    assert masked_columns(index, none, kept_positions(none, 0)).shape == (2, 0)


def test_masked_columns_keeps_a_subclass_and_its_metadata():
    from torch_geometric import EdgeIndex

    from pyg_bemap.infra.compat import plain_tensor

    index = EdgeIndex(
        torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]), sort_order='row'
    )
    mask = torch.tensor([True, False, True, True])
    out = masked_columns(index, mask, kept_positions(mask, 3))
    assert isinstance(out, EdgeIndex) and out.sort_order == 'row'
    assert plain_tensor(out).tolist() == [[0, 1, 2], [1, 2, 1]]


def test_a_known_number_of_kept_edges_is_never_counted(monkeypatch):
    gen = torch.Generator().manual_seed(3)
    edge_index = torch.randint(0, 30, (2, 400), generator=gen)
    mask = torch.rand(400, generator=gen) < 0.4
    mask &= edge_index[0] != edge_index[1]  # samples hold no self-loops
    num_kept = int(mask.sum())
    assert torch.equal(kept_positions(mask, num_kept), mask.nonzero().view(-1))
    meta = kept_positions(mask.to('meta'), num_kept)  # as off the CPU
    assert meta.shape == (num_kept,)
    masked = MaskedAdjacency(edge_index, 30)
    counted = masked.csr_parts(mask)
    monkeypatch.setattr(torch.Tensor, '__int__', None)  # int(t) would fail
    given = masked.csr_parts(mask, num_kept)
    assert all(torch.equal(a, b) for a, b in zip(given, counted))
