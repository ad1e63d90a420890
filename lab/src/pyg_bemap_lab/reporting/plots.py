r"""Trade-off plots built from stored runs: test accuracy against each
fairness gap, a labelled point per swept setting, and the paired plots."""

import math
from typing import Any

from pyg_bemap.metrics import LINE_STYLES
from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.methods import BACKBONES
from pyg_bemap_lab.names import KNOB_LABELS
from pyg_bemap_lab.reporting.figures import save_png
from pyg_bemap_lab.reporting.plot_labels import canvas, spread_labels
from pyg_bemap_lab.reporting.statistics import mean_interval
from pyg_bemap_lab.reporting.tables import (
    TEST_SPLIT_RULE,
    comparisons,
    paired_differences,
    primary_rule,
    reported_rules,
)
from pyg_bemap_lab.reporting.verdicts import significant
from pyg_bemap_lab.run_config import Chosen, RunConfig
from pyg_bemap_lab.running.planning import stored_runs
from pyg_bemap_lab.running.protocols import Protocol
from pyg_bemap_lab.selection import DEFAULT_RULE


def tradeoff_points(
    protocol: Protocol,
    store: RunStore,
    dataset: str,
    method: str,
    config: RunConfig,
    rule: str,
) -> dict[str, tuple[float, float]] | None:
    r"""Mean and half-width of the 95 % confidence interval of the mean over
    the sweep seeds of the test accuracy and gaps, in %, at the epoch
    :obj:`rule` picked."""
    seeds = protocol.sweep_seeds or protocol.seeds
    picked = [
        run['test'][rule]
        for run in stored_runs(protocol, store, dataset, method, config, seeds)
        if run['test'].get(rule) is not None
    ]
    if not picked:
        return None
    return {
        metric: mean_interval([100 * p[metric] for p in picked])
        for metric in ('acc', 'sp', 'eo')
    }


def setting_label(setting: dict[str, Any]) -> str:
    r"""A swept setting in a few characters, e.g. :obj:`'beta=0.1 m=4'`."""
    return ' '.join(
        f'{KNOB_LABELS.get(key, key)}={value:g}'
        for key, value in setting.items()
    )


def plot_tradeoff(
    protocol: Protocol,
    store: RunStore,
    chosen: Chosen,
    dataset: str,
    path: str,
    rule: str = DEFAULT_RULE,
) -> None:
    r"""Saves a PNG of test accuracy against :math:`\Delta_{SP}` (left) and
    :math:`\Delta_{EO}` (right) on :obj:`dataset`, means over the sweep
    seeds: every swept setting of a method as a point labelled with its
    setting, its chosen setting ringed, the backbones and the MLP as
    labelled single points, and an arrow from each backbone to the chosen
    setting built on it. Only the ringed and single points carry error bars
    (95 % intervals of the mean, cut at 0), so that they stay legible."""
    from matplotlib.figure import Figure  # no pyplot: no global backend

    fig = Figure(figsize=(11, 5.8))
    canvas(fig)
    axes = fig.subplots(1, 2, sharey=True)
    names = [m for m in protocol.sweep if m in protocol.methods]
    singles = [m for m in ('MLP', 'GCN') if m in protocol.methods]
    texts: dict[str, list[tuple[Any, float, float]]] = {'sp': [], 'eo': []}
    for i, name in enumerate([*names, *singles]):
        style = LINE_STYLES[i % len(LINE_STYLES)]
        base = chosen[dataset, name]
        settings = protocol.sweep.get(name) or ({},)
        for setting in settings:
            config = base.replace(**setting)
            point = tradeoff_points(
                protocol, store, dataset, name, config, rule
            )
            if point is None:
                continue
            label = setting_label(setting) if setting else name
            ringed = bool(setting) and config == base
            for ax, gap in zip(axes, ('sp', 'eo')):
                texts[gap].append(
                    _draw_point(
                        ax, point, gap, style, label, ringed, not setting
                    )
                )
        axes[0].plot([], [], style[0], color=style[2], label=name)
    _join_to_backbones(protocol, store, chosen, dataset, rule, axes, names)
    for ax, gap in zip(axes, ('sp', 'eo')):
        ax.set_xlabel(f'test delta_{gap} (%), lower is fairer')
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
        spread_labels(ax, texts[gap])
    axes[0].set_ylabel('test accuracy (%)')
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc='lower center', ncol=len(labels))
    seeds = len(protocol.sweep_seeds or protocol.seeds)
    fig.suptitle(
        f'{dataset}: test accuracy against fairness, epoch by {rule}, means '
        f'over {seeds} seeds\nringed: the chosen setting (arrow: from its '
        'backbone); bars: 95 % intervals of the mean',
        fontsize=11,
    )
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    save_png(fig, path, dpi=130)


def _draw_point(
    ax: Any,
    point: dict[str, tuple[float, float]],
    gap: str,
    style: tuple[str, str, str],
    label: str,
    ringed: bool,
    single: bool,
) -> tuple[Any, float, float]:
    r"""Draws one point, its bars if it is ringed or single, and returns
    its label with the point's position."""
    marker, _, colour = style
    (x, x_half), (y, y_half) = point[gap], point['acc']
    if ringed or single:
        x_half, y_half = (
            0.0 if math.isnan(h) else h for h in (x_half, y_half)
        )
        _, caps, bars = ax.errorbar(
            x,
            y,
            xerr=[[min(x_half, x)], [x_half]],
            yerr=y_half,
            color=colour,
            capsize=3,
            lw=1,
        )
        for part in (*caps, *bars):  # faint spreads: the means stand out
            part.set_alpha(0.4)
    ax.plot(x, y, marker, color=colour, ms=8 if single else 6, zorder=3)
    if ringed:
        ax.plot(x, y, 'o', ms=15, mfc='none', color='black', zorder=3)
    text = ax.text(
        x,
        y,
        label,
        fontsize=9 if single else 8,
        fontweight='bold' if single else 'normal',
        color=colour,
    )
    return text, x, y


def _join_to_backbones(
    protocol: Protocol,
    store: RunStore,
    chosen: Chosen,
    dataset: str,
    rule: str,
    axes: Any,
    methods: Any,
) -> None:
    r"""Draws an arrow from each backbone's point to the chosen setting of
    each swept method built on it."""
    for method in methods:
        backbone = BACKBONES.get(method)
        if backbone not in protocol.methods:
            continue
        start, end = (
            tradeoff_points(
                protocol, store, dataset, m, chosen[dataset, m], rule
            )
            for m in (backbone, method)
        )
        if start is None or end is None:
            continue
        for ax, gap in zip(axes, ('sp', 'eo')):
            ax.annotate(
                '',
                xy=(end[gap][0], end['acc'][0]),
                xytext=(start[gap][0], start['acc'][0]),
                arrowprops=dict(arrowstyle='-|>', color='black', lw=1.2),
            )


def backbone_pairs(protocol: Protocol) -> list[tuple[str, str]]:
    r"""The (backbone, method) pairs of :func:`plot_paired`: every method
    that changes the training graph, against its backbone."""
    return [(a, b) for a, b in comparisons(protocol) if a != 'MLP']


def plot_paired(
    protocol: Protocol,
    store: RunStore,
    chosen: Chosen,
    path: str,
    rule: str | None = None,
    pairs: list[tuple[str, str]] | None = None,
) -> None:
    r"""Saves a PNG of the paired gap differences of every method that
    changes the training graph against its backbone, per dataset: the mean
    difference in :math:`\Delta_{SP}` (left) and :math:`\Delta_{EO}`
    (right) with its 95 % interval; filled markers are marked differences
    (see :func:`~pyg_bemap_lab.reporting.verdicts.significant`), at the epoch
    :obj:`rule` picks (by default the protocol's primary rule).

    Args:
        pairs (list, optional): The (backbone, method) pairs to show.
            (default: :obj:`None`: :func:`backbone_pairs`)
    """
    from matplotlib.figure import Figure  # no pyplot: no global backend

    rule = rule or primary_rule(protocol)
    titles = {**reported_rules(protocol), **TEST_SPLIT_RULE}
    pairs = backbone_pairs(protocol) if pairs is None else pairs
    if not pairs:
        raise ValueError(
            f'the protocol {protocol.name!r} has no method to compare with '
            'its backbone'
        )
    rows = [
        (
            dataset if len(pairs) == 1 else f'{dataset}: {b} - {a}',
            paired_differences(protocol, store, chosen, dataset, (a, b), rule),
        )
        for dataset in protocol.datasets
        for a, b in pairs
    ]
    height = (0.32 if len(pairs) > 1 else 0.5) * len(rows) + 1.9
    fig = Figure(figsize=(8.5 if len(pairs) > 1 else 7.5, height))
    axes = fig.subplots(1, 2, sharey=True)
    ys = list(range(len(rows)))[::-1]
    for ax, gap, title in zip(axes, ('sp', 'eo'), ('delta_sp', 'delta_eo')):
        for y, (_, diffs) in zip(ys, rows):
            diff = diffs[gap]
            if diff.seeds == 0:
                continue
            ax.errorbar(
                diff.mean,
                y,
                xerr=[[diff.mean - diff.low], [diff.high - diff.mean]],
                fmt='o',
                color='black',
                mfc='black' if significant(diff) else 'white',
                capsize=3,
            )
        ax.axvline(0, color='grey', lw=1)
        ax.set_xlabel(f'{title}: difference (points),\n< 0 is fairer')
        ax.grid(axis='x', alpha=0.3)
        for y in ys[len(pairs) - 1 :: len(pairs)][:-1]:
            ax.axhline(y - 0.5, color='grey', lw=0.5)
    axes[0].set_yticks(ys, [label for label, _ in rows])
    what = (
        'Each method minus its backbone'
        if len(pairs) > 1
        else f'{pairs[0][1]} minus {pairs[0][0]}'
    )
    fig.suptitle(
        f'{what}, paired seeds, 95 % intervals\n'
        f'epoch by {titles[rule]}\n'
        'filled: marked (interval excludes 0 and exact test p < 0.05)',
        fontsize=11,
    )
    fig.tight_layout()
    save_png(fig, path, dpi=130)
