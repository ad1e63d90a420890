r"""Experimental protocols as named objects: the datasets, methods,
seeds, tuning grid and training budget of an evaluation, and the stored
record of each of its runs."""

import itertools
from dataclasses import dataclass, field
from typing import Any

from pyg_bemap_lab.methods import ALL_METHODS, BACKBONES
from pyg_bemap_lab.names import DEFAULT_FRACTIONS
from pyg_bemap_lab.run_config import Chosen, RunConfig
from pyg_bemap_lab.running.tuned import TUNED


@dataclass(frozen=True)
class Protocol:
    r"""How methods are trained, tuned and compared.

    * Hyper-parameters: the backbones (MLP, GCN, SAGE, GAT) are tuned per
      dataset on the :obj:`grid` (every combination), each combination
      trained with the :obj:`grid_seeds`, choosing the lowest mean
      validation loss. A method that changes the training graph (BeMap and
      its ablations, FairDrop) keeps its backbone's choice, so that it and
      its backbone differ in the training graph only and start from the
      same weights for the same seed (all but BeMap(row), whose
      :class:`~pyg_bemap.RowNormConv` layers are not GCN's and are
      initialised their own way); FairDrop's :math:`\delta` is then
      chosen from :obj:`fairdrop_deltas` by the lowest mean validation
      :math:`\Delta_{SP} + \Delta_{EO}` at the fairness-aware epoch.
      Without :obj:`grid_seeds`, :obj:`config` is used as it is.
    * Training: at most :obj:`max_epochs`, stopping once the validation
      loss has not improved for :obj:`patience` epochs.
    * Split: :obj:`'random'`, a 50/25/25 split drawn from each run's seed;
      :obj:`'budgets'`, the same split per class with the reference code's
      class-balanced label budget (NBA 100, Recidivism 100, Credit 6000
      training nodes, half of each class), drawn from each run's seed
      (:func:`~pyg_bemap.datasets.reference_splits.per_class_split`); or
      :obj:`'reference'`, the reference loaders' fixed split
      (:mod:`~pyg_bemap.datasets.reference_splits`), the same for every
      seed.
    * Reported epochs: see :func:`~pyg_bemap_lab.running.training.train_run`;
      a protocol reports the validation rules, or, with
      :obj:`test_selection`, only the reference code's rule, which selects
      on the test split (labelled so wherever it is shown).
    * Comparisons: every method with the :obj:`seeds`, paired by seed.

    Args:
        name (str): The protocol's name, stored with every run.
        description (str): One line for people.
        datasets (tuple): The datasets.
        methods (tuple): The methods (keys of
            :obj:`~pyg_bemap_lab.methods.METHODS`).
        seeds (tuple): The seeds of the reported runs.
        max_epochs (int): The most epochs of a run.
        patience (int): Early-stopping patience on the validation loss.
        config (RunConfig): The configuration when nothing is tuned, and
            the fixed settings (weight decay, BeMap's beta and min_keep).
        grid (dict): Setting (a flat name of
            :meth:`~pyg_bemap_lab.run_config.RunConfig.as_dict`) -> the
            values to try.
        grid_seeds (tuple): The seeds of the tuning runs.
        fairdrop_deltas (tuple): FairDrop's :math:`\delta` values to
            try.
        sweep (dict): Method -> settings to sweep on top of the method's
            chosen hyper-parameters, each trained with :obj:`sweep_seeds`,
            for the trade-off plots.
        sweep_seeds (tuple): The seeds of the sweep.
        split (str): :obj:`'random'`, :obj:`'budgets'`, :obj:`'reference'` or
            :obj:`'stratified'` (see
            :func:`~pyg_bemap_lab.io.user_graphs.stratified_masks`); a graph
            of :obj:`graphs` with its own masks uses them.
        test_selection (bool): Report the reference code's test-split rule
            only.
        graphs (dict): Dataset name -> the file of a graph of one's own
            (saved :func:`~pyg_bemap_lab.io.user_graphs.user_graph`), read
            instead of a named dataset.
        fractions (tuple): The training and validation shares of the
            stratified split.
        tuned (dict): (dataset, backbone) -> settings chosen elsewhere
            (flat names), used on top of :obj:`config` instead of tuning.
    """

    name: str
    description: str
    datasets: tuple[str, ...]
    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    max_epochs: int
    patience: int
    config: RunConfig = field(default_factory=RunConfig)
    grid: dict[str, tuple] = field(default_factory=dict)
    grid_seeds: tuple[int, ...] = ()
    fairdrop_deltas: tuple[float, ...] = (0.16,)
    sweep: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    sweep_seeds: tuple[int, ...] = ()
    split: str = 'random'
    test_selection: bool = False
    graphs: dict[str, str] = field(default_factory=dict)
    fractions: tuple[float, float] = DEFAULT_FRACTIONS
    tuned: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def grid_configs(self) -> list[RunConfig]:
        r"""Every combination of the grid, on top of :obj:`config`."""
        names = sorted(self.grid)
        return [
            self.config.replace(**dict(zip(names, values)))
            for values in itertools.product(*(self.grid[n] for n in names))
        ]


_DEFAULT = Protocol(
    name='default',
    description='tuned backbones, 10 paired seeds, up to 1000 epochs',
    datasets=('nba', 'german', 'recidivism', 'credit'),
    methods=ALL_METHODS,
    seeds=tuple(range(10)),
    max_epochs=1000,
    patience=100,
    config=RunConfig(lr=1e-3, hidden=128, dropout=0.5),
    grid=dict(
        lr=(1e-3, 1e-2),
        hidden=(16, 128),
        dropout=(0.0, 0.5),
        input_dropout=(0.0, 0.5),
        scale=(True, False),
    ),
    grid_seeds=(0, 1),
    fairdrop_deltas=(0.08, 0.16, 0.32),
    sweep={
        'BeMap(sym)': tuple(
            dict(beta=beta, min_keep=min_keep)
            for beta in (0.1, 0.25, 0.5, 1.0)
            for min_keep in (1, 4)
        ),
        'FairDrop': tuple(
            dict(fairdrop_delta=delta)
            for delta in (0.0, 0.08, 0.16, 0.32, 0.5)
        ),
    },
    sweep_seeds=(0, 1, 2, 3, 4),
)

#: GCN against BeMap(sym) with the default protocol's choices: its
#: epochs, patience and base configuration, and GCN's tuned settings
#: (those of the confirmatory protocol and the exploratory arms).
_GCN_AGAINST_BEMAP: dict[str, Any] = dict(
    methods=('GCN', 'BeMap(sym)'),
    max_epochs=_DEFAULT.max_epochs,
    patience=_DEFAULT.patience,
    config=_DEFAULT.config,
    tuned={k: v for k, v in TUNED.items() if k[1] == 'GCN'},
)

PROTOCOLS: dict[str, Protocol] = {
    'default': _DEFAULT,
    'confirmatory': Protocol(
        name='confirmatory',
        description='pre-registered (lab/results/confirmatory): GCN and '
        "BeMap(sym), seeds 30-59, the default protocol's choices",
        datasets=('nba', 'recidivism', 'credit', 'german'),
        seeds=tuple(range(30, 60)),
        **_GCN_AGAINST_BEMAP,
    ),
    'exploratory-budgets': Protocol(
        name='exploratory-budgets',
        description="exploratory: the reference code's class-balanced "
        'label budgets, validation selection, GCN and BeMap(sym), 10 seeds',
        datasets=('nba', 'recidivism', 'credit'),
        seeds=tuple(range(10)),
        split='budgets',
        **_GCN_AGAINST_BEMAP,
    ),
    'exploratory-gap': Protocol(
        name='exploratory-gap',
        description="exploratory: the headline's GCN and BeMap(sym) on its "
        'first 10 seeds, rerun by named code with the threshold-free gap',
        datasets=('nba', 'german', 'recidivism', 'credit'),
        seeds=tuple(range(10)),
        **_GCN_AGAINST_BEMAP,
    ),
    'quick': Protocol(
        name='quick',
        description='NBA and German, 3 seeds, no tuning',
        datasets=('nba', 'german'),
        methods=('MLP', 'GCN', 'BeMap(sym)', 'FairDrop'),
        seeds=(0, 1, 2),
        max_epochs=300,
        patience=50,
        config=RunConfig(lr=1e-2, hidden=16, dropout=0.5),
    ),
    'reference': Protocol(
        name='reference',
        description="the reference code's split, model, 400 epochs and "
        'test-split selection',
        datasets=('nba', 'recidivism', 'credit'),
        methods=('GCN', 'BeMap(sym)', 'BeMap(sym)-renumbered'),
        seeds=(0, 1, 2, 3, 4),
        max_epochs=400,
        patience=400,  # no early stopping: every run trains 400 epochs
        config=RunConfig(lr=1e-3, hidden=128, dropout=0.0, head=True),
        split='reference',
        test_selection=True,
    ),
}


def tuned_backbones(protocol: Protocol) -> list[str]:
    r"""The methods whose hyper-parameters the protocol tunes."""
    names = {BACKBONES.get(m, m) for m in protocol.methods}
    return [m for m in ('MLP', 'GCN', 'SAGE', 'GAT') if m in names]


Job = tuple[str, str, RunConfig, int]  # dataset, method, config, seed


def sweep_configs(
    protocol: Protocol, chosen: Chosen, dataset: str
) -> list[tuple[str, RunConfig]]:
    r"""The (method, configuration) pairs of the trade-off sweep on
    :obj:`dataset`: each swept setting on top of the method's chosen
    hyper-parameters."""
    return [
        (method, chosen[dataset, method].replace(**setting))
        for method, settings in protocol.sweep.items()
        if method in protocol.methods
        for setting in settings
    ]


def record_of(
    protocol: Protocol, job: Job, result: dict[str, Any] | None = None
) -> dict[str, Any]:
    r"""The stored record of a job: its identity, and its result."""
    dataset, method, config, seed = job
    record = dict(
        protocol=protocol.name,
        dataset=dataset,
        method=method,
        config=config.as_dict(),
        seed=seed,
    )
    return {**record, **(result or {})}
