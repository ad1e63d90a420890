r"""Drop-in :class:`~torch_geometric.nn.conv.GCNConv` and
:class:`~torch_geometric.nn.conv.GATConv` whose sparse-adjacency path is one
CSR product per layer, forward and backward.

PyG's sparse path for :class:`~torch_geometric.nn.conv.GCNConv` transposes
the adjacency (a sort of all edges) in every backward pass, and
:class:`~torch_geometric.nn.conv.GATConv` has no sparse path: it materialises
one message per edge and channel. Here both run
:func:`csr_matmul`, whose backward reuses the transpose cached by
:class:`torch_sparse.SparseTensor` and computes attention gradients with a
sampled dense-dense product, so no :math:`|\mathcal{E}| \times F` tensor is
built. Outputs and gradients equal PyG's up to floating-point summation
order; edge lists and :obj:`torch.sparse` inputs take PyG's usual path.
"""

import weakref
from typing import Any

import torch
from torch import Tensor
from torch_geometric.nn.conv import GATConv, GCNConv
from torch_geometric.typing import SparseTensor, torch_sparse
from torch_geometric.utils import spmm
from torch_geometric.utils.sparse import set_sparse_value


class _CSRMatmul(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any,
        rowptr: Tensor,
        col: Tensor,
        value: Tensor,
        colptr: Tensor,
        row_by_col: Tensor,
        csr2csc: Tensor,
        x: Tensor,
    ) -> Tensor:
        adj = torch.sparse_csr_tensor(
            rowptr,
            col,
            value,
            (rowptr.numel() - 1, x.size(0)),
            check_invariants=False,
        )
        ctx.save_for_backward(
            rowptr, col, value, colptr, row_by_col, csr2csc, x
        )
        return torch.sparse.mm(adj, x)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        rowptr, col, value, colptr, row_by_col, csr2csc, x = ctx.saved_tensors
        grad_value = grad_x = None
        if ctx.needs_input_grad[2]:
            # d out_i / d a_ij = x_j: the product grad @ x^T on A's pattern.
            pattern = torch.sparse_csr_tensor(
                rowptr,
                col,
                torch.zeros_like(value),
                (grad.size(0), x.size(0)),
                check_invariants=False,
            )
            grad_value = torch.sparse.sampled_addmm(
                pattern, grad.contiguous(), x.t().contiguous()
            ).values()
        if ctx.needs_input_grad[6]:
            adj_t = torch.sparse_csr_tensor(
                colptr,
                row_by_col,
                value[csr2csc],
                (x.size(0), grad.size(0)),
                check_invariants=False,
            )
            grad_x = torch.sparse.mm(adj_t, grad)
        return None, None, grad_value, None, None, None, grad_x


def csr_matmul(adj: Any, x: Tensor) -> Tensor:
    r"""The product :math:`\mathbf{A} \mathbf{X}` of a sparse matrix and a
    dense one, differentiable in both :math:`\mathbf{X}` and the values of
    :math:`\mathbf{A}`.

    For a :class:`torch_sparse.SparseTensor` whose values need gradients,
    or whose transpose is cached in its storage, the forward pass is one
    :obj:`torch.sparse` CSR product, the backward pass one product with the
    cached transpose (built once per sparsity pattern) and, for the values,
    one sampled product
    :math:`(\nabla \mathbf{O} \, \mathbf{X}^{\top})_{ij}` on the pattern of
    :math:`\mathbf{A}`. Other inputs use :func:`torch_geometric.utils.spmm`.

    Args:
        adj (torch_sparse.SparseTensor or torch.Tensor): The sparse matrix,
            shape :obj:`[M, N]` (missing values count as ones).
        x (torch.Tensor): The dense matrix, shape :obj:`[N, F]`.
    """
    if not isinstance(adj, SparseTensor) or x.dim() != 2:
        return spmm(adj, x)
    rowptr, col, value = adj.csr()
    value = x.new_ones(col.numel()) if value is None else value.to(x.dtype)
    storage = adj.storage
    values_need_grad = torch.is_grad_enabled() and value.requires_grad
    if not values_need_grad and not (
        torch.is_grad_enabled() and x.requires_grad and storage.has_csr2csc()
    ):
        # No gradient, or one for X only and no cached transpose: torch's
        # own backward (which transposes) costs the same as building one.
        return spmm(adj.set_value(value, layout='csr'), x)
    csr2csc = storage.csr2csc()
    return _CSRMatmul.apply(
        rowptr,
        col,
        value,
        storage.colptr(),
        storage.row()[csr2csc],
        csr2csc,
        x,
    )


class _LastGraph:
    r"""Remembers, per mode (training or evaluation), something derived from
    the last graph object a layer saw, valid while that object comes back.
    """

    def __init__(self) -> None:
        self._slots: dict[bool, tuple[Any, torch.dtype, Any]] = {}

    def get(self, training: bool, graph: Any, dtype: torch.dtype) -> Any:
        slot = self._slots.get(training)
        if slot is None or slot[0]() is not graph or slot[1] != dtype:
            return None
        return slot[2]

    def put(
        self, training: bool, graph: Any, dtype: torch.dtype, value: Any
    ) -> None:
        self._slots[training] = (weakref.ref(graph), dtype, value)


class FusedGCNConv(GCNConv):
    r""":class:`~torch_geometric.nn.conv.GCNConv` with the sparse-adjacency
    path of :func:`csr_matmul`; with :obj:`cached=True`, the transpose of the
    normalised adjacency is built once, so backward passes need no sort.

    With :obj:`cached=False`, the layer remembers, separately for training
    and evaluation mode, the normalisation of the last
    :class:`torch_sparse.SparseTensor` it saw, and reuses it while that same
    object comes back (a :class:`SparseTensor` is immutable): wrapped in a
    :class:`~pyg_bemap.BeMapConv`, it normalises a new sample on every
    training pass but the full graph only once for all evaluations. Same
    arguments, parameters and outputs as
    :class:`~torch_geometric.nn.conv.GCNConv`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._last = _LastGraph()
        self._normalised: Any = None
        self._reusing = False

    def forward(
        self, x: Tensor, edge_index: Any, edge_weight: Tensor | None = None
    ) -> Tensor:
        if not isinstance(edge_index, SparseTensor) or self.cached:
            return super().forward(x, edge_index, edge_weight)
        # GCNConv uses _cached_adj_t whenever it is set.
        self._cached_adj_t = self._last.get(self.training, edge_index, x.dtype)
        hit = self._reusing = self._cached_adj_t is not None
        try:
            out = super().forward(x, edge_index, edge_weight)
        finally:
            self._cached_adj_t = None
        if not hit:
            self._last.put(
                self.training, edge_index, x.dtype, self._normalised
            )
        self._normalised, self._reusing = None, False
        return out

    def reset_parameters(self) -> None:
        super().reset_parameters()  # also empties GCNConv's caches
        self._last = _LastGraph()

    def message_and_aggregate(self, adj_t: Any, x: Tensor) -> Tensor:
        self._normalised = adj_t
        if (self.cached or self._reusing) and isinstance(adj_t, SparseTensor):
            adj_t.storage.csr2csc()  # a graph used again: its transpose, once
        return csr_matmul(adj_t, x)


class FusedGATConv(GATConv):
    r""":class:`~torch_geometric.nn.conv.GATConv` with a sparse-adjacency path:
    the attention coefficients :math:`\alpha_{ij}` become the values of the
    adjacency and each head aggregates with one :func:`csr_matmul`. On a
    :class:`torch_sparse.SparseTensor`, the graph with its self-loops (and
    its cached transpose) is kept per mode while the same object comes back,
    as in :class:`FusedGCNConv`. Same arguments, parameters and outputs
    (without :obj:`edge_attr` on sparse inputs, as in PyG)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._last = _LastGraph()

    def forward(
        self, x: Any, edge_index: Any, *args: Any, **kwargs: Any
    ) -> Any:
        if not (
            isinstance(edge_index, SparseTensor)
            and self.add_self_loops  # type: ignore[has-type]
            and self.edge_dim is None
        ):
            return super().forward(x, edge_index, *args, **kwargs)
        dtype = (x[0] if isinstance(x, tuple) else x).dtype
        looped = self._last.get(self.training, edge_index, dtype)
        if looped is None:
            looped = torch_sparse.set_diag(edge_index)
            self._last.put(self.training, edge_index, dtype, looped)
        self.add_self_loops = False  # they are in 'looped' already
        try:
            return super().forward(x, looped, *args, **kwargs)
        finally:
            self.add_self_loops = True

    def reset_parameters(self) -> None:
        super().reset_parameters()
        self._last = _LastGraph()

    def message_and_aggregate(
        self, adj_t: Any, x: tuple[Tensor, Any], alpha: Tensor
    ) -> Tensor:
        if not isinstance(adj_t, SparseTensor):  # a torch.sparse matrix
            heads = [
                spmm(set_sparse_value(adj_t, alpha[:, h]), x[0][:, h])
                for h in range(alpha.size(1))
            ]
            return torch.stack(heads, dim=1)
        if alpha.requires_grad:  # build the transpose once for all heads
            adj_t.storage.csr2csc()
            adj_t.storage.colptr()
        heads = [
            csr_matmul(adj_t.set_value(alpha[:, h], layout='coo'), x[0][:, h])
            for h in range(alpha.size(1))
        ]
        return torch.stack(heads, dim=1)
