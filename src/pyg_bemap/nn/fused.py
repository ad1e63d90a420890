r"""Drop-in :class:`~torch_geometric.nn.conv.GCNConv` and
:class:`~torch_geometric.nn.conv.GATConv` whose sparse-adjacency path is one
CSR product per layer, forward and backward.

PyG's sparse path for :class:`~torch_geometric.nn.conv.GCNConv` inserts
self-loops and transposes the adjacency (a sort of all edges) in every
backward pass, and :class:`~torch_geometric.nn.conv.GATConv` has no sparse
path: it materialises one message per edge and channel. Here both run
:func:`csr_matmul`, whose backward reuses the transpose kept in the
:class:`torch_sparse.SparseTensor` (BeMap's samples come with theirs) and
computes attention gradients with a sampled dense-dense product, so no
:math:`|\mathcal{E}| \times F` tensor is built; the GCN layer adds the
self-loops as a diagonal instead of inserting them. Outputs and gradients
equal PyG's up to floating-point summation order; edge lists and
:obj:`torch.sparse` inputs take PyG's usual path.
"""

import copy
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor
from torch_geometric.nn.conv import GATConv, GCNConv
from torch_geometric.typing import SparseTensor, torch_sparse
from torch_geometric.utils import spmm
from torch_geometric.utils.sparse import set_sparse_value

from pyg_bemap.utils.layout import csr_tensor, quiet_sparse
from pyg_bemap.utils.private_api import has_propagation_hooks


def _sparse_dense(
    rowptr: Tensor, col: Tensor, value: Tensor, x: Tensor, diagonal: Any
) -> Tensor:
    r""":math:`(\mathbf{A} + \mathrm{diag}(\mathbf{d})) \mathbf{X}` by one
    :func:`torch.addmm` (faster on the CPU than :func:`torch.sparse.mm`,
    which fills and copies its output once more)."""
    adj = csr_tensor(rowptr, col, value, (rowptr.numel() - 1, x.size(0)))
    if diagonal is None:
        base = x.new_empty(adj.size(0), x.size(1))
        return torch.addmm(base, adj, x, beta=0.0)  # 'base' is ignored
    return torch.addmm(x * diagonal, adj, x)


class _CSRMatmul(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        rowptr: Tensor,
        col: Tensor,
        value: Tensor,
        x: Tensor,
        diagonal: Tensor | None,
        storage: Any,
    ) -> Tensor:
        ctx.save_for_backward(rowptr, col, value, x, diagonal)
        ctx.storage = storage
        return _sparse_dense(rowptr, col, value, x, diagonal)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        rowptr, col, value, x, diagonal = ctx.saved_tensors
        grad_value = grad_x = None
        if ctx.needs_input_grad[2]:
            # d out_i / d a_ij = x_j: the product grad @ x^T on A's pattern.
            pattern = csr_tensor(
                rowptr, col, torch.zeros_like(value), (grad.size(0), x.size(0))
            )
            grad_value = torch.sparse.sampled_addmm(
                pattern, grad.contiguous(), x.t().contiguous()
            ).values()
        if ctx.needs_input_grad[3]:
            storage = ctx.storage
            csr2csc = storage.csr2csc()  # sorted once, then cached
            if storage.value() is not None:  # else all ones, as 'value'
                value = value.index_select(0, csr2csc)
            grad_x = _sparse_dense(
                storage.colptr(),
                storage.row().index_select(0, csr2csc),
                value,
                grad,
                diagonal,
            )
        return None, None, grad_value, grad_x, None, None


def csr_matmul(adj: Any, x: Tensor, diagonal: Tensor | None = None) -> Tensor:
    r"""The product :math:`(\mathbf{A} + \mathrm{diag}(\mathbf{d}))
    \mathbf{X}` of a sparse matrix (plus an optional diagonal) and a dense
    one, differentiable in :math:`\mathbf{X}` and the values of
    :math:`\mathbf{A}`.

    For a :class:`torch_sparse.SparseTensor`, the forward pass is one
    :func:`torch.addmm` with a CSR matrix, the backward pass one with the
    transpose, which is built on the first backward pass and cached in the
    matrix's storage (so layers and passes that share the matrix sort its
    entries once), and, for the values, one sampled product
    :math:`(\nabla \mathbf{O} \, \mathbf{X}^{\top})_{ij}` on the pattern of
    :math:`\mathbf{A}`. Other inputs use :func:`torch_geometric.utils.spmm`
    (without a diagonal).

    Args:
        adj (torch_sparse.SparseTensor or torch.Tensor): The sparse matrix,
            shape :obj:`[M, N]` (missing values count as ones).
        x (torch.Tensor): The dense matrix, shape :obj:`[N, F]`.
        diagonal (torch.Tensor, optional): The diagonal :math:`\mathbf{d}`
            of a square :obj:`adj`, shape :obj:`[N, 1]`, without gradient.
            (default: :obj:`None`)
    """
    if not isinstance(adj, SparseTensor) or x.dim() != 2:
        if diagonal is not None:
            raise ValueError("'diagonal' needs a SparseTensor and a 2-D 'x'")
        return spmm(adj, x)
    if diagonal is not None and (
        adj.size(0) != adj.size(1)
        or diagonal.shape != (x.size(0), 1)
        or diagonal.requires_grad
    ):
        raise ValueError(
            f"'diagonal' must be a column of shape [{x.size(0)}, 1] without "
            f'gradient, for a square matrix (got shape '
            f'{tuple(diagonal.shape)} for a matrix of size {adj.sizes()})'
        )
    rowptr, col, value = adj.csr()
    value = x.new_ones(col.numel()) if value is None else value.to(x.dtype)
    if not torch.is_grad_enabled() or not (
        value.requires_grad or x.requires_grad
    ):
        return _sparse_dense(rowptr, col, value, x, diagonal)
    return _CSRMatmul.apply(rowptr, col, value, x, diagonal, adj.storage)


#: The attribute under which a graph keeps what layers derived from it.
MEMO_ATTR = '_pyg_bemap_derived'


def derived(graph: Any, key: Any, compute: Callable[[], Any]) -> Any:
    r"""The value :obj:`compute()` derives from :obj:`graph`, remembered
    under :obj:`key` on the graph itself when it may be reused (see
    :func:`_memoisable`), so that it lives as long as the graph and is
    shared by every layer that sees it; nothing is kept anywhere else."""
    if not _memoisable(graph):
        return compute()
    memo = graph.__dict__.setdefault(MEMO_ATTR, {})
    value = memo.get(key)
    if value is None:
        value = memo[key] = compute()
    return value


def _memoisable(adj: Any) -> bool:
    r"""A graph whose derived forms may be reused: a SparseTensor without
    values that need gradients (those change with every pass)."""
    if not isinstance(adj, SparseTensor):
        return False
    value = adj.storage.value()
    return value is None or not value.requires_grad


class FusedGCNConv(GCNConv):
    r""":class:`~torch_geometric.nn.conv.GCNConv` with a faster path for a
    :class:`torch_sparse.SparseTensor` adjacency.

    With the default normalisation (self-loops added, symmetric), a graph
    without self-loops and values that need no gradient, the layer never
    inserts the self-loops: with :math:`\mathbf{d} = \mathbf{A} \mathbf{1}
    + c` (:math:`c = 2` if :obj:`improved`, else :math:`1`),

    .. math::
        \hat{\mathbf{D}}^{-1/2} (\mathbf{A} + c \mathbf{I})
        \hat{\mathbf{D}}^{-1/2} \mathbf{X}
        = \bigl(\hat{\mathbf{D}}^{-1/2} \mathbf{A}
        \hat{\mathbf{D}}^{-1/2} + c \hat{\mathbf{D}}^{-1}\bigr)
        \mathbf{X},

    one :func:`csr_matmul` with the graph's own pattern and a diagonal,
    applied to the narrower side of the linear map: to :math:`\mathbf{X}`
    before :math:`\mathbf{\Theta}` when the layer widens its input (the
    first layer of most models, whose backward pass then needs no sparse
    product at all), else to :math:`\mathbf{X} \mathbf{\Theta}`. The
    transpose for the backward pass is built on the first one and kept in
    the graph's storage, or comes with the graph (each sample of
    :class:`~pyg_bemap.BeMapConv`). The normalisation of a graph is
    remembered while that graph object lives (a :class:`SparseTensor` is
    immutable) and shared by every layer. Other inputs take
    :class:`~torch_geometric.nn.conv.GCNConv`'s path with :func:`csr_matmul`
    as the product. Same arguments, parameters and outputs (up to
    floating-point summation order) as
    :class:`~torch_geometric.nn.conv.GCNConv`."""

    def forward(
        self, x: Tensor, edge_index: Any, edge_weight: Tensor | None = None
    ) -> Tensor:
        normalised = self._normalised(x, edge_index)
        if normalised is None:
            with quiet_sparse():  # GCNConv may build a CSR (self-loops)
                return super().forward(x, edge_index, edge_weight)
        adj, diagonal = normalised
        if x.size(-1) < self.out_channels:  # propagate the narrower side
            out = self.lin(csr_matmul(adj, x, diagonal))
        else:
            out = csr_matmul(adj, self.lin(x), diagonal)
        if self.bias is not None:
            out = out + self.bias
        return out

    def message_and_aggregate(self, adj_t: Any, x: Tensor) -> Tensor:
        return csr_matmul(adj_t, x)

    def _normalised(self, x: Tensor, adj: Any) -> tuple[Any, Tensor] | None:
        r"""The normalised graph without its diagonal and the diagonal, or
        :obj:`None` when the factored path does not apply."""
        if not (
            isinstance(x, Tensor)
            and self.normalize
            and self.add_self_loops
            and not self.cached
            and not has_propagation_hooks(self)
            and _memoisable(adj)
        ):
            return None
        fill = 2.0 if self.improved else 1.0
        normalised = derived(
            adj,
            ('gcn_norm', x.dtype, self.improved),
            lambda: _gcn_norm_off_diagonal(adj, x.dtype, fill),
        )
        return normalised or None


def _gcn_norm_off_diagonal(adj: Any, dtype: torch.dtype, fill: float) -> Any:
    r"""For a square graph without self-loops,
    :math:`\hat{\mathbf{D}}^{-1/2} \mathbf{A} \hat{\mathbf{D}}^{-1/2}` (the
    same pattern and transpose caches) and the column
    :math:`c \hat{\mathbf{D}}^{-1}`; :obj:`()` for any other graph."""
    storage = adj.storage
    num_rows, num_cols = adj.sparse_sizes()
    row, col = storage.row(), storage.col()
    if num_rows != num_cols or bool((row == col).any()):
        return ()
    value = storage.value()
    if value is None:
        degree = storage.rowcount().to(dtype)
        value = torch.ones(col.numel(), dtype=dtype, device=col.device)
    else:
        value = value.to(dtype)
        degree = torch_sparse.sum(adj, dim=1).to(dtype)
    scale = (degree + fill).pow_(-0.5)
    scale.masked_fill_(scale == float('inf'), 0.0)
    value = value * scale.index_select(0, row) * scale.index_select(0, col)
    diagonal = (fill * scale * scale).view(-1, 1)
    return adj.set_value(value, layout='csr'), diagonal


class FusedGATConv(GATConv):
    r""":class:`~torch_geometric.nn.conv.GATConv` with a sparse-adjacency path:
    the attention coefficients :math:`\alpha_{ij}` become the values of the
    adjacency and each head aggregates with one :func:`csr_matmul`. On a
    :class:`torch_sparse.SparseTensor`, the graph with its self-loops (and
    its cached transpose) is kept while that graph object lives and shared
    by the layers that see it. Same arguments, parameters and outputs
    (without :obj:`edge_attr` on sparse inputs, as in PyG)."""

    def forward(
        self, x: Any, edge_index: Any, *args: Any, **kwargs: Any
    ) -> Any:
        if not (
            isinstance(edge_index, SparseTensor)
            and self.add_self_loops
            and self.edge_dim is None
        ):
            return super().forward(x, edge_index, *args, **kwargs)
        looped = derived(
            edge_index, 'set_diag', lambda: torch_sparse.set_diag(edge_index)
        )
        # The loops are in 'looped' already: GATConv's forward runs on a
        # shallow copy (same parameters and hooks) that adds none, so that
        # the layer itself never changes, also under threads.
        without_loops = copy.copy(self)
        without_loops.add_self_loops = False
        return GATConv.forward(without_loops, x, looped, *args, **kwargs)

    def message_and_aggregate(
        self, adj_t: Any, x: tuple[Tensor, Any], alpha: Tensor
    ) -> Tensor:
        # Per head by unbind, not indexing: the backward pass of an index
        # fills a zero tensor and copies into it for every head.
        pairs = zip(alpha.unbind(1), x[0].unbind(1))
        if not isinstance(adj_t, SparseTensor):  # a torch.sparse matrix
            heads = [spmm(set_sparse_value(adj_t, a), x_h) for a, x_h in pairs]
        else:
            if alpha.requires_grad:  # build the transpose once for all heads
                adj_t.storage.csr2csc()
                adj_t.storage.colptr()
            heads = [
                csr_matmul(adj_t.set_value(a, layout='coo'), x_h)
                for a, x_h in pairs
            ]
        if len(heads) == 1:  # a view: no copy forward or backward
            return heads[0].unsqueeze(1)
        return torch.stack(heads, dim=1)
