r"""The paper's methods, training with per-epoch evaluation, and model
selection (on the validation split by default)."""

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.nn import SAGEConv
from torch_geometric.typing import WITH_TORCH_SPARSE

from pyg_bemap.edge_index import BeMapEdgeIndex, BeMapInfo, get_bemap
from pyg_bemap.functional import balanced_edge_sample
from pyg_bemap.metrics import FairnessReport, fairness_report
from pyg_bemap.nn import BeMapConv, RowNormConv, to_bemap
from pyg_bemap.nn.fused import FusedGATConv, FusedGCNConv
from pyg_bemap.utils.layout import transposed_adjacency
from pyg_bemap.utils.sampling import STRATEGIES
from pyg_bemap_lab.baselines import fairdrop_edge
from pyg_bemap_lab.renumbering import renumber_like_reference
from pyg_bemap_lab.selection import (
    CURVE_METRICS,
    fairness_aware,
    lowest_validation_loss,
    select_on_test_split,
)

#: Each method's backbone and training graph (None for the full graph, a
#: BeMap strategy, 'fairdrop', see
#: :func:`~pyg_bemap_lab.baselines.fairdrop_edge`, or 'renumbered', BeMap's
#: sample renumbered as the reference code's training graph, a diagnostic
#: of its defect, see :mod:`~pyg_bemap_lab.renumbering`), by name.
METHODS: dict[str, tuple] = {
    'MLP': ('mlp', None),
    'GCN': ('gcn', None),
    'SAGE': ('sage', None),
    'GAT': ('gat', None),
    'BeMap(row)': ('row', 'balance'),
    'BeMap(sym)': ('gcn', 'balance'),
    'BeMap(sage)': ('sage', 'balance'),
    'BeMap(gat)': ('gat', 'balance'),
    'BeMap(sym)-uniform': ('gcn', 'uniform'),
    'BeMap(sym)-degree': ('gcn', 'degree'),
    'FairDrop': ('gcn', 'fairdrop'),
    'BeMap(sym)-renumbered': ('gcn', 'renumbered'),
}

#: The backbone of every method with another training graph.
BACKBONES = {
    'BeMap(row)': 'GCN',
    'BeMap(sym)': 'GCN',
    'BeMap(sage)': 'SAGE',
    'BeMap(gat)': 'GAT',
    'BeMap(sym)-uniform': 'GCN',
    'BeMap(sym)-degree': 'GCN',
    'FairDrop': 'GCN',
    'BeMap(sym)-renumbered': 'GCN',
}

#: The reference code's test-set fairness budgets (delta_sp and delta_eo).
PAPER_BUDGETS = {
    'nba': 0.07,
    'recidivism': 0.05,
    'credit': 0.11,
    'pokec_z': 0.025,
}

SELECTIONS = ('val-acc', 'val-auc', 'val-fair', 'paper')


@dataclass
class Hyper:
    r"""The paper's hyper-parameters."""

    hidden: int = 128
    dropout: float = 0.5
    lr: float = 1e-3
    weight_decay: float = 1e-5
    epochs: int = 200
    patience: int = 100
    beta: float = 0.25
    min_keep: int = 4
    delta: float = 0.16  # FairDrop's bias
    head: bool = False  # a linear output layer after the second conv


class NodeClassifier(torch.nn.Module):
    r"""Two message-passing layers (or, for :obj:`'mlp'`, two linear
    layers that ignore the graph) and one output logit; with a BeMap
    :obj:`strategy`, both layers are wrapped in
    :class:`~pyg_bemap.BeMapConv`. With :obj:`hyper.head`, the second layer
    keeps :obj:`hyper.hidden` channels and a linear layer gives the logit,
    as in the reference code's model.
    """

    def __init__(
        self,
        in_channels: int,
        backbone: str,
        strategy: str | None,
        hyper: Hyper,
    ):
        super().__init__()
        # FusedGCNConv remembers the normalisation of each graph it sees,
        # so the fixed graph of evaluation is normalised once.
        makers: dict[str, Callable[[int, int], torch.nn.Module]] = {
            'mlp': lambda i, o: _Linear(i, o),
            'gcn': lambda i, o: FusedGCNConv(i, o),
            'sage': lambda i, o: SAGEConv(i, o),
            'gat': lambda i, o: FusedGATConv(i, o, heads=1),
            'row': lambda i, o: RowNormConv(i, o),
        }
        make = makers[backbone]
        self.conv1 = make(in_channels, hyper.hidden)
        self.conv2 = make(hyper.hidden, hyper.hidden if hyper.head else 1)
        self.head = torch.nn.Linear(hyper.hidden, 1) if hyper.head else None
        self.dropout = hyper.dropout
        if strategy in STRATEGIES:
            to_bemap(
                self,
                beta=hyper.beta,
                min_keep=hyper.min_keep,
                strategy=strategy,
                inplace=True,
            )

    def forward(
        self, x: Tensor, graph: Any, bemap: BeMapInfo | None = None
    ) -> Tensor:
        extra = {'bemap': bemap} if isinstance(self.conv1, BeMapConv) else {}
        x = self._dropout(x)
        x = self.conv1(x, graph, **extra).relu()
        x = self._dropout(x)
        x = self.conv2(x, graph, **extra)
        if self.head is not None:
            x = self.head(x)
        return x.view(-1)

    def _dropout(self, x: Tensor) -> Tensor:
        # Inverted dropout as F.dropout, with a uniform draw: on CPU, twice
        # as fast as F.dropout's Bernoulli kernel for the hidden layer.
        if not self.training or self.dropout == 0:
            return x
        keep = torch.rand_like(x) >= self.dropout
        return x * keep * (1.0 / (1.0 - self.dropout))


class _Linear(torch.nn.Linear):
    r"""A linear layer called like a message-passing layer (the graph is
    ignored): the layers of the MLP baseline."""

    def forward(self, x: Tensor, graph: Any = None) -> Tensor:
        return super().forward(x)


def fast_graph(data: Data, backbone: str) -> Any:
    r"""The full graph in the fastest layout the backbone takes: a
    transposed sparse adjacency, whose sparse products avoid materialising
    one message per edge (a :class:`torch_sparse.SparseTensor` when
    installed, else a :obj:`torch.sparse` CSR tensor), for the GCN and SAGE
    backbones and, with :obj:`torch_sparse`, for
    :class:`~pyg_bemap.nn.fused.FusedGATConv` and
    :class:`~pyg_bemap.RowNormConv`; the edge list otherwise.
    """
    edge_index = data.edge_index
    if isinstance(edge_index, BeMapEdgeIndex):
        edge_index = edge_index.as_tensor()
    if backbone in ('gcn', 'sage') or (
        backbone in ('gat', 'row') and WITH_TORCH_SPARSE
    ):
        return transposed_adjacency(edge_index, data.num_nodes)
    return edge_index


@dataclass
class EpochRecord:
    epoch: int
    val: FairnessReport
    test: FairnessReport


@dataclass
class TrainResult:
    r"""The trained model, holding the parameters of the epoch with the best
    validation accuracy, and the reports of every epoch."""

    model: NodeClassifier
    records: list[EpochRecord]


def train_and_record(
    data: Data,
    method: str,
    seed: int,
    hyper: Hyper | None = None,
    on_epoch: Callable[[], None] | None = None,
) -> TrainResult:
    r"""Trains one method with binary cross-entropy on the training nodes and
    records the validation and test reports after every epoch, for at most
    :obj:`hyper.epochs` epochs, stopping early once the validation accuracy
    has not improved for :obj:`hyper.patience` epochs.
    """
    hyper = hyper or Hyper()
    trainer = Trainer(data, method, seed, hyper)
    records: list[EpochRecord] = []
    best_state = copy.deepcopy(trainer.model.state_dict())
    for epoch in range(1, hyper.epochs + 1):
        trainer.step()
        out = trainer.evaluate()
        records.append(
            EpochRecord(
                epoch,
                fairness_report(out, data.y, data.s, mask=data.val_mask),
                fairness_report(out, data.y, data.s, mask=data.test_mask),
            )
        )
        if on_epoch is not None:
            on_epoch()
        best = select(records, 'val-acc', None)
        assert best is not None
        if best.epoch == epoch:
            best_state = copy.deepcopy(trainer.model.state_dict())
        if epoch - best.epoch >= hyper.patience:
            break
    trainer.model.load_state_dict(best_state)
    trainer.model.eval()
    return TrainResult(trainer.model, records)


def train_run(
    data: Data,
    method: str,
    config: dict[str, Any],
    seed: int,
    max_epochs: int,
    patience: int,
    budget: float | None = None,
) -> dict[str, Any]:
    r"""Trains one run of a protocol and returns what the run store keeps:
    the validation curve and the test report at the epoch each rule picks.

    Training stops once the validation loss has not improved for
    :obj:`patience` epochs, or after :obj:`max_epochs`. The rules
    (:mod:`~pyg_bemap_lab.selection`): :obj:`'val-loss'`, the lowest
    validation loss; :obj:`'val-fair'`, the fairness-aware rule; and, with a
    :obj:`budget`, :obj:`'test-fair'`, the reference code's rule on the
    test split (labelled as test-set selection wherever it is reported).

    Args:
        data (Data): The graph with its split masks.
        method (str): A key of :obj:`METHODS`.
        config (dict): :obj:`lr`, :obj:`hidden`, :obj:`dropout`; optionally
            :obj:`weight_decay`, :obj:`beta`, :obj:`min_keep` (BeMap),
            :obj:`delta` (FairDrop) and :obj:`head` (see
            :class:`NodeClassifier`).
        seed (int): Sets the initialisation, dropout and sampling.
        max_epochs (int): The most epochs.
        patience (int): Epochs without a better validation loss before
            stopping.
        budget (float, optional): The reference budget of the test-split
            rule. (default: :obj:`None`)

    Returns:
        A dict with :obj:`epochs`, :obj:`curve` (the validation
        :obj:`loss`, :obj:`acc`, :obj:`auc`, :obj:`sp` and :obj:`eo` of
        every epoch), :obj:`test` (per rule, the epoch and its test
        :obj:`acc`, :obj:`auc`, :obj:`sp`, :obj:`eo`, or :obj:`None`) and
        :obj:`seconds`.
    """
    hyper = Hyper(
        hidden=config['hidden'],
        dropout=config['dropout'],
        lr=config['lr'],
        weight_decay=config.get('weight_decay', Hyper.weight_decay),
        beta=config.get('beta', Hyper.beta),
        min_keep=config.get('min_keep', Hyper.min_keep),
        delta=config.get('delta', Hyper.delta),
        head=config.get('head', Hyper.head),
    )
    start = time.perf_counter()
    trainer = Trainer(data, method, seed, hyper)
    val_y = data.y[data.val_mask].float()
    curve: dict[str, list[float]] = {k: [] for k in CURVE_METRICS}
    tests: list[FairnessReport] = []
    for epoch in range(max_epochs):
        trainer.step()
        out = trainer.evaluate()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            out[data.val_mask], val_y
        )
        report = fairness_report(out, data.y, data.s, mask=data.val_mask)
        for key, value in zip(CURVE_METRICS, (float(loss), *_metrics(report))):
            curve[key].append(value)
        tests.append(fairness_report(out, data.y, data.s, mask=data.test_mask))
        best = lowest_validation_loss(curve['loss'])
        if best is not None and epoch - best >= patience:
            break
    chosen = {
        'val-loss': lowest_validation_loss(curve['loss']),
        'val-fair': fairness_aware(
            curve['acc'], curve['auc'], curve['sp'], curve['eo']
        ),
    }
    if budget is not None:
        chosen['test-fair'] = select_on_test_split(
            [t.accuracy for t in tests],
            [t.delta_sp for t in tests],
            [t.delta_eo for t in tests],
            budget,
        )
    return {
        'epochs': len(tests),
        'curve': {k: [_round(v) for v in vs] for k, vs in curve.items()},
        'test': {
            rule: None
            if epoch is None
            else dict(
                epoch=epoch,
                **dict(
                    zip(('acc', 'auc', 'sp', 'eo'), _metrics(tests[epoch]))
                ),
            )
            for rule, epoch in chosen.items()
        },
        'seconds': round(time.perf_counter() - start, 2),
    }


def _metrics(report: FairnessReport) -> tuple[float, float, float, float]:
    return report.accuracy, report.auc, report.delta_sp, report.delta_eo


def _round(value: float) -> float:
    return value if math.isnan(value) else round(value, 5)


class Trainer:
    r"""One method on one graph: its model (initialised from :obj:`seed`),
    the Adam optimiser, and the graphs it trains and evaluates on (the full
    graph in the fastest layout; BeMap's layers sample from the carrier;
    FairDrop drops edges anew every epoch)."""

    def __init__(self, data: Data, method: str, seed: int, hyper: Hyper):
        backbone, sampler = METHODS[method]
        torch.manual_seed(seed)
        self.model = NodeClassifier(
            data.num_features, backbone, sampler, hyper
        )
        self.optimizer = torch.optim.Adam(
            self.model.parameters(),
            lr=hyper.lr,
            weight_decay=hyper.weight_decay,
        )
        self.data, self.sampler, self.hyper = data, sampler, hyper
        self.graph = fast_graph(data, backbone)
        self.bemap = get_bemap(data.edge_index)
        self.target = data.y[data.train_mask].float()

    def step(self) -> float:
        r"""One training epoch; returns the training loss."""
        model, data = self.model, self.data
        model.train()
        self.optimizer.zero_grad()
        out = model(data.x, self._training_graph(), self.bemap)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            out[data.train_mask], self.target
        )
        loss.backward()
        self.optimizer.step()
        return float(loss)

    def evaluate(self) -> Tensor:
        r"""The logits of every node on the full graph."""
        self.model.eval()
        with torch.no_grad():
            return self.model(self.data.x, self.graph, self.bemap)

    def _training_graph(self) -> Any:
        if self.sampler in STRATEGIES:  # BeMap samples from the carrier
            return self.data.edge_index
        if self.sampler == 'fairdrop':
            kept = self._fairdrop_sample()
        elif self.sampler == 'renumbered':
            kept = self._renumbered_sample()
        else:
            return self.graph
        return transposed_adjacency(kept, self.data.num_nodes)

    def _fairdrop_sample(self) -> Tensor:
        edge_index = self.data.edge_index
        if isinstance(edge_index, BeMapEdgeIndex):
            edge_index = edge_index.as_tensor()
        kept, _ = fairdrop_edge(edge_index, self.data.s, self.hyper.delta)
        return kept

    def _renumbered_sample(self) -> Tensor:
        if self.bemap is None:
            raise ValueError(
                "'BeMap(sym)-renumbered' needs a graph with BeMap "
                'information; apply BalanceAwareSampling to it first'
            )
        kept, _ = balanced_edge_sample(
            self.data.edge_index,
            self.bemap.sens,
            self.bemap.balance,
            beta=self.hyper.beta,
            min_keep=self.hyper.min_keep,
        )
        return renumber_like_reference(
            kept.as_subclass(Tensor), self.bemap.sens
        )


def select(
    records: list[EpochRecord], selection: str, budget: float | None
) -> EpochRecord | None:
    r"""Picks the reported epoch.

    * :obj:`'val-acc'`: the best validation accuracy (ties: the earliest
      epoch), the default;
    * :obj:`'val-auc'`: the best validation AUC (ties: the earliest epoch);
    * :obj:`'val-fair'`: the best validation accuracy among epochs whose
      validation :math:`\Delta_{SP}` and :math:`\Delta_{EO}` are below
      :obj:`budget` (the reference code's budgets), or :obj:`None` if none is;
    * :obj:`'paper'`: the reference code's protocol, the best **test**
      accuracy among epochs whose **test** gaps are below :obj:`budget`
      (selection on the test split, reported only for comparison).
    """
    if selection == 'val-acc':
        return max(records, key=lambda r: _finite(r.val.accuracy))
    if selection == 'val-auc':
        return max(records, key=lambda r: _finite(r.val.auc))
    if budget is None:
        return None
    split = 'test' if selection == 'paper' else 'val'
    eligible = [
        r
        for r in records
        if getattr(r, split).delta_sp < budget
        and getattr(r, split).delta_eo < budget
    ]
    if not eligible:
        return None
    return max(eligible, key=lambda r: getattr(r, split).accuracy)


def _finite(value: float) -> float:
    return -math.inf if math.isnan(value) else value
