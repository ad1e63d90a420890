r"""One training loop for every command: a :class:`Trainer` steps one
method on one graph with a random stream of its own; :func:`train` runs it
with early stopping on the validation loss and records every epoch; and
:func:`train_run` gives the record the run store keeps."""

import contextlib
import copy
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.utils import to_torch_csr_tensor

from pyg_bemap import BeMapEdgeIndex, balanced_edge_sample, get_bemap
from pyg_bemap.metrics import (
    FairnessReport,
    OnePredictedClassWarning,
    fairness_report,
)
from pyg_bemap.rules import STRATEGIES
from pyg_bemap_lab.methods import METHODS
from pyg_bemap_lab.names import TRAIN_EPOCHS, TRAIN_PATIENCE
from pyg_bemap_lab.run_config import RunConfig
from pyg_bemap_lab.running.fairdrop import fairdrop_edge
from pyg_bemap_lab.running.models import NodeClassifier
from pyg_bemap_lab.running.provenance import device_name, provenance
from pyg_bemap_lab.running.renumbering import renumber_like_reference
from pyg_bemap_lab.selection import (
    CURVE_METRICS,
    DEFAULT_RULE,
    RUNNING_RULES,
    STORED_RULES,
    check_rule,
    pick_epoch,
)


@dataclass
class History:
    r"""What a run recorded after every epoch: the validation curve (a list
    per metric of :obj:`~pyg_bemap_lab.selection.CURVE_METRICS`) and the
    test reports."""

    val: dict[str, list[float]] = field(
        default_factory=lambda: {k: [] for k in CURVE_METRICS}
    )
    test: list[FairnessReport] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.test)

    def record(self, out: Tensor, data: Data) -> None:
        r"""Records the epoch whose logits are :obj:`out` (threshold 0)."""
        val, test = data.val_mask, data.test_mask
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            out[val], data.y[val].float()
        )
        with warnings.catch_warnings():  # the lab flags them: degenerate.py
            warnings.simplefilter('ignore', OnePredictedClassWarning)
            report = fairness_report(
                out, data.y, data.s, mask=val, threshold=0
            )
            values = (float(loss), *_metrics(report), positive_share(report))
            report = fairness_report(
                out, data.y, data.s, mask=test, threshold=0
            )
        for key, value in zip(CURVE_METRICS, values):
            self.val[key].append(value)
        self.test.append(report)

    def pick(self, rule: str, budget: float | None = None) -> int | None:
        r"""The epoch (0-based) that :obj:`rule` picks (see
        :mod:`~pyg_bemap_lab.selection`), or :obj:`None`."""
        test = None
        if rule == 'test-fair':
            test = {
                'acc': [t.accuracy for t in self.test],
                'sp': [t.delta_sp for t in self.test],
                'eo': [t.delta_eo for t in self.test],
            }
        return pick_epoch(rule, self.val, test, budget)


@dataclass
class Run:
    r"""A trained method: its model, holding the parameters of the epoch
    that :obj:`kept` picks, its :class:`History` and its training time:
    wall-clock :obj:`seconds` and the process's :obj:`cpu_seconds` (which
    other processes sharing the cores, or a paused run, do not inflate)."""

    model: NodeClassifier
    history: History
    kept: str
    seconds: float
    cpu_seconds: float


def train(
    data: Data,
    method: str,
    seed: int,
    config: RunConfig | None = None,
    epochs: int = TRAIN_EPOCHS,
    patience: int = TRAIN_PATIENCE,
    keep: str = DEFAULT_RULE,
    on_epoch: Callable[[], None] | None = None,
) -> Run:
    r"""Trains one method with binary cross-entropy on the training nodes
    and records the validation curve and the test report after every
    epoch, for at most :obj:`epochs` epochs, stopping early once the
    validation loss has not improved for :obj:`patience` epochs.

    Args:
        data (Data): The graph with its split masks (and BeMap's
            information, see :class:`~pyg_bemap.BalanceAwareSampling`, for
            a BeMap method).
        method (str): A key of :obj:`~pyg_bemap_lab.methods.METHODS`.
        seed (int): Sets the initialisation, dropout and sampling.
        config (RunConfig, optional): The configuration.
        epochs (int, optional): The most epochs.
        patience (int, optional): Epochs without a better validation loss
            before stopping.
        keep (str, optional): The rule whose epoch's parameters the
            returned model holds, one of
            :obj:`~pyg_bemap_lab.selection.RUNNING_RULES` (if it picks no
            epoch: the initial parameters). (default:
            :obj:`~pyg_bemap_lab.selection.DEFAULT_RULE`)
        on_epoch (callable, optional): Called after every epoch.
    """
    check_rule(keep, RUNNING_RULES)
    start, cpu_start = time.perf_counter(), time.process_time()
    trainer = Trainer(data, method, seed, config or RunConfig())
    history = History()
    kept_state = copy.deepcopy(trainer.model.state_dict())
    for epoch in range(epochs):
        trainer.step()
        history.record(trainer.evaluate(), data)
        if on_epoch is not None:
            on_epoch()
        best = history.pick('val-loss')
        if (best if keep == 'val-loss' else history.pick(keep)) == epoch:
            kept_state = copy.deepcopy(trainer.model.state_dict())
        if best is not None and epoch - best >= patience:
            break
    trainer.model.load_state_dict(kept_state)
    trainer.model.eval()
    seconds = time.perf_counter() - start
    cpu_seconds = time.process_time() - cpu_start
    return Run(trainer.model, history, keep, seconds, cpu_seconds)


def train_run(
    data: Data,
    method: str,
    config: RunConfig,
    seed: int,
    max_epochs: int,
    patience: int,
    budget: float | None = None,
) -> dict[str, Any]:
    r"""Trains one run of a protocol with :func:`train` and returns what the
    run store keeps: the validation curve and the test report at the epoch
    of each rule of :obj:`~pyg_bemap_lab.selection.STORED_RULES` and, with
    a :obj:`budget`, of :obj:`'test-fair'` (labelled as test-set selection
    wherever it is reported; see :mod:`~pyg_bemap_lab.selection`).

    Args:
        data (Data): The graph with its split masks.
        method (str): A key of :obj:`~pyg_bemap_lab.methods.METHODS`.
        config (RunConfig): The configuration.
        seed (int): Sets the initialisation, dropout and sampling.
        max_epochs (int): The most epochs.
        patience (int): Epochs without a better validation loss before
            stopping.
        budget (float, optional): The reference budget of the test-split
            rule. (default: :obj:`None`)

    Returns:
        A dict with :obj:`epochs`, :obj:`curve` (the validation metrics of
        :obj:`~pyg_bemap_lab.selection.CURVE_METRICS`, every epoch),
        :obj:`test` (per rule, the epoch and its test
        :obj:`acc`, :obj:`auc`, :obj:`sp`, :obj:`eo`, :obj:`prob` (the
        threshold-free gap, :obj:`FairnessReport.delta_prob`) and
        :obj:`pos`, the
        share of test nodes predicted positive; or :obj:`None`),
        :obj:`seconds` (wall clock), :obj:`cpu_seconds` and
        :obj:`provenance` (:func:`~pyg_bemap_lab.running.provenance.provenance`
        with the :obj:`device`).
    """
    run = train(data, method, seed, config, max_epochs, patience)
    history = run.history
    rules = STORED_RULES + (() if budget is None else ('test-fair',))
    chosen = {rule: history.pick(rule, budget) for rule in rules}
    record = {
        'epochs': len(history),
        'curve': {k: [_round(v) for v in vs] for k, vs in history.val.items()},
        'test': {
            rule: None if epoch is None else _picked(history, epoch)
            for rule, epoch in chosen.items()
        },
        'seconds': round(run.seconds, 2),
        'cpu_seconds': round(run.cpu_seconds, 2),
        'provenance': provenance() | {'device': device_name(data.x.device)},
    }
    return record


def _picked(history: History, epoch: int) -> dict[str, Any]:
    report = history.test[epoch]
    return dict(
        epoch=epoch,
        **dict(zip(('acc', 'auc', 'sp', 'eo', 'prob'), _metrics(report))),
        pos=positive_share(report),
    )


def positive_share(report: FairnessReport) -> float:
    r"""The share of the report's nodes predicted positive."""
    groups = [g for g in report.by_group.values() if g.size > 0]
    size = sum(g.size for g in groups)
    if size == 0:
        return math.nan
    return sum(g.size * g.positive_rate for g in groups) / size


def _metrics(report: FairnessReport) -> tuple[float, ...]:
    return (
        report.accuracy,
        report.auc,
        report.delta_sp,
        report.delta_eo,
        report.delta_prob,
    )


def _round(value: float) -> float:
    return value if math.isnan(value) else round(value, 5)


class RandomStream:
    r"""A random stream of its own, started from :obj:`seed`: inside
    :obj:`with stream:`, torch's global generator (and, for a CUDA
    :obj:`device`, that device's) draws from the stream, which goes on
    where it stopped the time before; on leaving, the caller's random state
    is restored."""

    def __init__(self, seed: int, device: torch.device) -> None:
        self._devices = [device] if device.type == 'cuda' else []
        self._forks = contextlib.ExitStack()
        with torch.random.fork_rng(devices=self._devices):
            # not torch.manual_seed, which also seeds every GPU, restored
            # by no fork of the devices used here
            torch.default_generator.manual_seed(seed)
            for device in self._devices:
                with torch.cuda.device(device):
                    torch.cuda.manual_seed(seed)
            self._state = self._get()

    def __enter__(self) -> 'RandomStream':
        self._forks.enter_context(torch.random.fork_rng(self._devices))
        torch.set_rng_state(self._state[0])
        for device, state in zip(self._devices, self._state[1]):
            torch.cuda.set_rng_state(state, device)
        return self

    def __exit__(self, *exc: object) -> None:
        self._state = self._get()
        self._forks.close()

    def _get(self) -> tuple[Tensor, list[Tensor]]:
        return torch.get_rng_state(), [
            torch.cuda.get_rng_state(d) for d in self._devices
        ]


def full_graph(data: Data, layer: str, sampler: str | None) -> Any:
    r"""The full graph as :obj:`layer`'s layers take it fastest: the
    carrier for a BeMap :obj:`sampler`, a transposed :obj:`torch.sparse`
    CSR adjacency for :obj:`'gcn'` and :obj:`'sage'` layers, the edge list
    otherwise."""
    edge_index = data.edge_index
    if sampler in STRATEGIES or layer not in ('gcn', 'sage'):
        return edge_index
    edge_index = plain_edges(edge_index)
    with warnings.catch_warnings():  # torch's notices on sparse CSR tensors
        warnings.simplefilter('ignore', UserWarning)
        return to_torch_csr_tensor(
            edge_index.flip(0), size=(data.num_nodes, data.num_nodes)
        )


def plain_edges(edge_index: Tensor) -> Tensor:
    r"""The edge list as a plain tensor (the carrier's edges without its
    BeMap information)."""
    if isinstance(edge_index, BeMapEdgeIndex):
        return edge_index.as_tensor()
    return edge_index


class Trainer:
    r"""One method on one graph: its model (initialised from :obj:`seed`),
    the Adam optimiser, and the graphs it trains and evaluates on (BeMap's
    layers sample from the carrier; FairDrop drops edges anew every epoch;
    the full graph of GCN and SAGE layers is a transposed sparse adjacency,
    whose products avoid one message per edge: about 3x faster on
    Recidivism).

    The trainer has its own random stream, started from :obj:`seed`: the
    initialisation, dropout and every sample draw from it, and the
    caller's global random state is left as it was.
    """

    def __init__(
        self, data: Data, method: str, seed: int, config: RunConfig
    ) -> None:
        if method not in METHODS:
            raise ValueError(
                f'unknown method {method!r}; choose from ' + ', '.join(METHODS)
            )
        layer, sampler = METHODS[method].layer, METHODS[method].graph
        self._stream = RandomStream(seed, data.x.device)
        with self._stream:
            self.model = NodeClassifier(
                data.num_features, layer, sampler, config
            )
        self.optimizer = torch.optim.Adam(
            self.model.parameters(),
            lr=config.lr,
            weight_decay=config.weight_decay,
        )
        self.data, self.sampler, self.config = data, sampler, config
        self.bemap = get_bemap(data.edge_index)
        self.graph = full_graph(data, layer, sampler)
        self.target = data.y[data.train_mask].float()

    def step(self) -> float:
        r"""One training epoch; returns the training loss."""
        model, data = self.model, self.data
        model.train()
        self.optimizer.zero_grad()
        with self._stream:
            out = model(data.x, self._training_graph(), self.bemap)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                out[data.train_mask], self.target
            )
            loss.backward()
        self.optimizer.step()
        return float(loss.detach())

    def evaluate(self) -> Tensor:
        r"""The logits of every node on the full graph."""
        self.model.eval()
        with torch.no_grad(), self._stream:
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
        return kept

    def _fairdrop_sample(self) -> Tensor:
        kept, _ = fairdrop_edge(
            plain_edges(self.data.edge_index),
            self.data.s,
            self.config.fairdrop_delta,
        )
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
            settings=self.config.sampler_settings(),
        )
        return renumber_like_reference(
            kept.as_subclass(Tensor), self.bemap.sens
        )
