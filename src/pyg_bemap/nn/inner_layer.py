r"""The layer a :class:`~pyg_bemap.BeMapConv` wraps: building and checking
it, the names of its positional arguments, and its entries in the state
dict, kept under its own names so that checkpoints of the vanilla model
load into the BeMap model and back."""

from inspect import Parameter, signature
from typing import Any

import torch
from torch_geometric.nn.conv import GCNConv, MessagePassing

from pyg_bemap.infra.checks import is_integer
from pyg_bemap.infra.private_api import state_dict_metadata

#: The attribute under which a BeMapConv holds its inner layer.
INNER = 'conv'
#: Second arguments of PyG's layers that are not the graph BeMap samples
#: (positions, a batch vector, initial features, hyperedges, signed or
#: typed edges), of layers a BeMapConv cannot wrap.
NOT_A_GRAPH = frozenset(
    {
        'pos',
        'batch',
        'x_0',
        'csr',
        'hyperedge_index',
        'pos_edge_index',
        'edge_index_dict',
    }
)
#: The kinds of the parameters a call can pass by position.
POSITIONAL = (Parameter.POSITIONAL_ONLY, Parameter.POSITIONAL_OR_KEYWORD)


def inner_names_on_save(
    module: torch.nn.Module,
    state_dict: dict[str, Any],
    prefix: str,
    local_metadata: Any,
) -> None:
    r"""Saves the inner layer's entries under its own names
    (:obj:`lin.weight`, not :obj:`conv.lin.weight`), as in the vanilla
    model."""
    inner = f'{prefix}{INNER}.'
    metadata = state_dict_metadata(state_dict)
    for entries in (state_dict, metadata or {}):
        for key in [k for k in entries if k.startswith(inner)]:
            entries[prefix + key[len(inner) :]] = entries.pop(key)
    if metadata and f'{prefix}{INNER}' in metadata:
        metadata[prefix[:-1]] = metadata.pop(f'{prefix}{INNER}')


def inner_names_on_load(
    module: torch.nn.Module,
    state_dict: dict[str, Any],
    prefix: str,
    *args: Any,
) -> None:
    r"""Loads the inner layer's entries saved under its own names (this
    layer's or the vanilla model's checkpoints); entries saved under
    :obj:`conv.` load as they are."""
    expected = set(getattr(module, INNER).state_dict())
    for key in [k for k in state_dict if k.startswith(prefix)]:
        name = key[len(prefix) :]
        if name in expected:
            state_dict[f'{prefix}{INNER}.{name}'] = state_dict.pop(key)


def inner_layer(
    conv: Any,
    out_channels: int | None,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> MessagePassing:
    r"""The layer to wrap: :obj:`conv`, or a :obj:`GCNConv` built from
    channel counts and its other arguments."""
    if is_integer(conv):
        if out_channels is None:
            raise ValueError(
                "'BeMapConv(in_channels, out_channels)' builds a GCNConv and "
                f'needs both channel counts (got in_channels={conv} only)'
            )
        return GCNConv(conv, out_channels, *args, **kwargs)
    if not isinstance(conv, MessagePassing):
        raise ValueError(
            f'BeMapConv wraps a message-passing layer (a subclass of '
            f"torch_geometric.nn.conv.MessagePassing, e.g. 'GCNConv(16, "
            f"32)') or builds a GCNConv from 'in_channels, out_channels' "
            f'(got {type(conv).__name__})'
        )
    second = positional_names(conv)[1:2]
    if second and second[0] in NOT_A_GRAPH:
        raise ValueError(
            f'BeMapConv passes the graph to a layer as its second argument, '
            f'and {type(conv).__name__} takes {second[0]!r} there: BeMap '
            f"wraps layers called as 'layer(x, edge_index, ...)'"
        )
    if out_channels is not None or args or kwargs:
        given = ['out_channels'] * (out_channels is not None) + list(kwargs)
        given += [repr(a) for a in args]
        raise ValueError(
            f'BeMapConv got a layer and {given}: pass the arguments to the '
            f'layer you build, or pass channel counts to build a GCNConv'
        )
    return conv


def positional_names(conv: torch.nn.Module) -> tuple[str, ...]:
    r"""The names of the parameters of :obj:`conv`'s forward that a call
    can pass by position, in order."""
    try:
        params = signature(conv.forward).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return ()
    return tuple(p.name for p in params if p.kind in POSITIONAL)
