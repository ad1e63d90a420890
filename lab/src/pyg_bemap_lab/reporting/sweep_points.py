r"""What a sweep's stored runs show, setting by setting: one point per
setting (means over the paired seeds at the epoch the default rule picks,
:obj:`~pyg_bemap_lab.selection.DEFAULT_RULE`), the validation Pareto
frontier of accuracy against :math:`\Delta_{SP}`, the BeMap setting a
validation rule chooses, and, read only, the test split: paired
differences against the backbone with 95 % intervals. Nothing is chosen on
the test split."""

import math
from dataclasses import dataclass, field
from typing import Any

from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.methods import BACKBONES
from pyg_bemap_lab.names import KNOB_LABELS
from pyg_bemap_lab.reporting.statistics import (
    PairedDifference,
    mean_interval,
    paired_difference,
)
from pyg_bemap_lab.run_config import Chosen, RunConfig
from pyg_bemap_lab.running.degenerate import degenerate
from pyg_bemap_lab.running.planning import stored_runs
from pyg_bemap_lab.running.protocols import Protocol
from pyg_bemap_lab.selection import DEFAULT_RULE

#: A BeMap setting is eligible for the validation choice if its mean
#: validation accuracy is at most this far below its backbone's.
ACCURACY_SLACK = 0.01


METRICS = ('acc', 'auc', 'sp', 'eo')


@dataclass
class SweepPoint:
    r"""One setting of a sweep, averaged over its paired seeds (shares in
    :math:`[0, 1]`; :obj:`seeds` counts the runs with an epoch to report,
    :obj:`unreported` those without one, left out of the means;
    :obj:`degenerate` counts its degenerate runs;
    :obj:`ci` holds the half-widths of the 95 % t-intervals of the test
    means; :obj:`versus` the paired test differences against
    :obj:`backbone`, in points, and :obj:`healthy` the same on the seeds
    where neither run is degenerate)."""

    label: str
    method: str
    config: RunConfig
    backbone: str | None
    seeds: int
    unreported: int
    degenerate: int
    val: dict[str, float]
    test: dict[str, float]
    ci: dict[str, float]
    versus: dict[str, PairedDifference] = field(default_factory=dict)
    healthy: dict[str, PairedDifference] = field(default_factory=dict)
    on_frontier: bool = False


def setting_label(method: str, setting: dict[str, Any]) -> str:
    r"""A short name of a method with a setting, e.g. :obj:`'sym beta=0.1'`
    or :obj:`'FairDrop delta=0.08'` (a knob's label that starts with the
    method's name, as FairDrop's, does not repeat it)."""
    name = method.replace('BeMap(', '').replace(')', '')
    knobs = [
        KNOB_LABELS.get(k, k).removeprefix(f'{name} ') + f'={v:g}'
        for k, v in setting.items()
    ]
    return ' '.join([name, *knobs])


def sweep_points(
    protocol: Protocol, store: RunStore, chosen: Chosen
) -> list[SweepPoint]:
    r"""One :class:`SweepPoint` per reported method and swept setting with
    stored runs, the validation frontier marked."""
    (dataset,) = protocol.datasets
    settings: list[tuple[str, dict[str, Any]]] = [
        (m, {}) for m in protocol.methods
    ] + [(m, s) for m, swept in protocol.sweep.items() for s in swept]
    runs_of = {}
    for method, setting in settings:
        config = chosen[dataset, method].replace(**setting)
        runs_of[setting_label(method, setting)] = (
            method,
            config,
            stored_runs(
                protocol, store, dataset, method, config, protocol.seeds
            ),
        )
    points = [
        _point(label, method, config, runs)
        for label, (method, config, runs) in runs_of.items()
        if runs
    ]
    for point in points:
        reference = BACKBONES.get(point.method)
        if reference in runs_of and runs_of[reference][2]:
            point.backbone = reference
            mine, theirs = runs_of[point.label][2], runs_of[reference][2]
            point.versus = _versus(mine, theirs)
            point.healthy = _versus(mine, theirs, healthy_only=True)
    _mark_frontier(points)
    return points


def _picked(run: dict[str, Any]) -> dict[str, float] | None:
    picked = run['test'].get(DEFAULT_RULE)
    if picked is None:
        return None
    epoch = picked['epoch']
    values = {f'test_{m}': picked[m] for m in METRICS}
    values.update({f'val_{m}': run['curve'][m][epoch] for m in METRICS})
    return values


def _point(
    label: str, method: str, config: RunConfig, runs: list[dict]
) -> SweepPoint:
    values = [v for v in map(_picked, runs) if v is not None]

    def interval(key: str) -> tuple[float, float]:
        return mean_interval([v[key] for v in values])

    test = {m: interval(f'test_{m}') for m in METRICS}
    return SweepPoint(
        label=label,
        method=method,
        config=config,
        backbone=None,
        seeds=len(values),
        unreported=len(runs) - len(values),
        degenerate=sum(bool(degenerate(r, DEFAULT_RULE)) for r in runs),
        val={m: interval(f'val_{m}')[0] for m in METRICS},
        test={m: mean for m, (mean, _) in test.items()},
        ci={m: half for m, (_, half) in test.items()},
    )


def _versus(
    runs: list[dict], reference: list[dict], healthy_only: bool = False
) -> dict[str, PairedDifference]:
    def usable(run: dict) -> bool:
        return not (healthy_only and degenerate(run, DEFAULT_RULE))

    mine = {r['seed']: _picked(r) for r in runs if usable(r)}
    theirs = {r['seed']: _picked(r) for r in reference if usable(r)}
    seeds = sorted(s for s in set(mine) & set(theirs) if mine[s] and theirs[s])
    return {
        m: paired_difference(
            [100 * theirs[s][f'test_{m}'] for s in seeds],  # type: ignore
            [100 * mine[s][f'test_{m}'] for s in seeds],  # type: ignore
        )
        for m in ('acc', 'sp', 'eo')
    }


def _mark_frontier(points: list[SweepPoint]) -> None:
    r"""Marks the points that no other point beats on validation in both
    accuracy (higher) and :math:`\Delta_{SP}` (lower)."""
    for point in points:
        acc, sp = point.val['acc'], point.val['sp']
        point.on_frontier = not math.isnan(acc + sp) and not any(
            other.val['acc'] >= acc
            and other.val['sp'] <= sp
            and (other.val['acc'] > acc or other.val['sp'] < sp)
            for other in points
        )


def validation_choice(points: list[SweepPoint]) -> SweepPoint | None:
    r"""The BeMap setting with the lowest mean validation
    :math:`\Delta_{SP} + \Delta_{EO}` among those whose mean validation
    accuracy is at most :obj:`ACCURACY_SLACK` below their backbone's;
    :obj:`None` if none is eligible. Chosen on validation only."""
    by_label = {p.label: p for p in points}
    eligible = [
        p
        for p in points
        if p.method.startswith('BeMap')
        and p.backbone in by_label
        and p.val['acc'] >= by_label[p.backbone].val['acc'] - ACCURACY_SLACK
        and not math.isnan(p.val['sp'] + p.val['eo'])
    ]
    return min(eligible, key=lambda p: p.val['sp'] + p.val['eo'], default=None)
