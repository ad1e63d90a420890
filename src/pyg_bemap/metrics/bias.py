r"""Bias-amplification diagnostics, after Section 4 of `"BeMap: Balanced
Message Passing for Fair Graph Neural Network"
<https://arxiv.org/abs/2306.04107>`_: distance-based bias, its growth layer
by layer, and the share of a node's neighbours in its own group (the probe
of :mod:`~pyg_bemap.metrics.probe` bins its accuracy by that share).
"""

import math
import warnings
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch_geometric.nn.conv import MessagePassing
from torch_geometric.utils import remove_self_loops, scatter

from pyg_bemap.nn import BeMapConv
from pyg_bemap.rules.groups import (
    SENS_COUNTS_NODES,
    check_edge_index,
    check_same_device,
    sensitive_groups,
)


@dataclass(frozen=True)
class DistanceBias:
    r"""Distance-based bias of embeddings (see :func:`distance_bias`)."""

    bias: float
    centroid_gap: float


def check_embeddings(h: Tensor) -> None:
    r"""Raises unless :obj:`h` holds finite embeddings of at least one node,
    one row each."""
    if not isinstance(h, Tensor) or h.dim() != 2 or h.size(0) == 0:
        raise ValueError(
            "'h' must be a 2-D tensor of node embeddings, one row per node "
            '(and at least one node)'
        )
    if h.is_complex() or not bool(torch.isfinite(h).all()):
        raise ValueError(
            "'h' holds NaN, infinite or complex values; check the model's "
            'outputs (e.g. a diverged training run)'
        )


def group_centroids(h: Tensor, sens: Tensor, num_groups: int) -> Tensor:
    r"""The mean embedding of every group, shape :obj:`[G, d]` (NaN rows for
    empty groups).
    """
    total = scatter(h, sens, 0, dim_size=num_groups, reduce='sum')
    size = torch.bincount(sens, minlength=num_groups).to(h.dtype)
    return total / size.view(-1, 1)


def distance_bias(
    h: Tensor, sens: Tensor, num_groups: int | None = None
) -> DistanceBias:
    r"""The distance-based bias of embeddings :math:`\mathbf{H}` (the paper's
    Definition 3) and the gap between the group centroids:

    .. math::
        \mathrm{bias}(\mathbf{H}) = \frac{1}{\frac{1}{N} \sum_i
        \lVert \mathbf{h}_i - \boldsymbol{\mu}(s_i) \rVert^2}, \qquad
        \mathrm{gap} = \max_{g, h} \lVert \boldsymbol{\mu}(g) -
        \boldsymbol{\mu}(h) \rVert,

    where :math:`\boldsymbol{\mu}(g)` is the mean embedding of group
    :math:`g`. A larger bias means nodes sit closer to their group's
    centroid, i.e. the embeddings separate the groups more. Empty groups are
    left out of the gap, which is NaN (with a warning) where fewer than two
    groups have members; the bias is infinite when every node sits on its
    centroid.

    Args:
        h (torch.Tensor): Node embeddings, shape :obj:`[N, d]`.
        sens (torch.Tensor): The sensitive group of every node, :obj:`[N]`.
        num_groups (int, optional): The number of groups.
            (default: :obj:`None`, inferred)
    """
    check_embeddings(h)
    check_same_device(h=h, sens=sens)
    sens, num_groups = sensitive_groups(sens, h.size(0), num_groups)
    h = h.detach().double()
    centroids = group_centroids(h, sens, num_groups)
    spread = (h - centroids[sens]).pow(2).sum(1).mean().item()
    present = centroids[~centroids.isnan().any(1)]
    gap = float('nan')
    if present.size(0) >= 2:
        gap = torch.cdist(present, present).max().item()
    else:
        warnings.warn(
            'The centroid gap is NaN: it needs two groups with members '
            f'(groups with members: {present.size(0)} of {num_groups})',
            stacklevel=2,
        )
    return DistanceBias(
        bias=1.0 / spread if spread > 0 else math.inf, centroid_gap=gap
    )


def propagate(
    x: Tensor, edge_index: Tensor, num_nodes: int | None = None
) -> Tensor:
    r"""One row-normalised propagation step without weights: the mean over
    :math:`\mathcal{N}(i) \cup \{i\}` (self-loops of the input replaced by one
    per node),

    .. math::
        \mathbf{h}^{\prime}_i = \frac{1}{|\mathcal{N}(i)| + 1}
        \sum_{j \in \mathcal{N}(i) \cup \{i\}} \mathbf{h}_j.
    """
    num_nodes = check_edge_index(
        edge_index,
        num_nodes if num_nodes is not None else x.size(0),
        "'num_nodes'" if num_nodes is not None else "'x' (one row per node)",
    )
    edge_index, _ = remove_self_loops(edge_index)
    src, dst = edge_index[0].long(), edge_index[1].long()
    total = x + scatter(x[src], dst, 0, dim_size=num_nodes, reduce='sum')
    degree = torch.bincount(dst, minlength=num_nodes).to(x.dtype) + 1
    return total / degree.view(-1, 1)


def layerwise_distance_bias(
    model: torch.nn.Module,
    x: Tensor,
    edge_index: Any,
    sens: Tensor,
    *,
    sampled: bool = False,
    layers: list[str] | None = None,
) -> list[tuple[str, DistanceBias]]:
    r"""Applies :func:`distance_bias` to the input and to the output of every
    message-passing layer of :obj:`model`, so one sees how bias grows layer by
    layer.

    The model runs in evaluation mode under :func:`torch.no_grad`. With
    :obj:`sampled=True`, its :class:`~pyg_bemap.BeMapConv` layers run in
    training mode (on one fair neighbourhood) while everything else, e.g.
    dropout, stays in evaluation mode. The modes are restored afterwards,
    and so is every random state the call draws from (torch's and the
    layers' generators): measuring during training changes nothing of it.

    Args:
        model (torch.nn.Module): The model, called as
            :obj:`model(x, edge_index)`.
        x (torch.Tensor): Node features.
        edge_index: The graph, as the model takes it.
        sens (torch.Tensor): The sensitive group of every node.
        sampled (bool, optional): Whether BeMap layers sample.
            (default: :obj:`False`)
        layers (List[str], optional): Names of the modules to probe.
            (default: :obj:`None`, every message-passing layer, a
            :class:`~pyg_bemap.BeMapConv` counting as one)

    Returns:
        A list of :obj:`(name, DistanceBias)`, the input first.
    """
    names = layers if layers is not None else _message_passing_layers(model)
    modules = dict(model.named_modules())
    missing = [n for n in names if n not in modules]
    if missing:
        raise ValueError(f'No module named {missing} in the model')
    outputs: dict[str, Tensor] = {}
    handles = [
        modules[n].register_forward_hook(_keep_output(outputs, n))
        for n in names
    ]
    modes = {m: m.training for m in model.modules()}
    generators = {
        id(g): (g, g.get_state())
        for m in model.modules()
        if isinstance(m, BeMapConv) and (g := m.generator) is not None
    }
    devices = [x.device] if x.device.type == 'cuda' else []
    try:
        model.eval()
        if sampled:
            for module in model.modules():
                if isinstance(module, BeMapConv):
                    module.train()
        with torch.no_grad(), torch.random.fork_rng(devices):
            model(x, edge_index)
    finally:
        for handle in handles:
            handle.remove()
        for module, mode in modes.items():
            module.training = mode
        for generator, state in generators.values():
            generator.set_state(state)
    result = [('input', distance_bias(x, sens))]
    return result + [
        (n, distance_bias(outputs[n], sens)) for n in names if n in outputs
    ]


def _message_passing_layers(model: torch.nn.Module) -> list[str]:
    names: list[str] = []
    for name, module in model.named_modules():
        inside = any(name.startswith(f'{outer}.') for outer in names)
        if isinstance(module, MessagePassing) and not inside:
            names.append(name)
    return names


def _keep_output(store: dict[str, Tensor], name: str) -> Any:
    def hook(module: torch.nn.Module, args: Any, output: Any) -> None:
        store[name] = output[0] if isinstance(output, tuple) else output

    return hook


def majority_ratio(
    edge_index: Tensor, sens: Tensor, num_nodes: int | None = None
) -> Tensor:
    r"""Share of every node's neighbours (self-loops excluded) that belong to
    the node's own group; NaN for nodes without neighbours.
    """
    num_nodes = check_edge_index(
        edge_index,
        num_nodes if num_nodes is not None else sens.numel(),
        "'num_nodes'" if num_nodes is not None else SENS_COUNTS_NODES,
    )
    check_same_device(edge_index=edge_index, sens=sens)
    sens, _ = sensitive_groups(sens, num_nodes)
    edge_index, _ = remove_self_loops(edge_index)
    src, dst = edge_index[0].long(), edge_index[1].long()
    same = (sens[src] == sens[dst]).double()
    degree = torch.bincount(dst, minlength=num_nodes).double()
    own = scatter(same, dst, 0, dim_size=num_nodes, reduce='sum')
    return own / degree
