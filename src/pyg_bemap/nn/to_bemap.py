r"""Turns an existing model into its BeMap version."""

import copy
from typing import Any

import torch
from torch_geometric.nn.conv import HeteroConv, MessagePassing

from pyg_bemap.infra.checks import check_generator
from pyg_bemap.infra.private_api import registered_children
from pyg_bemap.nn.bemap_conv import BeMapConv
from pyg_bemap.nn.sample_sharing import open_passes
from pyg_bemap.settings import SamplerSettings


def to_bemap(
    model: torch.nn.Module,
    *,
    beta: float | None = None,
    min_keep: int | None = None,
    strategy: str | None = None,
    settings: SamplerSettings | None = None,
    layout: str = 'auto',
    generator: torch.Generator | None = None,
    inplace: bool = False,
) -> torch.nn.Module:
    r"""Converts a model into its BeMap version, as in the `"BeMap: Balanced
    Message Passing for Fair Graph Neural Network"
    <https://arxiv.org/abs/2306.04107>`_ paper: every message-passing layer
    (the outermost :class:`~torch_geometric.nn.conv.MessagePassing` modules)
    is wrapped in :class:`~pyg_bemap.BeMapConv`, so that in training each
    layer passes messages over a fair neighbourhood, and in evaluation the
    model computes exactly what it computed before.

    .. code-block:: python

        data = BalanceAwareSampling(sens_attr='s')(data)
        model = to_bemap(GCN(data.num_features, 64, num_layers=2,
                             out_channels=2))
        out = model(data.x, data.edge_index)  # forward code unchanged

    It works on :mod:`torch_geometric.nn.models` (e.g.
    :class:`~torch_geometric.nn.models.GCN`, :obj:`GAT`, :obj:`GraphSAGE`,
    :obj:`GIN`, :obj:`EdgeCNN`), on :class:`~torch_geometric.nn.DeepGCNLayer`
    stacks, on layers inside :class:`torch.nn.ModuleList`,
    :class:`torch.nn.Sequential` and :class:`torch_geometric.nn.Sequential`,
    and on a user's own classes, and keeps the model's weights (a layer
    registered twice, e.g. tied weights, becomes one BeMap layer at both
    places). Every call of the model draws one sample, shared by all its
    BeMap layers: its forward hooks open and close the pass (see
    :mod:`pyg_bemap.nn.sample_sharing`); a call inside another model's
    pass joins it, unless :func:`~pyg_bemap.one_sample_per_call` says
    otherwise. Converting a converted model with
    the same settings changes nothing. State dicts keep the vanilla model's
    keys, so its checkpoints load into the BeMap model and back.

    Args:
        model (torch.nn.Module): The model (or a single message-passing
            layer).
        beta (float, optional): See :class:`~pyg_bemap.BeMapConv`.
            (default: :obj:`0.25`)
        min_keep (int, optional): See :class:`~pyg_bemap.BeMapConv`.
            (default: :obj:`4`)
        strategy (str, optional): See :class:`~pyg_bemap.BeMapConv`.
            (default: :obj:`'balance'`)
        settings (SamplerSettings, optional): The three above as one value.
            (default: :obj:`None`)
        layout (str, optional): See :class:`~pyg_bemap.BeMapConv`.
            (default: :obj:`'auto'`)
        generator (torch.Generator, optional): See
            :class:`~pyg_bemap.BeMapConv`. (default: :obj:`None`)
        inplace (bool, optional): Converts :obj:`model` itself instead of a
            deep copy. (default: :obj:`False`)

    Raises:
        ValueError: If the model has no message-passing layer, a layer
            caches its normalised graph (:obj:`cached=True`), a layer is a
            :class:`~torch_geometric.nn.conv.HeteroConv`, a layer takes
            something else than the graph as its second argument (e.g.
            :obj:`GCN2Conv`, :obj:`PointNetConv`), or a layer is already a
            :class:`~pyg_bemap.BeMapConv` with other settings.
    """
    if not isinstance(model, torch.nn.Module):
        raise ValueError(
            f"'model' must be a torch.nn.Module (got {type(model).__name__})"
        )
    options: dict[str, Any] = dict(
        settings=SamplerSettings.resolve(
            settings, beta=beta, min_keep=min_keep, strategy=strategy
        ),
        layout=layout,
        generator=check_generator(generator),
    )
    if not inplace:  # the copy's layers keep the caller's generator
        shared = {} if generator is None else {id(generator): generator}
        model = copy.deepcopy(model, memo=shared)
    if isinstance(model, MessagePassing):  # a BeMapConv stays as it is
        model = _wrap('model', model, options)
    else:
        layers = _message_passing_layers(model)
        if not layers:
            raise ValueError(
                f'to_bemap found no message-passing layer in '
                f'{type(model).__name__}: it wraps the modules that subclass '
                f'torch_geometric.nn.conv.MessagePassing (GCNConv, SAGEConv, '
                f'...)'
            )
        wrapped: dict[int, BeMapConv] = {}  # a layer used twice: one wrap
        for name, parent, child_name, layer in layers:
            if id(layer) not in wrapped:
                wrapped[id(layer)] = _wrap(name, layer, options)
            setattr(parent, child_name, wrapped[id(layer)])
    open_passes(model)
    return model


def _message_passing_layers(
    model: torch.nn.Module, prefix: str = ''
) -> list[tuple[str, torch.nn.Module, str, torch.nn.Module]]:
    r"""The outermost message-passing modules below :obj:`model`, as
    :obj:`(qualified name, parent, name in parent, module)`, every place
    a module is registered under (a layer shared by two names, or listed
    twice in a :class:`~torch.nn.ModuleList`, at each)."""
    found = []
    for name, child in registered_children(model):
        qualified = f'{prefix}{name}'
        if isinstance(child, HeteroConv):
            raise ValueError(
                f"to_bemap cannot convert '{qualified}' ({child}): BeMap "
                f'supports homogeneous graphs only'
            )
        if isinstance(child, MessagePassing):
            found.append((qualified, model, name, child))
        else:
            found += _message_passing_layers(child, f'{qualified}.')
    return found


def _wrap(
    name: str, layer: MessagePassing, options: dict[str, Any]
) -> BeMapConv:
    if isinstance(layer, BeMapConv):
        own = {key: getattr(layer, key) for key in options}
        if own != options:
            raise ValueError(
                f"'{name}' is already a BeMapConv with {own}, not "
                f'{options}; convert the vanilla model instead'
            )
        return layer
    try:
        return BeMapConv(layer, **options)
    except ValueError as error:
        raise ValueError(
            f"to_bemap cannot convert '{name}': {error}"
        ) from None
