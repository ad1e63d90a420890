r"""What a sweep shows, from its stored runs: one point per setting (means
over the paired seeds at the epoch of the lowest validation loss), the
validation Pareto frontier of accuracy against :math:`\Delta_{SP}`, the
BeMap setting a validation rule chooses, and, read only, the test split:
paired differences against the backbone with 95 % intervals. Nothing is
chosen on the test split."""

import csv
import math
import textwrap
from dataclasses import dataclass, field
from typing import Any

from pyg_bemap_lab.degenerate import degenerate
from pyg_bemap_lab.methods import BACKBONES
from pyg_bemap_lab.names import KNOB_LABELS
from pyg_bemap_lab.planning import stored_runs
from pyg_bemap_lab.protocols import Protocol
from pyg_bemap_lab.report import Report, Writer
from pyg_bemap_lab.run_config import Chosen, RunConfig
from pyg_bemap_lab.selection import DEFAULT_RULE
from pyg_bemap_lab.statistics import (
    PairedDifference,
    mean_interval,
    paired_difference,
)
from pyg_bemap_lab.store import RunStore
from pyg_bemap_lab.sweep_plot import plot_pareto
from pyg_bemap_lab.verdicts import significant

#: A BeMap setting is eligible for the validation choice if its mean
#: validation accuracy is at most this far below its backbone's.
ACCURACY_SLACK = 0.01


METRICS = ('acc', 'auc', 'sp', 'eo')


@dataclass
class SweepPoint:
    r"""One setting of a sweep, averaged over its paired seeds (shares in
    :math:`[0, 1]`; :obj:`degenerate` counts its degenerate runs;
    :obj:`ci` holds the half-widths of the 95 % t-intervals of the test
    means; :obj:`versus` the paired test differences against
    :obj:`backbone`, in points, and :obj:`healthy` the same on the seeds
    where neither run is degenerate)."""

    label: str
    method: str
    config: RunConfig
    backbone: str | None
    seeds: int
    degenerate: int
    val: dict[str, float]
    test: dict[str, float]
    ci: dict[str, float]
    versus: dict[str, PairedDifference] = field(default_factory=dict)
    healthy: dict[str, PairedDifference] = field(default_factory=dict)
    on_frontier: bool = False


def setting_label(method: str, setting: dict[str, Any]) -> str:
    r"""A short name of a method with a setting, e.g. :obj:`'sym beta=0.1'`
    or :obj:`'FairDrop d=0.08'`."""
    name = method.replace('BeMap(', '').replace(')', '')
    knobs = [f'{KNOB_LABELS.get(k, k)}={v:g}' for k, v in setting.items()]
    return ' '.join([name, *knobs])


@dataclass
class SweepResult(Report):
    r"""A sweep's stored runs and what they show (see :func:`sweep_points`):
    :obj:`points`, :obj:`choice`, a text summary (:obj:`str`), and the
    files :obj:`sweep.csv` (:func:`write_csv`) and :obj:`pareto.png`
    (:func:`~pyg_bemap_lab.sweep_plot.plot_pareto`)."""

    points: list[SweepPoint] = field(init=False)

    def __post_init__(self) -> None:
        self.points = sweep_points(self.protocol, self.store, self.chosen)

    @property
    def choice(self) -> SweepPoint | None:
        r"""The BeMap setting chosen on validation (see
        :func:`validation_choice`)."""
        return validation_choice(self.points)

    def __str__(self) -> str:
        return sweep_summary(self.protocol, self.points, self.choice)

    def files(self) -> dict[str, Writer]:
        (graph,) = self.protocol.datasets
        return {
            'sweep.csv': lambda path: write_csv(self.points, path),
            'pareto.png': lambda path: plot_pareto(self.points, graph, path),
        }


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


COLUMNS = (
    'setting', 'method', 'seeds', 'degenerate_runs', 'on_frontier',
    'val_acc', 'val_delta_sp', 'val_delta_eo', 'test_acc', 'test_auc',
    'test_delta_sp', 'test_delta_eo', 'test_acc_ci95', 'test_delta_sp_ci95',
    'test_delta_eo_ci95', 'backbone', 'acc_vs_backbone',
    'acc_vs_backbone_low', 'acc_vs_backbone_high', 'delta_sp_vs_backbone',
    'delta_sp_vs_backbone_low', 'delta_sp_vs_backbone_high',
    'delta_sp_marked', 'delta_eo_vs_backbone', 'delta_eo_vs_backbone_low',
    'delta_eo_vs_backbone_high', 'delta_eo_marked', 'healthy_seeds',
    'delta_sp_vs_backbone_healthy', 'delta_sp_healthy_marked',
    'delta_eo_vs_backbone_healthy', 'delta_eo_healthy_marked',
)  # fmt: skip


def write_csv(points: list[SweepPoint], path: str) -> None:
    r"""One row per setting (shares in :math:`[0, 1]`; differences against
    the backbone in points, with their 95 % intervals and whether they are
    marked, over every paired seed and without degenerate runs)."""
    with open(path, 'w', newline='') as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        for p in points:
            row: list[Any] = [
                p.label, p.method, p.seeds, p.degenerate, p.on_frontier,
                p.val['acc'], p.val['sp'], p.val['eo'], p.test['acc'],
                p.test['auc'], p.test['sp'], p.test['eo'], p.ci['acc'],
                p.ci['sp'], p.ci['eo'], p.backbone or '',
            ]  # fmt: skip
            for metric in ('acc', 'sp', 'eo'):
                diff = p.versus.get(metric)
                row += (
                    ['', '', '']
                    if diff is None
                    else [diff.mean, diff.low, diff.high]
                )
                if metric != 'acc':
                    row.append('' if diff is None else significant(diff))
            row.append(p.healthy['sp'].seeds if p.healthy else '')
            for metric in ('sp', 'eo'):
                diff = p.healthy.get(metric)
                row += ['', ''] if diff is None else [
                    diff.mean, significant(diff)
                ]  # fmt: skip
            writer.writerow(row)


def sweep_summary(
    protocol: Protocol,
    points: list[SweepPoint],
    choice: SweepPoint | None,
    width: int = 80,
) -> str:
    r"""The sweep in plain text at most :obj:`width` columns wide."""
    (dataset,) = protocol.datasets
    intro = (
        f'Sweep on {dataset}: {len(points)} settings, up to '
        f'{len(protocol.seeds)} paired seeds each, epoch of the lowest '
        'validation loss; means in %. * marks the validation frontier '
        '(accuracy against delta_sp); deg counts degenerate runs. Test '
        'columns are for reading only: nothing is chosen on them.'
    )
    lines = textwrap.wrap(intro, width) + ['']
    head = ('', 'val acc', 'val sp', 'test acc', 'test sp', 'test eo')
    lines.append(
        f'{head[0]:<22}' + ''.join(f'{h:>9}' for h in head[1:]) + '  deg'
    )
    for p in points:
        cells = [p.val['acc'], p.val['sp'], p.test['acc'], p.test['sp']]
        cells.append(p.test['eo'])
        mark = '*' if p.on_frontier else ' '
        name = f'{mark}{p.label}'[:22]
        lines.append(
            f'{name:<22}'
            + ''.join(f'{100 * c:9.1f}' for c in cells)
            + f'{p.degenerate:5d}'
        )
    lines.append('')
    if choice is None:
        lines += textwrap.wrap(
            "No BeMap setting is within 1 point of its backbone's "
            'validation accuracy: none is chosen.',
            width,
        )
    else:
        text = (
            'Chosen on validation (the lowest delta_sp + delta_eo within 1 '
            f"point of its backbone's accuracy): {choice.label}. On test, "
            f'against {choice.backbone}, in points: '
            f'{_differences(choice.versus)}'
        )
        if choice.healthy and (
            choice.healthy['sp'].seeds < choice.versus['sp'].seeds
        ):
            text += (
                f'; without degenerate runs ({choice.healthy["sp"].seeds} '
                f'paired seeds): {_differences(choice.healthy)}'
            )
        text += ' (* where the 95 % interval excludes 0 and p < 0.05).'
        lines += textwrap.wrap(text, width)
    return '\n'.join(lines)


def _differences(diffs: dict[str, PairedDifference]) -> str:
    return ', '.join(
        f'{name} {d.mean:+.2f} [{d.low:+.2f}, {d.high:+.2f}]'
        f'{"*" if significant(d) else ""}'
        for name, d in (
            ('acc', diffs['acc']),
            ('delta_sp', diffs['sp']),
            ('delta_eo', diffs['eo']),
        )
    )
