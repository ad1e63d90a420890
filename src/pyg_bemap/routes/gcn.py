r"""The direct GCN route: PyG's :class:`~torch_geometric.nn.conv.GCNConv`
computed from the layer's own parameters, without its per-call
normalisation (which, on a sparse adjacency, inserts the self-loops and
rescales every edge on each call) and without the sort of all edges that
the backward pass of its sparse product makes to transpose them.

For a graph with in-degrees :math:`\mathbf{d}` (self-loops left out) and
:math:`\mathbf{s} = (\mathbf{d} + 1)^{-1/2}`, GCN's propagation is

.. math::
    \hat{\mathbf{D}}^{-1/2} (\mathbf{A} + \mathbf{I})
    \hat{\mathbf{D}}^{-1/2} \mathbf{X}
    = \mathbf{s} \odot \bigl((\mathbf{A} + \mathbf{I})
    (\mathbf{s} \odot \mathbf{X})\bigr),

one ``sparse_product`` (``infra/sparse.py``) with the unweighted
adjacency between two row scalings; the transpose the backward pass needs
comes with the graph. This is what :obj:`GCNConv` computes on any edge
list (it keeps one self-loop per node), up to the order of floating-point
sums.
"""

from typing import Any

import torch
from torch import Tensor
from torch_geometric.nn.conv import GCNConv
from torch_geometric.nn.dense.linear import Linear

from pyg_bemap.infra.sparse import sparse_product
from pyg_bemap.routes.sparse import reduction


class GCNGraph:
    r"""A graph ready for GCN propagation: the CSR parts of its transposed
    adjacency (targets as rows, self-loops left out) and of its transpose,
    and the scale :math:`\mathbf{s}` for features of :obj:`dtype`."""

    def __init__(
        self,
        parts: tuple[Tensor, Tensor, Tensor, Tensor],
        dtype: torch.dtype,
    ):
        self.rowptr, self.col, self.colptr, self.row = parts
        self.ones = self.col.new_ones(self.col.numel(), dtype=dtype)
        degree = self.rowptr.diff().to(dtype)
        #: :math:`\mathbf{s} = (\mathbf{d} + 1)^{-1/2}`, a column.
        self.scale = degree.add_(1.0).rsqrt_().view(-1, 1)

    def transpose(self) -> tuple[Tensor, Tensor, None]:
        return self.colptr, self.row, None  # the values are all ones


def propagate(x: Tensor, graph: GCNGraph) -> Tensor:
    r""":math:`\hat{\mathbf{D}}^{-1/2} (\mathbf{A} + \mathbf{I})
    \hat{\mathbf{D}}^{-1/2} \mathbf{X}`, differentiable in :obj:`x`."""
    y = x * graph.scale
    out = sparse_product(
        graph.rowptr, graph.col, graph.ones, y, 1.0, graph.transpose
    )
    return out * graph.scale


def computes_gcn(conv: Any) -> bool:
    r"""Whether :func:`gcn_forward` computes what :obj:`conv` computes: a
    :class:`~torch_geometric.nn.conv.GCNConv` (exact type) with its default
    normalisation, sum aggregation and its own bias-free linear map."""
    return (
        type(conv) is GCNConv
        and conv.normalize
        and conv.add_self_loops
        and not conv.improved
        and not conv.cached
        and reduction(conv) in ('add', 'sum')
        and type(conv.lin) is Linear
        and conv.lin.bias is None
    )


def gcn_forward(conv: GCNConv, x: Tensor, graph: GCNGraph) -> Tensor:
    r"""What :obj:`conv` (see :func:`computes_gcn`) computes on
    :obj:`graph`, with its own parameters. The product takes the narrower
    side of the linear map: the input when the layer widens it (the first
    layer of most models, whose backward pass then needs no product)."""
    if x.size(-1) < conv.out_channels:
        out = conv.lin(propagate(x, graph))
    else:
        out = propagate(conv.lin(x), graph)
    if conv.bias is not None:
        out = out + conv.bias
    return out
