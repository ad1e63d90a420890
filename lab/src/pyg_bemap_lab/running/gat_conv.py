r""":class:`~torch_geometric.nn.conv.GATConv` with a sparse-adjacency path,
the evaluation's BeMap(gat) layer.

:class:`~torch_geometric.nn.conv.GATConv` has no sparse path: it
materialises one message per edge and channel. Here each head aggregates
with one sparse product whose values are the attention coefficients.
Outputs and gradients equal PyG's up to floating-point summation order;
edge lists and :obj:`torch.sparse` inputs take PyG's usual path.
"""

import copy
from typing import Any

import torch
from torch import Tensor
from torch_geometric.nn.conv import GATConv
from torch_geometric.typing import (
    WITH_TORCH_SPARSE,
    SparseTensor,
    torch_sparse,
)
from torch_geometric.utils import spmm
from torch_geometric.utils.sparse import set_sparse_value


class FusedGATConv(GATConv):
    r""":class:`~torch_geometric.nn.conv.GATConv` with a sparse-adjacency path:
    the attention coefficients :math:`\alpha_{ij}` become the values of the
    adjacency and each head aggregates with one sparse product on a
    :class:`torch_sparse.SparseTensor`. Same arguments, parameters and
    outputs (without :obj:`edge_attr` on sparse inputs, as in PyG). It
    computes on a sparse adjacency what it computes on the edge list, so a
    :class:`~pyg_bemap.BeMapConv` hands it one (with :obj:`torch_sparse`
    and without :obj:`edge_dim`)."""

    def computes_same_on_sparse(self) -> bool:
        return WITH_TORCH_SPARSE and self.edge_dim is None

    def forward(
        self, x: Any, edge_index: Any, *args: Any, **kwargs: Any
    ) -> Any:
        if not (
            isinstance(edge_index, SparseTensor)
            and self.add_self_loops
            and self.edge_dim is None
        ):
            return super().forward(x, edge_index, *args, **kwargs)
        looped = torch_sparse.set_diag(edge_index)
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
        if isinstance(adj_t, SparseTensor):
            heads = [
                spmm(adj_t.set_value(a, layout='coo'), x_h) for a, x_h in pairs
            ]
        else:  # a torch.sparse matrix
            heads = [spmm(set_sparse_value(adj_t, a), x_h) for a, x_h in pairs]
        if len(heads) == 1:  # a view: no copy forward or backward
            return heads[0].unsqueeze(1)
        return torch.stack(heads, dim=1)
