r"""PyG's :class:`~torch_geometric.nn.conv.GCNConv` on the graphs
:class:`~pyg_bemap.BeMapConv` hands it, computed by
:func:`~pyg_bemap.utils.gcn_graph.gcn_propagate` without the layer's
per-call normalisation (which, on a sparse adjacency, inserts the
self-loops and rescales every edge on each call, with :obj:`torch_sparse`
by boolean indexing) and without the sort of all edges that the backward
pass of its sparse product makes to transpose them. Outputs and gradients
equal the layer's up to the order of floating-point sums.
"""

from typing import Any

from torch import Tensor
from torch_geometric.nn.conv import GCNConv
from torch_geometric.nn.dense.linear import Linear

from pyg_bemap.nn.fused import FusedGCNConv
from pyg_bemap.utils.gcn_graph import GCNGraph, gcn_propagate
from pyg_bemap.utils.private_api import (
    has_module_hooks,
    has_propagation_hooks,
)


def propagates_directly(conv: Any, x: Tensor) -> bool:
    r"""Whether :func:`gcn_forward` computes what :obj:`conv` computes on
    features :obj:`x` (a matrix): a
    :class:`~torch_geometric.nn.conv.GCNConv` or
    :class:`~pyg_bemap.nn.fused.FusedGCNConv` (exact types) with its default
    normalisation, sum aggregation, its own bias-free linear map, and no
    hooks on it or its linear map (which :func:`gcn_forward` would call
    in another order)."""
    return (
        x.dim() == 2
        and type(conv) in (GCNConv, FusedGCNConv)
        and conv.normalize
        and conv.add_self_loops
        and not conv.improved
        and not conv.cached
        and conv.flow == 'source_to_target'
        and conv.aggr in ('add', 'sum')
        and type(conv.lin) is Linear
        and conv.lin.bias is None
        and not has_propagation_hooks(conv)
        and not has_module_hooks(conv)
    )


def gcn_forward(conv: GCNConv, x: Tensor, graph: GCNGraph) -> Tensor:
    r"""What :obj:`conv` (see :func:`propagates_directly`) computes on
    :obj:`graph`, with its own parameters. The product takes the narrower
    side of the linear map: the input when the layer widens it (the first
    layer of most models, whose backward pass then needs no product)."""
    if x.size(-1) < conv.out_channels:
        out = conv.lin(gcn_propagate(x, graph))
    else:
        out = gcn_propagate(conv.lin(x), graph)
    if conv.bias is not None:
        out = out + conv.bias
    return out
