r"""The two-layer node classifier of every method, and the reference
code's test-set fairness budgets."""

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor
from torch_geometric.nn import GCNConv, SAGEConv

from pyg_bemap import BeMapInfo
from pyg_bemap.nn import BeMapConv, RowNormConv, to_bemap
from pyg_bemap.rules import STRATEGIES
from pyg_bemap_lab.run_config import RunConfig
from pyg_bemap_lab.running.gat_conv import FusedGATConv

#: The reference code's test-set fairness budgets (delta_sp and delta_eo).
PAPER_BUDGETS = {
    'nba': 0.07,
    'recidivism': 0.05,
    'credit': 0.11,
    'pokec_z': 0.025,
}


class NodeClassifier(torch.nn.Module):
    r"""Two message-passing layers (or, for :obj:`'mlp'`, two linear
    layers that ignore the graph) and one output logit; with a BeMap
    :obj:`strategy`, both layers are wrapped in
    :class:`~pyg_bemap.BeMapConv`. With :obj:`config.head`, the second
    layer keeps :obj:`config.hidden` channels and a linear layer gives the
    logit, as in the reference code's model. Without a :obj:`strategy` the
    model only ever sees the full graph, and a GCN normalises it once.

    .. math::
        \mathbf{z} = \mathrm{conv}_2\bigl(\mathrm{drop}_{p}\bigl(
        \mathrm{ReLU}(\mathrm{conv}_1(\mathrm{drop}_{q}(\mathbf{X})))
        \bigr)\bigr)

    with :math:`p` = :obj:`config.dropout` on the hidden layer and
    :math:`q` = :obj:`config.input_dropout` on the input features, both
    only while training.
    """

    def __init__(
        self,
        in_channels: int,
        backbone: str,
        strategy: str | None,
        config: RunConfig,
    ):
        super().__init__()
        # On the full graph, the one graph a GCN without a sampler sees,
        # the normalisation is computed once.
        fixed = strategy is None
        makers: dict[str, Callable[[int, int], torch.nn.Module]] = {
            'mlp': lambda i, o: _Linear(i, o),
            'gcn': lambda i, o: GCNConv(i, o, cached=fixed),
            'sage': lambda i, o: SAGEConv(i, o),
            'gat': lambda i, o: FusedGATConv(i, o, heads=1),
            'row': lambda i, o: RowNormConv(i, o),
        }
        make = makers[backbone]
        self.conv1 = make(in_channels, config.hidden)
        self.conv2 = make(config.hidden, config.hidden if config.head else 1)
        self.head = torch.nn.Linear(config.hidden, 1) if config.head else None
        self.dropout = config.dropout
        self.input_dropout = config.input_dropout
        if strategy in STRATEGIES:
            to_bemap(
                self, settings=config.sampler_settings(strategy), inplace=True
            )

    def forward(
        self, x: Tensor, graph: Any, bemap: BeMapInfo | None = None
    ) -> Tensor:
        extra = {'bemap': bemap} if isinstance(self.conv1, BeMapConv) else {}
        x = self._dropout(x, self.input_dropout)
        x = self.conv1(x, graph, **extra).relu()
        x = self._dropout(x, self.dropout)
        x = self.conv2(x, graph, **extra)
        if self.head is not None:
            x = self.head(x)
        return x.view(-1)

    def _dropout(self, x: Tensor, rate: float) -> Tensor:
        # Inverted dropout as F.dropout, with a uniform draw: on CPU, twice
        # as fast as F.dropout's Bernoulli kernel for the hidden layer.
        if not self.training or rate == 0:
            return x
        keep = torch.rand_like(x) >= rate
        return x * keep * (1.0 / (1.0 - rate))


class _Linear(torch.nn.Linear):
    r"""A linear layer called like a message-passing layer (the graph is
    ignored): the layers of the MLP baseline."""

    def forward(self, x: Tensor, graph: Any = None) -> Tensor:
        return super().forward(x)
