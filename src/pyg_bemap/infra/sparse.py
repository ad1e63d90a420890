r"""Sparse layouts of a graph and the one differentiable sparse product the
library uses: quiet CSR builds, masked edge lists, transposed adjacencies
of edge subsets built without sorting, and :func:`sparse_product`."""

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
from torch import Tensor
from torch_geometric.typing import (
    WITH_TORCH_SPARSE,
    SparseStorage,
    SparseTensor,
)
from torch_geometric.utils.sparse import index2ptr

from pyg_bemap.infra import threads

# torch's one-time notices on CSR tensors (support in beta; since torch
# 2.11, invariant checks "implicitly disabled" even when a call passes
# check_invariants), raised by the first CSR tensor of the process:
# _use_up_torch_notices raises them here, where this one filter ignores
# them (no per-call catch_warnings: not thread-safe).
warnings.filterwarnings(
    'ignore',
    message='Sparse (CSR tensor support is in beta state'
    '|invariant checks are implicitly disabled)',
    category=UserWarning,
    module=__name__.replace('.', r'\.'),
)


#: Feature dtypes of torch.sparse's products (it has none for half
#: precision on the CPU).
SPARSE_DTYPES = (torch.float32, torch.float64)


def sparse_product_takes(x: Tensor) -> bool:
    r"""Whether torch.sparse's products (and :func:`sparse_product`)
    compute with :obj:`x` as it is: of a dtype in :obj:`SPARSE_DTYPES`
    and outside autocast, which would cast it to half precision."""
    return x.dtype in SPARSE_DTYPES and not torch.is_autocast_enabled(
        x.device.type
    )


@contextlib.contextmanager
def quiet_sparse() -> Iterator[None]:
    r"""Runs sparse code that the package chose to run with torch's
    invariant checks set explicitly to their current state (torch warns
    when they are implicitly disabled) and torch's one-time CSR notices
    used up."""
    _use_up_torch_notices()
    checks = torch.sparse.check_sparse_tensor_invariants.is_enabled()
    with torch.sparse.check_sparse_tensor_invariants(enable=checks):
        yield


@functools.cache  # torch raises each notice once per process
def _use_up_torch_notices() -> None:
    empty = torch.zeros(0, dtype=torch.long)
    for _ in range(3):  # warnings as errors: one notice per try
        with contextlib.suppress(UserWarning):
            torch.sparse_csr_tensor(
                torch.zeros(2, dtype=torch.long),
                empty,
                empty.float(),
                (1, 1),
                check_invariants=False,
            )
            return


def csr_tensor(
    crow: Tensor, col: Tensor, value: Tensor, size: tuple[int, int]
) -> Tensor:
    r"""A :obj:`torch.sparse` CSR tensor from sorted, valid parts (built
    from sorted indices, so without invariant checks), without torch's
    one-time notices on CSR tensors."""
    _use_up_torch_notices()
    return torch.sparse_csr_tensor(
        crow, col, value, size, check_invariants=False
    )


def masked_columns(index: Tensor, mask: Tensor, positions: Tensor) -> Tensor:
    r""":obj:`index[:, mask]`: the edges of an edge list where :obj:`mask`
    is :obj:`True`, in their order, given their :obj:`positions`
    (:func:`~pyg_bemap.rules.draw.kept_positions`). A plain CPU tensor is
    gathered by NumPy (one row per thread beyond :obj:`threads.CHUNK` kept
    edges), another plain tensor (on a GPU) by :obj:`index_select` (no
    host synchronisation); a subclass such as PyG's :class:`EdgeIndex`,
    which keeps its metadata, is indexed by torch with the mask."""
    if type(index) is not Tensor:
        return index[:, mask]
    if index.device.type != 'cpu':
        return index.index_select(1, positions)
    kept, rows = positions.numpy(), index.numpy()
    if kept.size <= threads.CHUNK:
        return torch.from_numpy(rows.take(kept, axis=1))
    out = np.empty((rows.shape[0], kept.size), dtype=rows.dtype)
    threads.in_threads(  # one row per thread; 'clip' copies unbuffered
        lambda row: rows[row].take(kept, out=out[row], mode='clip'),
        range(rows.shape[0]),
    )
    return torch.from_numpy(out)


class MaskedAdjacency:
    r"""Transposed adjacencies (targets as rows) of edge subsets of one
    graph, built without sorting.

    The graph's edges without self-loops are ordered once by (target,
    source) and by (source, target). A subset, given as a mask over the
    edges, then becomes a CSR matrix by gathers and prefix sums over these
    orders, and, with :obj:`torch_sparse` installed, a
    :class:`torch_sparse.SparseTensor` that also carries its transpose
    (:obj:`colptr` and the :obj:`csr2csc` permutation), which backward
    passes of sparse products would otherwise sort for. Without
    :obj:`torch_sparse`, a :obj:`torch.sparse` CSR tensor. In both
    installs, :meth:`csr_parts` gives the CSR parts of the matrix and of
    its transpose.

    Args:
        edge_index (torch.Tensor): The edges, shape :obj:`[2, E]`.
        num_nodes (int): The number of nodes.
    """

    def __init__(self, edge_index: Tensor, num_nodes: int) -> None:
        src, dst = edge_index[0].long(), edge_index[1].long()
        self.edge_index = edge_index
        self.num_nodes = num_nodes
        # int32 halves what is kept (four arrays of E entries, a fifth
        # for torch_sparse's transposes)
        small = max(edge_index.size(1), num_nodes) < 2**31
        self.index_dtype = torch.int32 if small else torch.long
        by_target = _order(dst, src, num_nodes)
        by_source = _order(src, dst, num_nodes)
        self.target_ptr = index2ptr(dst[by_target], num_nodes)
        self.source_ptr = index2ptr(src[by_source], num_nodes)
        self.target_source = src[by_target].to(self.index_dtype)
        self.source_target = dst[by_source].to(self.index_dtype)
        self.by_target = by_target.to(self.index_dtype)
        self.by_source = by_source.to(self.index_dtype)

    @functools.cached_property
    def source_rank(self) -> Tensor:
        r"""The place in the target order of every edge in the source
        order (for the :obj:`csr2csc` of a :class:`SparseTensor`)."""
        rank = self.by_target.new_empty(self.edge_index.size(1))
        rank[self.by_target.long()] = torch.arange(
            self.by_target.numel(), dtype=self.index_dtype, device=rank.device
        )
        return rank.index_select(0, self.by_source)

    def __call__(
        self,
        mask: Tensor,
        dtype: torch.dtype | None = None,
        num_kept: int | None = None,
    ) -> Any:
        r"""The transposed adjacency of the edges where :obj:`mask` is
        :obj:`True` (self-loops left out), sorted by target, then source;
        a :obj:`torch.sparse` tensor holds ones of :obj:`dtype` (default:
        the default dtype). Given
        :obj:`num_kept`, the number of kept edges that are not self-loops,
        nothing counts the mask (no host synchronisation)."""
        size = (self.num_nodes, self.num_nodes)
        # before[p]: kept edges before slot p of the target order
        rowptr, col, before = _masked_csr(
            mask, self.by_target, self.target_ptr, self.target_source, num_kept
        )
        if not WITH_TORCH_SPARSE:
            value = torch.ones(col.numel(), dtype=dtype, device=col.device)
            return csr_tensor(rowptr, col, value, size)
        colptr, ranks, _ = _masked_csr(
            mask, self.by_source, self.source_ptr, self.source_rank, num_kept
        )
        storage = SparseStorage(
            rowptr=rowptr,
            col=col,
            sparse_sizes=size,
            colptr=colptr,
            csr2csc=before.index_select(0, ranks),
            is_sorted=True,
            trust_data=True,
        )
        return SparseTensor.from_storage(storage)

    def csr_parts(
        self, mask: Tensor, num_kept: int | None = None
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        r"""The CSR parts of the transposed adjacency of the edges where
        :obj:`mask` is :obj:`True` (self-loops left out), :obj:`(rowptr,
        col)`, and of its transpose, :obj:`(colptr, row)`, all sorted
        (:obj:`num_kept` as in :meth:`__call__`)."""
        rowptr, col, _ = _masked_csr(
            mask, self.by_target, self.target_ptr, self.target_source, num_kept
        )
        colptr, row, _ = _masked_csr(
            mask, self.by_source, self.source_ptr, self.source_target, num_kept
        )
        return rowptr, col, colptr, row


def _masked_csr(
    mask: Tensor,
    order: Tensor,
    pointers: Tensor,
    values: Tensor,
    num_kept: int | None,
) -> tuple[Tensor, Tensor, Tensor]:
    r"""The row pointers of the CSR matrix of the edges where :obj:`mask`
    is :obj:`True`, given the edges' :obj:`order` by row and the rows'
    :obj:`pointers` into it; the kept entries of :obj:`values` (one per
    edge in that order, e.g. the other end); and the count of kept edges
    before every place of the order."""
    kept = mask.index_select(0, order)
    before = kept.new_zeros(kept.numel() + 1, dtype=torch.long)
    torch.cumsum(kept, 0, out=before[1:])  # the exclusive prefix sum
    total = int(before[-1]) if num_kept is None else num_kept
    # values[kept], given the exclusive prefix sum `before` of `kept` and
    # its total: one scatter of every entry to its rank among the kept ones
    # (the others to a slot that is cut off), faster on the CPU than
    # nonzero or boolean indexing, which count the mask again
    slot = torch.where(kept, before[:-1], total)
    compacted = values.new_empty(total + 1).scatter_(0, slot, values)
    return before[pointers], compacted[:total].long(), before


def _order(major: Tensor, minor: Tensor, num_nodes: int) -> Tensor:
    r"""The edges without self-loops, sorted by :obj:`major`, then
    :obj:`minor`."""
    order = torch.sort(major * num_nodes + minor, stable=True)[1]
    return order[(major != minor)[order]]


class _SparseProduct(torch.autograd.Function):
    r""":math:`(\mathbf{A} + \mathrm{diag}(\mathbf{d})) \mathbf{X}` for a
    CSR matrix :math:`\mathbf{A}`, whose backward pass multiplies with the
    given transpose: no sort."""

    @staticmethod
    def forward(
        ctx: Any,
        x: Tensor,
        csr: tuple[Tensor, Tensor, Tensor],
        diagonal: Tensor | float,
        transpose: Any,
    ) -> Tensor:
        ctx.value, ctx.diagonal, ctx.transpose = csr[2], diagonal, transpose
        return _product(*csr, x, diagonal)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        colptr, row, perm = ctx.transpose()
        value = ctx.value if perm is None else ctx.value.index_select(0, perm)
        grad_x = _product(colptr, row, value, grad, ctx.diagonal)
        return grad_x, None, None, None


def sparse_product(
    rowptr: Tensor,
    col: Tensor,
    value: Tensor,
    x: Tensor,
    diagonal: Tensor | float,
    transpose: Callable[[], tuple[Tensor, Tensor, Tensor | None]],
) -> Tensor:
    r"""The product :math:`(\mathbf{A} + \mathrm{diag}(\mathbf{d}))
    \mathbf{X}` of a square CSR matrix plus a diagonal and a dense matrix,
    by one :func:`torch.addmm`, differentiable in :math:`\mathbf{X}`; the
    library's one sparse autograd product.

    Args:
        rowptr (torch.Tensor): The row pointers of :math:`\mathbf{A}`.
        col (torch.Tensor): Its columns, sorted within each row.
        value (torch.Tensor): Its values, of the dtype of :obj:`x`, without
            gradient.
        x (torch.Tensor): The dense matrix, :obj:`[N, F]`.
        diagonal (torch.Tensor or float): :math:`\mathbf{d}`, a column
            :obj:`[N, 1]` without gradient, or a number.
        transpose (callable): Returns the transpose's :obj:`(colptr, row,
            perm)`, :obj:`perm` taking the values into the transpose's
            order (:obj:`None`: the values are all equal); called by the
            backward pass only.
    """
    csr = (rowptr, col, value)
    if torch.is_grad_enabled() and x.requires_grad:
        return _SparseProduct.apply(x, csr, diagonal, transpose)
    return _product(*csr, x, diagonal)


def _product(
    rowptr: Tensor,
    col: Tensor,
    value: Tensor,
    x: Tensor,
    diagonal: Tensor | float,
) -> Tensor:
    adj = csr_tensor(rowptr, col, value, (rowptr.numel() - 1, x.size(0)))
    identity = not isinstance(diagonal, Tensor) and diagonal == 1
    return torch.addmm(x if identity else x * diagonal, adj, x)
