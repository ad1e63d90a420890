from typing import Any

import torch
from torch_geometric.nn.models import GCN

from pyg_bemap.nn.to_bemap import to_bemap
from pyg_bemap.settings import SamplerSettings


class BeMapGCN(GCN):
    r""":class:`torch_geometric.nn.models.GCN` with every
    :class:`~torch_geometric.nn.conv.GCNConv` wrapped in
    :class:`~pyg_bemap.BeMapConv`: BeMap(sym) from `"BeMap: Balanced Message
    Passing for Fair Graph Neural Network"
    <https://arxiv.org/abs/2306.04107>`_: :obj:`to_bemap(GCN(...))` as a
    class, whose subclasses may build other layers in :obj:`init_conv`.

    Args:
        in_channels (int): Size of each input sample.
        hidden_channels (int): Size of each hidden sample.
        num_layers (int): Number of message-passing layers.
        out_channels (int, optional): Size of each output sample.
            (default: :obj:`None`)
        beta (float, optional): See :class:`~pyg_bemap.BeMapConv`.
            (default: :obj:`0.25`)
        min_keep (int, optional): See :class:`~pyg_bemap.BeMapConv`.
            (default: :obj:`4`)
        strategy (str, optional): See :class:`~pyg_bemap.BeMapConv`.
            (default: :obj:`'balance'`)
        settings (SamplerSettings, optional): See
            :class:`~pyg_bemap.BeMapConv`. (default: :obj:`None`)
        layout (str, optional): See :class:`~pyg_bemap.BeMapConv`.
            (default: :obj:`'auto'`)
        generator (torch.Generator, optional): See
            :class:`~pyg_bemap.BeMapConv`. (default: :obj:`None`)
        **kwargs: The other arguments of
            :class:`torch_geometric.nn.models.GCN`.
    """

    def __init__(
        self,
        in_channels: int,
        hidden_channels: int,
        num_layers: int,
        out_channels: int | None = None,
        *,
        beta: float | None = None,
        min_keep: int | None = None,
        strategy: str | None = None,
        settings: SamplerSettings | None = None,
        layout: str = 'auto',
        generator: torch.Generator | None = None,
        **kwargs: Any,
    ):
        super().__init__(
            in_channels, hidden_channels, num_layers, out_channels, **kwargs
        )
        to_bemap(
            self,
            beta=beta,
            min_keep=min_keep,
            strategy=strategy,
            settings=settings,
            layout=layout,
            generator=generator,
            inplace=True,
        )


__all__ = ['BeMapGCN']
