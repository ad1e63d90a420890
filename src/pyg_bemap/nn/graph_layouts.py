r"""How a graph reaches the layer a :class:`~pyg_bemap.BeMapConv` wraps:
which layers compute the same function on a transposed sparse adjacency as
on an edge list, and the (source, target) pairs of any graph layout."""

from typing import Any

import torch
from torch import Tensor
from torch_geometric.nn.conv import (
    GCNConv,
    GINConv,
    GraphConv,
    MessagePassing,
    SAGEConv,
    SGConv,
    TAGConv,
)
from torch_geometric.typing import WITH_TORCH_SPARSE, SparseTensor
from torch_geometric.utils import (
    is_torch_sparse_tensor,
    to_edge_index,
    to_torch_coo_tensor,
    to_torch_csr_tensor,
)

from pyg_bemap.nn.fused import FusedGATConv, FusedGCNConv
from pyg_bemap.nn.row_norm_conv import RowNormConv
from pyg_bemap.utils.layout import masked_columns
from pyg_bemap.utils.private_api import has_propagation_hooks

#: Feature dtypes of the sparse layouts (torch.sparse has no CPU product
#: for half precision); other dtypes take the edge list.
SPARSE_DTYPES = (torch.float32, torch.float64)


def same_on_sparse(conv: MessagePassing) -> bool:
    r"""Whether :obj:`conv` computes on a transposed sparse adjacency what it
    computes on the edge list, for a graph without self-loops or repeated
    edges and features of a dtype in :obj:`SPARSE_DTYPES` (as
    ``tests/nn/test_eval_promise.py`` checks, with and without
    :obj:`torch_sparse`). Exact types only: a subclass may change what the
    sparse path skips (e.g. :meth:`message`). Not
    :obj:`GCNConv(improved=True)`, whose :obj:`torch.sparse` path in PyG
    adds self-loops of weight 1, nor layers with hooks on their message
    passing, which the sparse path would skip."""
    kind = type(conv)
    if kind in (GCNConv, FusedGCNConv):
        allowed = not conv.improved
    elif kind is SAGEConv:
        allowed = conv.aggr in ('mean', 'sum', 'add')
    elif kind in (RowNormConv, FusedGATConv):
        allowed = WITH_TORCH_SPARSE and getattr(conv, 'edge_dim', None) is None
    else:
        allowed = kind in (SGConv, TAGConv, GraphConv, GINConv)
    return (
        allowed
        and bool(conv.fuse)
        and getattr(conv, 'decomposed_layers', 1) == 1
        and not has_propagation_hooks(conv)
    )


def edge_pairs(adj: Any) -> tuple[Tensor, Any]:
    r"""Returns the :obj:`[2, E]` (source, target) pairs of any graph layout
    and a function that rebuilds the layout from a mask over those pairs.
    """
    if isinstance(adj, SparseTensor):
        row, col, _ = adj.coo()  # transposed: row = target, col = source
        return torch.stack([col, row]), lambda mask: adj.masked_select_nnz(
            mask, layout='coo'
        )
    if is_torch_sparse_tensor(adj):
        index, value = to_edge_index(adj)  # transposed, as above
        size = (adj.size(0), adj.size(1))
        csr = adj.layout == torch.sparse_csr
        convert = to_torch_csr_tensor if csr else to_torch_coo_tensor
        # Masking keeps a coalesced (sorted, unique) order.
        sorted_ = csr or adj.is_coalesced()
        return index.flip(0), lambda mask: convert(
            index[:, mask], value[mask], size, is_coalesced=sorted_
        )
    if not isinstance(adj, Tensor):
        raise ValueError(
            f"'edge_index' must be a tensor, a SparseTensor or a "
            f'torch.sparse adjacency (got {type(adj).__name__})'
        )
    return adj, lambda mask: masked_columns(adj, mask)
