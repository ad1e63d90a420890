r"""The edge-list route, right for any layer: the layer's own call on the
edges as given (evaluation) or on the kept edges, with every edge-level
argument masked alike (training), in any graph layout."""

from typing import Any

import torch
from torch import Tensor
from torch_geometric.typing import SparseTensor
from torch_geometric.utils import (
    is_torch_sparse_tensor,
    to_edge_index,
    to_torch_coo_tensor,
    to_torch_csr_tensor,
)

from pyg_bemap.infra.sparse import kept_positions, masked_columns

#: Arguments of a conv that hold one entry per edge.
EDGE_LEVEL_ARGS = ('edge_weight', 'edge_attr', 'edge_type')


def edge_pairs(adj: Any) -> tuple[Tensor, Any]:
    r"""Returns the :obj:`[2, E]` (source, target) pairs of any graph layout
    and a function that rebuilds the layout from a mask over those pairs
    and the number of kept pairs (gathered at the kept positions, so no
    host synchronisation on a GPU).
    """
    if isinstance(adj, SparseTensor):
        row, col, _ = adj.coo()  # transposed: row = target, col = source

        def rebuild_sparse(mask: Tensor, num_kept: int) -> SparseTensor:
            kept = kept_positions(mask, num_kept)
            return adj.index_select_nnz(kept, layout='coo')

        return torch.stack([col, row]), rebuild_sparse
    if is_torch_sparse_tensor(adj):
        index, value = to_edge_index(adj)  # transposed, as above
        size = (adj.size(0), adj.size(1))
        csr = adj.layout == torch.sparse_csr
        convert = to_torch_csr_tensor if csr else to_torch_coo_tensor
        # Masking keeps a coalesced (sorted, unique) order.
        sorted_ = csr or adj.is_coalesced()

        def rebuild(mask: Tensor, num_kept: int) -> Tensor:
            kept = kept_positions(mask, num_kept)
            return convert(
                index.index_select(1, kept),
                value.index_select(0, kept),
                size,
                is_coalesced=sorted_,
            )

        return index.flip(0), rebuild
    if not isinstance(adj, Tensor):
        raise ValueError(
            f"'edge_index' must be a tensor, a SparseTensor or a "
            f'torch.sparse adjacency (got {type(adj).__name__})'
        )
    return adj, lambda mask, num_kept: masked_columns(adj, mask, num_kept)


def edge_level_args_given(
    names: tuple[str, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> bool:
    r"""Whether a call with the arguments after :obj:`(x, edge_index)`
    passes an edge-level argument (:obj:`EDGE_LEVEL_ARGS`) that is not
    :obj:`None`; :obj:`names` are the layer's positional names."""
    given = [
        n for n, a in zip(names[2 : 2 + len(args)], args) if a is not None
    ]
    given += [k for k, v in kwargs.items() if v is not None]
    return any(name in EDGE_LEVEL_ARGS for name in given)


def mask_edge_level_args(
    names: tuple[str, ...],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    mask: Tensor,
    num_kept: int,
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    r"""The arguments after :obj:`(x, edge_index)` with the rows of the kept
    edges of every edge-level argument (:obj:`value[mask]`, gathered at
    the :obj:`num_kept` kept positions: no host synchronisation).

    Raises:
        ValueError: If an edge-level argument has not one row per edge.
    """
    positions: list[Tensor] = []  # found once, on first use

    def masked(name: str, value: Any) -> Any:
        if name not in EDGE_LEVEL_ARGS or not isinstance(value, Tensor):
            return value
        if value.size(0) != mask.numel():
            raise ValueError(
                f"'{name}' has {value.size(0)} rows but the graph has "
                f'{mask.numel()} edges; it must hold one row per edge'
            )
        if not positions:
            positions.append(kept_positions(mask, num_kept))
        return value.index_select(0, positions[0])

    names = names[2 : 2 + len(args)]
    args = (
        tuple(masked(n, a) for n, a in zip(names, args)) + args[len(names) :]
    )
    return args, {k: masked(k, v) for k, v in kwargs.items()}
