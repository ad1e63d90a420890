r"""Rule 1: validation of sensitive groups and of the graph they live on."""

from typing import Any

import torch
from torch import Tensor

from pyg_bemap.infra.checks import is_integer, require

#: The dtypes of node ids in an edge list.
EDGE_DTYPES = (torch.int64, torch.int32)
#: What group ids must be, and how to make them so.
_GROUP_IDS = 'groups must be the integers 0..G-1'
_REMAP_HINT = "remap them, e.g. with 'torch.unique(s, return_inverse=True)[1]'"


def sensitive_groups(
    sens: Tensor | None,
    num_nodes: int,
    num_groups: int | None = None,
    name: str = 'sens',
) -> tuple[Tensor, int]:
    r"""Checks a sensitive attribute and returns it as group ids.

    The sensitive attribute must be a 1-D tensor with one entry per node,
    holding the integers :math:`0, \ldots, G-1` (as :obj:`bool`, an integer
    dtype, or a floating dtype holding integral values). When :math:`G` is
    inferred, every group :math:`0, \ldots, G-1` must have a member: ids
    such as :obj:`{1, 2}` would add an empty group 0, which changes every
    balance score, so they raise an error that shows how to remap them.

    Args:
        sens (torch.Tensor): The sensitive attribute of every node.
        num_nodes (int): The number of nodes :math:`N`.
        num_groups (int, optional): The number of groups :math:`G`, when some
            may be absent (e.g. in a mini-batch). Inferred as
            :obj:`sens.max() + 1` when :obj:`None`. (default: :obj:`None`)
        name (str, optional): How to call the attribute in error messages.
            (default: :obj:`'sens'`)

    Returns:
        A new :obj:`torch.long` tensor of shape :obj:`[N]` and :math:`G`.

    Raises:
        ValueError: If :obj:`sens` is missing, has the wrong shape, holds
            non-integral, non-finite or negative values, or values not below
            :obj:`num_groups`, or, with :math:`G` inferred, a group without
            members.
    """
    attribute = f"The sensitive attribute '{name}'"
    if sens is None:
        raise ValueError(
            f'{attribute} is missing. Store one group id per node in the '
            f"graph (e.g. 'data.{name} = ...') or pass the name of the "
            'attribute that holds it'
        )
    check_tensor(sens, attribute)
    if sens.dim() != 1 or sens.numel() != num_nodes:
        hint = 'flatten it or select the right column'
        if sens.dim() == 1 and sens.numel() > num_nodes:
            hint = (
                "if the graph's last nodes have no edges, set "
                "'data.num_nodes' (PyG counts the nodes the edges name)"
            )
        raise ValueError(
            f'{attribute} must be a 1-D tensor with one entry per node '
            f'(expected shape [{num_nodes}], got {list(sens.shape)}); {hint}'
        )
    if sens.is_complex():
        raise ValueError(f'{attribute} must be real (got dtype {sens.dtype})')
    if sens.is_floating_point():
        if not bool(torch.isfinite(sens).all()):
            raise ValueError(
                f'{attribute} holds NaN or infinite values; every node needs '
                f'a known group (drop or impute the nodes whose group is '
                f'unknown)'
            )
        if bool((sens != sens.round()).any()):
            raise ValueError(
                f'{attribute} holds non-integral values; {_GROUP_IDS} '
                f'(binarise or bucket a continuous attribute first)'
            )
        if num_nodes > 0 and float(sens.abs().max()) >= 2**62:
            raise ValueError(
                f'{attribute} holds values of 2**62 or more; {_GROUP_IDS} '
                f'({_REMAP_HINT})'
            )
    sens = sens.to(torch.long)
    if num_nodes > 0 and int(sens.min()) < 0:
        raise ValueError(
            f'{attribute} holds negative values; {_GROUP_IDS} ({_REMAP_HINT})'
        )
    max_group = int(sens.max()) + 1 if num_nodes > 0 else 1
    if num_groups is None:
        if num_nodes > 0:  # a graph without nodes has one, empty, group
            _check_every_group_present(sens, max_group, name)
        return sens, max_group
    valid = is_integer(num_groups) and num_groups >= 1
    require(valid, 'num_groups', 'a positive integer', num_groups)
    if max_group > num_groups:
        raise ValueError(
            f"{attribute} holds the group {max_group - 1}, but 'num_groups' "
            f"is {num_groups}; raise 'num_groups' or remap the groups to "
            f'0..{num_groups - 1}'
        )
    return sens, int(num_groups)


def _check_every_group_present(
    sens: Tensor, max_group: int, name: str
) -> None:
    r"""Raises unless every id :math:`0, \ldots,` :obj:`max_group - 1`
    occurs; checks without allocating :obj:`max_group` entries."""
    present = torch.unique(sens)
    if present.numel() == max_group:
        return
    ids = present.tolist()
    example = sorted(set(range(min(max_group, 10))) - set(ids))
    shown = ', '.join(map(str, ids[:6])) + (', ...' if len(ids) > 6 else '')
    raise ValueError(
        f"The sensitive attribute '{name}' holds the ids {{{shown}}}, so "
        f'{max_group} groups are inferred, {max_group - len(ids)} of them '
        f'without members (e.g. {example}); an empty group would enter '
        f'every balance score. Remap the ids to '
        f"0..{len(ids) - 1} with 's = torch.unique(s, "
        f"return_inverse=True)[1]', or pass 'num_groups' if groups are "
        f'absent on purpose (e.g. in a mini-batch)'
    )


#: Where the number of nodes comes from when the groups give it.
SENS_COUNTS_NODES = "'sens' (one group per node)"


def graph_groups(
    edge_index: Tensor,
    sens: Tensor,
    num_nodes: int | None,
    num_groups: int | None,
) -> tuple[Tensor, int]:
    r""":func:`sensitive_groups` of a graph's :obj:`sens` after
    :func:`check_edge_index` and :func:`check_same_device`: the nodes are
    :obj:`num_nodes`, or one per entry of :obj:`sens`."""
    counted_by = "'num_nodes'"
    if num_nodes is None and isinstance(sens, Tensor):
        num_nodes, counted_by = sens.numel(), SENS_COUNTS_NODES
    num_nodes = check_edge_index(edge_index, num_nodes, counted_by)
    check_same_device(edge_index=edge_index, sens=sens)
    return sensitive_groups(sens, num_nodes, num_groups)


def check_edge_index(
    edge_index: Tensor, num_nodes: int | None, counted_by: str = 'the graph'
) -> int:
    r"""Checks that :obj:`edge_index` is a valid :obj:`[2, E]` integer tensor
    and returns the number of nodes (inferred when :obj:`num_nodes` is
    :obj:`None`); :obj:`counted_by` names where :obj:`num_nodes` comes from,
    so that an error blames the right argument.
    """
    check_tensor(edge_index, "'edge_index'")
    shape, dtype = list(edge_index.shape), edge_index.dtype
    two_rows = len(shape) == 2 and shape[0] == 2
    require(two_rows, 'edge_index', 'of shape [2, num_edges]', shape)
    node_ids = 'torch.long or torch.int node ids'
    require(dtype in EDGE_DTYPES, 'edge_index', node_ids, dtype)
    if edge_index.numel() > 0:
        if int(edge_index.min()) < 0:
            raise ValueError("'edge_index' holds negative node ids")
        max_id = int(edge_index.max())
        if num_nodes is None:
            num_nodes = max_id + 1
        elif max_id >= num_nodes:
            raise ValueError(
                f"'edge_index' refers to node {max_id}, but {counted_by} "
                f'gives only {num_nodes} nodes'
            )
    return int(num_nodes or 0)


def check_tensor(value: Any, name: str) -> None:
    r"""Raises a :class:`ValueError` unless :obj:`value` is a tensor;
    :obj:`name` calls it in the message (quoted if it is an argument)."""
    if not isinstance(value, Tensor):
        raise ValueError(
            f'{name} must be a torch.Tensor (got {type(value).__name__})'
        )


def check_same_device(**tensors: Tensor | None) -> None:
    r"""Raises a :class:`ValueError` if the given tensors live on different
    devices (what is not a tensor is left to the checks of its own)."""
    devices = {
        name: t.device for name, t in tensors.items() if isinstance(t, Tensor)
    }
    if len(set(devices.values())) > 1:
        listing = ', '.join(f"'{k}' on {v}" for k, v in devices.items())
        raise ValueError(
            f'All inputs must be on the same device (got '
            f"{listing}); move them with '.to(device)'"
        )
