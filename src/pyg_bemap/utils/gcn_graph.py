r"""Graphs ready for GCN propagation: a sparse product with the unweighted
adjacency between two row scalings, whose backward pass uses a transpose
that comes with the graph.

For a graph without self-loops, with in-degrees :math:`\mathbf{d}` and
:math:`\mathbf{s} = (\mathbf{d} + 1)^{-1/2}`, GCN's propagation is

.. math::
    \hat{\mathbf{D}}^{-1/2} (\mathbf{A} + \mathbf{I})
    \hat{\mathbf{D}}^{-1/2} \mathbf{X}
    = \mathbf{s} \odot \bigl((\mathbf{A} + \mathbf{I})
    (\mathbf{s} \odot \mathbf{X})\bigr).

No edge is rescaled or inserted per call; the scalings are dense
operations that autograd differentiates.
"""

from typing import Any

import torch
from torch import Tensor


class GCNGraph:
    r"""A graph without self-loops, ready for GCN propagation.

    Args:
        adj (torch.Tensor): Its transposed adjacency (targets as rows), a
            :obj:`torch.sparse` CSR tensor of ones.
        adj_t (torch.Tensor, optional): The transpose of :obj:`adj`, the
            same kind of tensor. (default: :obj:`None`, built on the first
            backward pass that needs it)
    """

    def __init__(self, adj: Tensor, adj_t: Tensor | None = None):
        self.adj = adj
        self._adj_t = adj_t
        crow = adj.crow_indices()
        degree = (crow[1:] - crow[:-1]).to(adj.dtype)
        #: :math:`\mathbf{s} = (\mathbf{d} + 1)^{-1/2}`, a column.
        self.scale = degree.add_(1.0).rsqrt_().view(-1, 1)

    def transposed(self) -> Tensor:
        r"""The transpose of :attr:`adj`, as a CSR tensor."""
        if self._adj_t is None:
            self._adj_t = self.adj.t().to_sparse_csr()
        return self._adj_t


class _LoopedProduct(torch.autograd.Function):
    r""":math:`(\mathbf{A} + \mathbf{I}) \mathbf{Y}`, whose backward pass
    is :math:`(\mathbf{A}^{\top} + \mathbf{I}) \nabla` with the graph's
    transpose."""

    @staticmethod
    def forward(ctx: Any, y: Tensor, graph: GCNGraph) -> Tensor:
        ctx.graph = graph
        return torch.addmm(y, graph.adj, y)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None]:
        return torch.addmm(grad, ctx.graph.transposed(), grad), None


def gcn_propagate(x: Tensor, graph: GCNGraph) -> Tensor:
    r""":math:`\hat{\mathbf{D}}^{-1/2} (\mathbf{A} + \mathbf{I})
    \hat{\mathbf{D}}^{-1/2} \mathbf{X}` for the :obj:`graph`'s
    :math:`\mathbf{A}` and features :obj:`x` of its dtype, differentiable
    in :obj:`x`."""
    scale = graph.scale
    y = x * scale
    if torch.is_grad_enabled() and y.requires_grad:
        return _LoopedProduct.apply(y, graph) * scale
    return torch.addmm(y, graph.adj, y).mul_(scale)
