r"""Before any training: how much room a graph leaves BeMap to act."""

import textwrap
import warnings
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data

from pyg_bemap.infra.checks import check_seed
from pyg_bemap.metrics.json_ready import nan_as_none
from pyg_bemap.metrics.report_inputs import selected_nodes
from pyg_bemap.metrics.task import fairness_task
from pyg_bemap.rules.balance import imbalance
from pyg_bemap.rules.counts import (
    DEFAULT_MEMORY_BUDGET,
    checked_hop_group_counts,
)
from pyg_bemap.rules.draw import group_edges
from pyg_bemap.rules.quotas import fair_quotas
from pyg_bemap.settings import SamplerSettings

#: The quantiles of the imbalance :math:`D_i` that a diagnosis reports.
QUANTILES = {'min': 0.0, 'q25': 0.25, 'median': 0.5, 'q75': 0.75, 'max': 1.0}


@dataclass(frozen=True)
class Diagnosis:
    r"""What decides whether BeMap has room to act on a graph (see
    :func:`diagnose`). Shares are in :math:`[0, 1]`."""

    num_nodes: int  #: Nodes.
    num_edges: int  #: Directed edges, self-loops excluded.
    group_sizes: list[int]  #: Nodes per sensitive group.
    edge_homophily: float  #: Share of edges whose ends share a group.
    #: Per group :math:`g`: the share of edges into members of :math:`g`
    #: that come from :math:`g` (NaN for a group without such edges).
    group_homophily: list[float]
    #: Among nodes with neighbours, the share whose
    #: :math:`\mathcal{N}(i) \cup \{i\}` holds one group only: the only
    #: neighbourhoods BeMap thins by :math:`\beta` and :math:`m`.
    one_group_fraction: float
    #: The share of edges one sample keeps (the same in every sample).
    kept_edge_fraction: float
    #: Quantiles and mean of the imbalance :math:`D_i` over the nodes.
    imbalance: dict[str, float]
    #: The labels' own statistical-parity gap over labelled nodes:
    #: :math:`\max_g P(y=1 \mid s=g) - \min_g P(y=1 \mid s=g)` (NaN, with
    #: a warning, when fewer than two groups have labelled nodes).
    label_gap: float
    #: The statistical-parity gap of an MLP's test predictions, if asked
    #: (fit and tested on labelled nodes only; NaN, with a warning, with
    #: fewer than two labelled training nodes).
    mlp_gap: float | None
    settings: SamplerSettings  #: The settings the shares assume.

    def to_dict(self) -> dict[str, Any]:
        r"""The diagnosis as plain Python values (JSON-ready: an undefined
        value, NaN here, is :obj:`None`)."""
        out = asdict(self)
        out['settings'] = asdict(self.settings)
        return nan_as_none(out)

    def __str__(self) -> str:
        def share(value: float) -> str:
            return f'{100 * value:.1f} %'

        groups = ', '.join(
            f'{g}: {n} ({share(h)} homophilous)'
            for g, (n, h) in enumerate(
                zip(self.group_sizes, self.group_homophily)
            )
        )
        spread = ', '.join(f'{k} {v:.2f}' for k, v in self.imbalance.items())
        lines = [
            f'{self.num_nodes} nodes, {self.num_edges} directed edges',
            f'groups: {groups}',
            f'edge homophily: {share(self.edge_homophily)}',
            f'one-group neighbourhoods: {share(self.one_group_fraction)}'
            ' of the nodes with neighbours',
            f'kept edges per sample: {share(self.kept_edge_fraction)}',
            f'imbalance D: {spread}',
            f'label gap (statistical parity): {share(self.label_gap)}',
        ]
        if self.mlp_gap is not None:
            lines.append(
                f'MLP gap (statistical parity): {share(self.mlp_gap)}'
            )
        return '\n'.join(
            textwrap.fill(line, 80, subsequent_indent='    ') for line in lines
        )


def diagnose(
    data: Data,
    sens_attr: str = 's',
    label_attr: str = 'y',
    *,
    settings: SamplerSettings | None = None,
    mlp: bool = False,
    seed: int = 0,
) -> Diagnosis:
    r"""Measures, before any training, what decides whether BeMap has room
    to act on a graph: how homophilous its edges are in the sensitive
    attribute, how many neighbourhoods hold one group only (the only ones
    BeMap thins by :math:`\beta` and :math:`m`; every other one it
    balances), how many edges a sample keeps, how imbalanced the nodes'
    :math:`L`-hop neighbourhoods are (:math:`D_i` of
    :func:`~pyg_bemap.balance_score`), and how unfair the labels
    themselves are.

    .. code-block:: python

        print(diagnose(data, sens_attr='s', label_attr='y'))
        diagnose(data).to_dict()  # JSON-ready

    Args:
        data (Data): The graph, with :obj:`edge_index`, the sensitive
            attribute and binary labels.
        sens_attr (str, optional): The sensitive attribute's name.
            (default: :obj:`'s'`)
        label_attr (str, optional): The labels' name. (default: :obj:`'y'`)
        settings (SamplerSettings, optional): The settings whose kept edges
            and :math:`L`-hop imbalance are measured. (default: the
            defaults)
        mlp (bool, optional): Also train an MLP on the features and
            report the statistical-parity gap of its predictions: trained
            on the labelled nodes of :obj:`data.train_mask` if present (else
            on a random half of the labelled nodes outside
            :obj:`data.test_mask`), tested on the labelled nodes of
            :obj:`data.test_mask` if present (else on the labelled nodes
            outside the training ones); each mask boolean or node indices.
            Seconds on a graph of 30k nodes. (default: :obj:`False`)
        seed (int, optional): The seed of the MLP's split and
            initialisation. (default: :obj:`0`)
    """
    settings = SamplerSettings.resolve(settings)
    seed = check_seed('seed', seed)
    edge_index, sens, num_groups, labels = fairness_task(
        data, sens_attr, label_attr
    )
    src, dst = edge_index[0].long(), edge_index[1].long()
    not_loop = src != dst
    src, dst = src[not_loop], dst[not_loop]
    same = (sens[src] == sens[dst]).double()
    grouping = group_edges(edge_index, sens, num_groups)
    count = checked_hop_group_counts(
        edge_index,
        sens,
        num_groups,
        settings.num_hops,
        'exact',
        DEFAULT_MEMORY_BUDGET,
    )
    return Diagnosis(
        num_nodes=sens.numel(),
        num_edges=src.numel(),
        group_sizes=torch.bincount(sens, minlength=num_groups).tolist(),
        edge_homophily=_mean(same),
        group_homophily=_per_group(same, sens[dst], num_groups),
        one_group_fraction=_one_group_fraction(grouping.neighbour_count, sens),
        kept_edge_fraction=_kept_edge_fraction(
            grouping.neighbour_count, sens, settings
        ),
        imbalance=_summary(imbalance(count)),
        label_gap=_parity_gap(
            labels[labels >= 0].double(), sens[labels >= 0], num_groups
        ),
        mlp_gap=_mlp_gap(data, labels, sens, num_groups, seed)
        if mlp
        else None,
        settings=settings,
    )


def _mean(values: Tensor) -> float:
    return float(values.mean()) if values.numel() else float('nan')


def _per_group(values: Tensor, group: Tensor, num_groups: int) -> list[float]:
    total = values.new_zeros(num_groups, dtype=torch.float64).index_add_(
        0, group, values
    )
    size = torch.bincount(group, minlength=num_groups).double()
    return (total / size).tolist()  # NaN where a group has no entries


def _one_group_fraction(neighbour_count: Tensor, sens: Tensor) -> float:
    own = torch.nn.functional.one_hot(sens, neighbour_count.size(1))
    present = (neighbour_count + own) > 0
    has_neighbours = neighbour_count.sum(1) > 0
    one_group = present.sum(1) == 1
    return _mean(one_group[has_neighbours].double())


def _kept_edge_fraction(
    neighbour_count: Tensor, sens: Tensor, settings: SamplerSettings
) -> float:
    quota = fair_quotas(
        neighbour_count, sens, settings.beta, settings.min_keep
    )
    total = int(neighbour_count.sum())
    return int(quota.sum()) / total if total else float('nan')


def _summary(values: Tensor) -> dict[str, float]:
    if values.numel() == 0:
        return {k: float('nan') for k in (*QUANTILES, 'mean')}
    q = torch.quantile(values, values.new_tensor(list(QUANTILES.values())))
    out = dict(zip(QUANTILES, q.tolist()))
    out['mean'] = float(values.mean())
    return out


def _parity_gap(positive: Tensor, sens: Tensor, num_groups: int) -> float:
    r"""The largest difference of positive rates between groups; NaN, with
    a warning, where fewer than two groups have a rate."""
    rates = torch.tensor(
        _per_group(positive, sens, num_groups), dtype=torch.float64
    )
    rates = rates[~rates.isnan()]
    if rates.numel() < 2:
        warnings.warn(
            'A statistical-parity gap is undefined here: fewer than two '
            'groups have labelled (or test) nodes; it is NaN',
            stacklevel=3,
        )
        return float('nan')
    return float(rates.max() - rates.min())


#: The MLP of :func:`diagnose`: hidden units, full-batch Adam epochs and
#: learning rate, weight decay.
MLP_HIDDEN, MLP_EPOCHS, MLP_LR, MLP_WEIGHT_DECAY = 64, 200, 0.01, 5e-4


def _mlp_gap(
    data: Data, labels: Tensor, sens: Tensor, num_groups: int, seed: int
) -> float:
    r"""The statistical-parity gap of an MLP's predictions on the test nodes:
    one hidden layer, trained on standardised features, with weights drawn
    from a generator seeded with :obj:`seed` (the global RNG is untouched).
    """
    x = getattr(data, 'x', None)
    if not isinstance(x, Tensor) or x.dim() != 2:
        raise ValueError("diagnose(mlp=True) needs node features 'data.x'")
    if x.is_complex() or not bool(torch.isfinite(x).all()):
        raise ValueError(
            "diagnose(mlp=True) needs finite features, but 'data.x' holds "
            'NaN, infinite or complex values; fill in or drop them first'
        )
    generator = torch.Generator(device=x.device).manual_seed(seed)
    labelled = labels >= 0
    train, test = _train_test(data, labelled, generator)
    train, test = train & labelled, test & labelled  # never fit y = -1
    if int(train.sum()) < 2:  # no spread to standardise by, no model
        warnings.warn(
            'The MLP gap is undefined here: fewer than two labelled '
            'training nodes; it is NaN',
            stacklevel=3,
        )
        return float('nan')
    x = x.double()
    x = (x - x[train].mean(0)) / x[train].std(0).clamp(min=1e-12)
    weights = [
        _uniform(x.size(1), MLP_HIDDEN, generator),
        _uniform(MLP_HIDDEN, 1, generator),
    ]
    optimizer = torch.optim.Adam(
        [p for w in weights for p in w],
        lr=MLP_LR,
        weight_decay=MLP_WEIGHT_DECAY,
    )
    target = labels[train].double()

    def logits(rows: Tensor) -> Tensor:
        (w1, b1), (w2, b2) = weights
        return (torch.relu(x[rows] @ w1 + b1) @ w2 + b2).view(-1)

    for _ in range(MLP_EPOCHS):
        optimizer.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            logits(train), target
        )
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        positive = (logits(test) > 0).double()
    return _parity_gap(positive, sens[test], num_groups)


def _train_test(
    data: Data, labelled: Tensor, generator: torch.Generator
) -> tuple[Tensor, Tensor]:
    r"""The MLP's training and test nodes: :obj:`data.train_mask` (else a
    random half of the labelled nodes outside the test nodes) and
    :obj:`data.test_mask` (else the labelled nodes outside the training
    ones), each a boolean mask or node indices."""
    n, device = labelled.numel(), labelled.device
    train, test = (
        None
        if getattr(data, name, None) is None
        else selected_nodes(data[name], n, device, f'data.{name}')
        for name in ('train_mask', 'test_mask')
    )
    if train is None:
        outside = labelled if test is None else labelled & ~test
        nodes = outside.nonzero().view(-1)
        order = torch.randperm(
            nodes.numel(), generator=generator, device=generator.device
        )
        train = torch.zeros_like(labelled)
        train[nodes[order[: nodes.numel() // 2]].to(device)] = True
    return train, labelled & ~train if test is None else test


def _uniform(
    fan_in: int, fan_out: int, generator: torch.Generator
) -> list[Tensor]:
    bound = fan_in**-0.5
    device = generator.device
    weight = torch.rand(
        fan_in,
        fan_out,
        generator=generator,
        device=device,
        dtype=torch.float64,
    )
    bias = torch.rand(
        fan_out, generator=generator, device=device, dtype=torch.float64
    )
    return [
        ((2 * weight - 1) * bound).requires_grad_(),
        ((2 * bias - 1) * bound).requires_grad_(),
    ]
