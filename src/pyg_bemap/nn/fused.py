r"""Drop-in :class:`~torch_geometric.nn.conv.GCNConv` and
:class:`~torch_geometric.nn.conv.GATConv` whose sparse-adjacency path is one
CSR product per layer, forward and backward.

PyG's sparse path for :class:`GCNConv` transposes the adjacency (a sort of
all edges) in every backward pass, and :class:`GATConv` has no sparse path:
it materialises one message per edge and channel. Here both run
:func:`csr_matmul`, whose backward reuses the transpose cached by
:class:`torch_sparse.SparseTensor` and computes attention gradients with a
sampled dense-dense product, so no :math:`|\mathcal{E}| \times F` tensor is
built. Outputs and gradients equal PyG's up to floating-point summation
order; edge lists and :obj:`torch.sparse` inputs take PyG's usual path.
"""

from typing import Any

import torch
from torch import Tensor
from torch_geometric.nn.conv import GATConv, GCNConv
from torch_geometric.typing import SparseTensor
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

    For a :class:`torch_sparse.SparseTensor`, the forward pass is one
    :obj:`torch.sparse` CSR product, the backward pass one product with the
    transpose cached in the tensor's storage (built once per sparsity
    pattern) and, for the values, one sampled product
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
    if not torch.is_grad_enabled() or not (
        x.requires_grad or value.requires_grad
    ):
        return torch.sparse.mm(
            torch.sparse_csr_tensor(
                rowptr, col, value, adj.sizes(), check_invariants=False
            ),
            x,
        )
    storage = adj.storage
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


class FusedGCNConv(GCNConv):
    r""":class:`~torch_geometric.nn.conv.GCNConv` with the sparse-adjacency
    path of :func:`csr_matmul`. Same arguments, parameters and outputs."""

    def message_and_aggregate(self, adj_t: Any, x: Tensor) -> Tensor:
        return csr_matmul(adj_t, x)


class FusedGATConv(GATConv):
    r""":class:`~torch_geometric.nn.conv.GATConv` with a sparse-adjacency path:
    the attention coefficients :math:`\alpha_{ij}` become the values of the
    adjacency and each head aggregates with one :func:`csr_matmul`. Same
    arguments, parameters and outputs (without :obj:`edge_attr` on sparse
    inputs, as in PyG)."""

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
