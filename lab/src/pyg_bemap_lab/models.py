r"""The methods of the evaluation: each one's backbone and training
graph, the paper's hyper-parameters, and the two-layer node classifier."""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch_geometric.nn import GCNConv, SAGEConv

from pyg_bemap import BeMapInfo, SamplerSettings
from pyg_bemap.nn import BeMapConv, RowNormConv, to_bemap
from pyg_bemap.rules import STRATEGIES
from pyg_bemap_lab.gat_conv import FusedGATConv
from pyg_bemap_lab.names import (
    BEMAP_BETA,
    BEMAP_MIN_KEEP,
    TRAIN_EPOCHS,
    TRAIN_PATIENCE,
)

#: The reference code's test-set fairness budgets (delta_sp and delta_eo).
PAPER_BUDGETS = {
    'nba': 0.07,
    'recidivism': 0.05,
    'credit': 0.11,
    'pokec_z': 0.025,
}


@dataclass
class Hyper:
    r"""The hyper-parameters of one run: the paper's, and the dropout rate
    on the input features (:obj:`input_dropout`, 0 as in most users'
    models; runs stored before it was named used :obj:`dropout` there)."""

    hidden: int = 128
    dropout: float = 0.5
    input_dropout: float = 0.0
    lr: float = 1e-3
    weight_decay: float = 1e-5
    epochs: int = TRAIN_EPOCHS
    patience: int = TRAIN_PATIENCE
    beta: float = BEMAP_BETA
    min_keep: int = BEMAP_MIN_KEEP
    fairdrop_delta: float = 0.16  # FairDrop's bias
    head: bool = False  # a linear output layer after the second conv

    @classmethod
    def from_config(
        cls, config: dict[str, Any], epochs: int, patience: int
    ) -> 'Hyper':
        r"""The hyper-parameters of a protocol's configuration (see
        :func:`~pyg_bemap_lab.training.train_run`): :obj:`lr`,
        :obj:`hidden`, :obj:`dropout` and :obj:`input_dropout` are
        required; the defaults fill the others it leaves out."""
        required = ('lr', 'hidden', 'dropout', 'input_dropout')
        missing = [name for name in required if name not in config]
        if missing:
            raise ValueError(
                f'a run configuration needs {", ".join(missing)} '
                f'(got {sorted(config)})'
            )
        names = required + (
            'weight_decay',
            'beta',
            'min_keep',
            'fairdrop_delta',
            'head',
        )
        return cls(
            epochs=epochs,
            patience=patience,
            **{name: config[name] for name in names if name in config},
        )

    def sampler_settings(self, strategy: str = 'balance') -> SamplerSettings:
        r"""BeMap's sampler settings: :obj:`beta`, :obj:`min_keep` and the
        :obj:`strategy` inside a group."""
        return SamplerSettings(
            beta=self.beta, min_keep=self.min_keep, strategy=strategy
        )


class NodeClassifier(torch.nn.Module):
    r"""Two message-passing layers (or, for :obj:`'mlp'`, two linear
    layers that ignore the graph) and one output logit; with a BeMap
    :obj:`strategy`, both layers are wrapped in
    :class:`~pyg_bemap.BeMapConv`. With :obj:`hyper.head`, the second layer
    keeps :obj:`hyper.hidden` channels and a linear layer gives the logit,
    as in the reference code's model. Without a :obj:`strategy` the model
    only ever sees the full graph, and a GCN normalises it once.

    .. math::
        \mathbf{z} = \mathrm{conv}_2\bigl(\mathrm{drop}_{p}\bigl(
        \mathrm{ReLU}(\mathrm{conv}_1(\mathrm{drop}_{q}(\mathbf{X})))
        \bigr)\bigr)

    with :math:`p` = :obj:`hyper.dropout` on the hidden layer and
    :math:`q` = :obj:`hyper.input_dropout` on the input features, both
    only while training.
    """

    def __init__(
        self,
        in_channels: int,
        backbone: str,
        strategy: str | None,
        hyper: Hyper,
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
        self.conv1 = make(in_channels, hyper.hidden)
        self.conv2 = make(hyper.hidden, hyper.hidden if hyper.head else 1)
        self.head = torch.nn.Linear(hyper.hidden, 1) if hyper.head else None
        self.dropout = hyper.dropout
        self.input_dropout = hyper.input_dropout
        if strategy in STRATEGIES:
            to_bemap(
                self, settings=hyper.sampler_settings(strategy), inplace=True
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
