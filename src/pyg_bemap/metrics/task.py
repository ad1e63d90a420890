r"""The binary fairness task of a graph: its edges, one sensitive group per
node and binary labels, checked with errors that say what to do."""

from typing import NamedTuple

import torch
from torch import Tensor
from torch_geometric.data import Data

from pyg_bemap.infra.compat import plain_tensor
from pyg_bemap.rules.groups import check_edge_index, sensitive_groups


class FairnessTask(NamedTuple):
    r"""What :func:`fairness_task` returns."""

    edge_index: Tensor  #: The edges, a plain tensor.
    sens: Tensor  #: The group of every node, :math:`0, \ldots, G - 1`.
    num_groups: int  #: The number of groups :math:`G \geq 2`.
    labels: Tensor  #: 0 or 1 per node, -1 for unlabelled nodes.


def fairness_task(
    data: Data, sens_attr: str = 's', label_attr: str = 'y'
) -> FairnessTask:
    r"""Checks that :obj:`data` poses a binary fairness task and returns
    its parts: an :obj:`edge_index`, a sensitive attribute with at least
    two groups, and one binary label per node (:obj:`-1` marks an
    unlabelled node, as in PyG).

    Args:
        data (Data): The graph.
        sens_attr (str, optional): The sensitive attribute's name.
            (default: :obj:`'s'`)
        label_attr (str, optional): The labels' name. (default: :obj:`'y'`)

    Raises:
        ValueError: Naming what is missing or wrong, and what to do.
    """
    edge_index = getattr(data, 'edge_index', None)
    if edge_index is None:
        raise ValueError(
            "The graph has no 'edge_index': store its edges as a [2, E] "
            'tensor of node indices'
        )
    _check_tensor(edge_index, 'edge_index')
    edge_index = plain_tensor(edge_index)
    num_nodes = check_edge_index(edge_index, data.num_nodes)
    sens, num_groups = sensitive_groups(
        getattr(data, sens_attr, None), num_nodes, name=sens_attr
    )
    if num_groups < 2:
        raise ValueError(
            f"The sensitive attribute '{sens_attr}' holds one group only: "
            'there is nothing to balance or compare; pass the attribute '
            "that holds the groups with 'sens_attr'"
        )
    labels = binary_labels(data, label_attr, num_nodes)
    return FairnessTask(edge_index, sens, num_groups, labels)


def binary_labels(data: Data, label_attr: str, num_nodes: int) -> Tensor:
    r"""The labels :obj:`data[label_attr]` as a :obj:`long` vector of 0, 1
    and -1 (unlabelled: any negative integer); a :class:`ValueError` says
    how to binarise any other labels."""
    y = getattr(data, label_attr, None)
    if y is not None:
        _check_tensor(y, label_attr)
    if not isinstance(y, Tensor) or y.numel() != num_nodes:
        raise ValueError(
            f"The graph needs one label per node in 'data.{label_attr}'; "
            "pass 'label_attr' if the labels are stored under another name"
        )
    y = y.view(-1)
    if y.is_floating_point():
        unmarked = y.isnan() | ((y < 0) & (y != y.round()))
    else:
        unmarked = torch.zeros_like(y, dtype=torch.bool)
    if bool(unmarked.any()):
        shown = ', '.join(f'{v:g}' for v in y[unmarked][:3].tolist())
        raise ValueError(
            f"The labels in 'data.{label_attr}' must be 0 and 1, -1 for "
            f'unlabelled nodes (got {shown}); mark a node without a label '
            f'with -1, not NaN or a negative fraction'
        )
    values = torch.unique(y[y >= 0]).tolist()
    if not set(values) <= {0, 1}:
        shown = ', '.join(f'{v:g}' for v in values[:6])
        raise ValueError(
            f"The labels in 'data.{label_attr}' must be binary (0 and 1, -1 "
            f'for unlabelled nodes; got '
            f'{shown}{", ..." if len(values) > 6 else ""}): the fairness '
            f'gaps compare positive rates. Map them to 0 and 1 first, e.g. '
            f"'data.{label_attr} = (data.{label_attr} == positive).long()'"
        )
    return torch.where(y < 0, -1, y.long())


def _check_tensor(value: object, name: str) -> None:
    if not isinstance(value, Tensor):
        raise ValueError(
            f"'data.{name}' must be a torch.Tensor (got "
            f'{type(value).__module__}.{type(value).__name__}); convert it, '
            f"e.g. 'data.{name} = torch.as_tensor(data.{name})'"
        )
