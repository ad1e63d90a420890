r"""The edge-list route, right for any layer: the layer's own call on the
edges as given (evaluation) or on the kept edges, with every edge-level
argument masked alike (training), in any graph layout."""

from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor
from torch_geometric.typing import SparseTensor
from torch_geometric.utils import (
    is_torch_sparse_tensor,
    to_torch_csc_tensor,
    to_torch_csr_tensor,
)
from torch_geometric.utils.sparse import ptr2index

from pyg_bemap.infra.private_api import stored_coo_entries
from pyg_bemap.infra.sparse import masked_columns
from pyg_bemap.sampler import Sample

if TYPE_CHECKING:
    from pyg_bemap.routes import LayerCall

#: Arguments of a conv that hold one entry per edge.
EDGE_LEVEL_ARGS = ('edge_weight', 'edge_attr', 'edge_type')


def edge_pairs(adj: Any) -> Tensor:
    r"""The :obj:`[2, E]` (source, target) pairs of any graph layout, in
    the order of its stored edges."""
    if isinstance(adj, SparseTensor):
        row, col, _ = adj.coo()  # transposed: row = target, col = source
        return torch.stack([col, row])
    if is_torch_sparse_tensor(adj):
        return _stored_entries(adj)[0].flip(0)  # transposed, as above
    if not isinstance(adj, Tensor):
        raise ValueError(
            f"'edge_index' must be a tensor, a SparseTensor or a "
            f'torch.sparse adjacency (got {type(adj).__name__})'
        )
    return adj


def kept_edges(adj: Any, sample: Sample) -> Any:
    r""":obj:`adj` in its layout with the edges :obj:`sample` keeps only
    (gathered at its kept positions, so no host synchronisation on a GPU,
    but for a COO adjacency marked coalesced, whose sample is coalesced:
    one sort, which synchronises)."""
    kept = sample.positions
    if isinstance(adj, SparseTensor):
        return adj.index_select_nnz(kept, layout='coo')
    if not is_torch_sparse_tensor(adj):
        return masked_columns(adj, sample.mask, kept)
    index, value = _stored_entries(adj)
    kept_index = index.index_select(1, kept)
    kept_value = value.index_select(0, kept)
    size = (adj.size(0), adj.size(1))
    if adj.layout == torch.sparse_coo:
        shape = size + kept_value.shape[1:]
        kept_adj = torch.sparse_coo_tensor(kept_index, kept_value, shape)
        # a layer that reads the indices needs the mark, which may lie (see
        # below): the sample of a marked adjacency is made true to it
        return kept_adj.coalesce() if adj.is_coalesced() else kept_adj
    convert = _COMPRESSED[adj.layout]  # kept entries stay in order
    return convert(kept_index, kept_value, size, is_coalesced=True)


#: PyG's builders of the compressed layouts.
_COMPRESSED = {
    torch.sparse_csr: to_torch_csr_tensor,
    torch.sparse_csc: to_torch_csc_tensor,
}


def _stored_entries(adj: Tensor) -> tuple[Tensor, Tensor]:
    r"""The (row, column) indices and the values of a :obj:`torch.sparse`
    adjacency in the order it stores them, with no host synchronisation
    and the caller's tensor left as it is (PyG's :obj:`to_edge_index`
    expands compressed indices with one, and marks a COO tensor as
    coalesced, in place, whether it is or not: PyG's layers do it to the
    graphs they get, so the mark says nothing of the order).

    Raises:
        ValueError: If gradients are to flow to the values of a COO
            adjacency that is not marked coalesced (torch gives its stored
            values none).
    """
    # the compressed index expanded by PyG's ptr2index, its output size
    # given, so no host synchronisation
    if adj.layout == torch.sparse_csr:
        rows = ptr2index(adj.crow_indices(), adj.col_indices().numel())
        return torch.stack([rows, adj.col_indices().long()]), adj.values()
    if adj.layout == torch.sparse_csc:
        columns = ptr2index(adj.ccol_indices(), adj.row_indices().numel())
        return torch.stack([adj.row_indices().long(), columns]), adj.values()
    if not (adj.requires_grad and torch.is_grad_enabled()):
        return stored_coo_entries(adj)
    if not adj.is_coalesced():
        raise ValueError(
            'An uncoalesced torch.sparse COO adjacency whose values require '
            "gradients cannot be sampled; pass 'adj.coalesce()'"
        )
    return adj.indices(), adj.values()  # coalesced: differentiable


def edge_level_args_given(call: 'LayerCall') -> bool:
    r"""Whether :obj:`call`, with the arguments after :obj:`(x, edge_index)`
    (named by the layer's positional names), passes an edge-level argument
    (:obj:`EDGE_LEVEL_ARGS`) that is not :obj:`None`."""
    named = [*zip(call.arg_names[2:], call.args), *call.kwargs.items()]
    return any(n in EDGE_LEVEL_ARGS and a is not None for n, a in named)


def mask_edge_level_args(
    call: 'LayerCall', sample: Sample
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    r"""The arguments of :obj:`call` after :obj:`(x, edge_index)` (named by
    the layer's positional names) with the rows of the edges :obj:`sample`
    keeps of every edge-level argument
    (:obj:`value[mask]`, gathered at the kept positions: no host
    synchronisation).

    Raises:
        ValueError: If an edge-level argument has not one row per edge.
    """
    num_edges = sample.mask.numel()

    def masked(name: str, value: Any) -> Any:
        if name not in EDGE_LEVEL_ARGS or not isinstance(value, Tensor):
            return value
        if value.size(0) != num_edges:
            raise ValueError(
                f"'{name}' has {value.size(0)} rows but the graph has "
                f'{num_edges} edges; it must hold one row per edge'
            )
        return value.index_select(0, sample.positions)

    args = call.args
    named = tuple(masked(n, a) for n, a in zip(call.arg_names[2:], args))
    kwargs = {k: masked(k, v) for k, v in call.kwargs.items()}
    return named + args[len(named) :], kwargs
