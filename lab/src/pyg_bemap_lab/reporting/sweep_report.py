r"""What a sweep reports (:class:`SweepResult`): its points (see
:mod:`~pyg_bemap_lab.reporting.sweep_points`) as a table for an 80-column
terminal, as :obj:`sweep.csv` and as :obj:`pareto.png`."""

import csv
import textwrap
from dataclasses import dataclass, field
from typing import Any

from pyg_bemap_lab.reporting.report import Report, Writer
from pyg_bemap_lab.reporting.statistics import PairedDifference
from pyg_bemap_lab.reporting.sweep_plot import plot_pareto
from pyg_bemap_lab.reporting.sweep_points import (
    SweepPoint,
    sweep_points,
    validation_choice,
)
from pyg_bemap_lab.reporting.verdicts import (
    COVERAGE,
    format_difference,
    significant,
)
from pyg_bemap_lab.running.protocols import Protocol
from pyg_bemap_lab.selection import DEFAULT_RULE, RULES


@dataclass
class SweepResult(Report):
    r"""A sweep's stored runs and what they show (see
    :func:`~pyg_bemap_lab.reporting.sweep_points.sweep_points`):
    :obj:`points`, :obj:`choice`, a text summary (:obj:`str`), and the
    files :obj:`sweep.csv` (:func:`write_csv`) and :obj:`pareto.png`
    (:func:`~pyg_bemap_lab.reporting.sweep_plot.plot_pareto`)."""

    points: list[SweepPoint] = field(init=False)

    def __post_init__(self) -> None:
        self.points = sweep_points(self.protocol, self.store, self.chosen)

    @property
    def choice(self) -> SweepPoint | None:
        r"""The BeMap setting chosen on validation (see
        :func:`~pyg_bemap_lab.reporting.sweep_points.validation_choice`)."""
        return validation_choice(self.points)

    def __str__(self) -> str:
        return sweep_summary(self.protocol, self.points, self.choice)

    def files(self) -> dict[str, Writer]:
        (graph,) = self.protocol.datasets
        return {
            'sweep.csv': lambda path: write_csv(self.points, path),
            'pareto.png': lambda path: plot_pareto(self.points, graph, path),
        }


COLUMNS = (
    'setting', 'method', 'seeds', 'unreported_runs', 'degenerate_runs',
    'on_frontier',
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
                p.label, p.method, p.seeds, p.unreported, p.degenerate,
                p.on_frontier,
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
        f'{len(protocol.seeds)} paired seeds each, epoch of the '
        f'{RULES[DEFAULT_RULE]}; means in %. * marks the validation frontier '
        '(accuracy against delta_sp); none counts runs with no epoch to '
        'report, left out of the means, deg degenerate runs. Test '
        'columns are for reading only: nothing is chosen on them.'
    )
    lines = textwrap.wrap(intro, width) + ['']
    head = ('', 'val acc', 'val sp', 'test acc', 'test sp', 'test eo')
    lines.append(
        f'{head[0]:<22}' + ''.join(f'{h:>9}' for h in head[1:]) + ' none  deg'
    )
    for p in points:
        cells = [p.val['acc'], p.val['sp'], p.test['acc'], p.test['sp']]
        cells.append(p.test['eo'])
        mark = '*' if p.on_frontier else ' '
        name = f'{mark}{p.label}'[:22]
        lines.append(
            f'{name:<22}'
            + ''.join(f'{100 * c:9.1f}' for c in cells)
            + f'{p.unreported:5d}{p.degenerate:5d}'
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
        text += (
            f' (intervals: {COVERAGE}; * where one excludes 0 and p < 0.05).'
        )
        lines += textwrap.wrap(text, width)
    return '\n'.join(lines)


def _differences(diffs: dict[str, PairedDifference]) -> str:
    return ', '.join(
        f'{name} {format_difference(d)}'
        for name, d in (
            ('acc', diffs['acc']),
            ('delta_sp', diffs['sp']),
            ('delta_eo', diffs['eo']),
        )
    )
