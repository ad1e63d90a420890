r"""Trade-off plots built from stored runs: test accuracy against each
fairness gap, one curve per swept method."""

import statistics
from typing import Any

from pyg_bemap.utils.styles import LINE_STYLES
from pyg_bemap_lab.models import BACKBONES
from pyg_bemap_lab.planning import stored_runs
from pyg_bemap_lab.protocols import Protocol, sweep_configs
from pyg_bemap_lab.store import RunStore
from pyg_bemap_lab.tables import (
    TEST_SPLIT_RULE,
    Chosen,
    comparisons,
    paired_differences,
    primary_rule,
    reported_rules,
)
from pyg_bemap_lab.verdicts import significant


def tradeoff_points(
    protocol: Protocol,
    store: RunStore,
    dataset: str,
    method: str,
    config: dict[str, Any],
    rule: str,
) -> dict[str, tuple[float, float]] | None:
    r"""Mean and standard deviation over the sweep seeds of the test
    accuracy and gaps, in %, at the epoch :obj:`rule` picked."""
    seeds = protocol.sweep_seeds or protocol.seeds
    picked = [
        run['test'][rule]
        for run in stored_runs(protocol, store, dataset, method, config, seeds)
        if run['test'].get(rule) is not None
    ]
    if not picked:
        return None
    points = {}
    for metric in ('acc', 'sp', 'eo'):
        values = [100 * p[metric] for p in picked]
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        points[metric] = (statistics.mean(values), spread)
    return points


def plot_tradeoff(
    protocol: Protocol,
    store: RunStore,
    chosen: Chosen,
    dataset: str,
    path: str,
    rule: str = 'val-loss',
) -> None:
    r"""Saves a PNG of test accuracy against :math:`\Delta_{SP}` (left) and
    :math:`\Delta_{EO}` (right) on :obj:`dataset`: each swept method's
    settings joined in sweep order, its chosen setting ringed, the
    backbones as single points; mean ± standard deviation over the sweep
    seeds, error bars cut at 0."""
    from matplotlib.figure import Figure  # no pyplot: no global backend

    fig = Figure(figsize=(8, 4.8))
    axes = fig.subplots(1, 2, sharey=True)
    curves: dict[str, list[tuple[dict[str, Any], Any]]] = {}
    for method, config in sweep_configs(protocol, chosen, dataset):
        curves.setdefault(method, []).append(
            (
                config,
                tradeoff_points(
                    protocol, store, dataset, method, config, rule
                ),
            )
        )
    singles = [m for m in ('MLP', 'GCN') if m in protocol.methods]
    for i, name in enumerate([*curves, *singles]):
        marker, line, colour = LINE_STYLES[i % len(LINE_STYLES)]
        series = curves.get(name) or [
            (
                chosen[dataset, name],
                tradeoff_points(
                    protocol, store, dataset, name, chosen[dataset, name], rule
                ),
            )
        ]
        series = [(c, p) for c, p in series if p is not None]
        for ax, gap in zip(axes, ('sp', 'eo')):
            xs = [p[gap][0] for _, p in series]
            ys = [p['acc'][0] for _, p in series]
            _, caps, bars = ax.errorbar(
                xs,
                ys,
                xerr=[
                    [min(p[gap][1], p[gap][0]) for _, p in series],
                    [p[gap][1] for _, p in series],
                ],
                yerr=[p['acc'][1] for _, p in series],
                marker=marker,
                linestyle=line if name in curves else 'none',
                color=colour,
                capsize=3,
                label=name,
            )
            for part in (*caps, *bars):  # faint spreads: the means stand out
                part.set_alpha(0.35)
            for config, p in series:
                if name in curves and config == chosen[dataset, name]:
                    ax.plot(
                        p[gap][0],
                        p['acc'][0],
                        'o',
                        ms=14,
                        mfc='none',
                        color='black',
                    )
    _join_to_backbones(protocol, store, chosen, dataset, rule, axes, curves)
    for ax, title in zip(axes, ('delta_sp', 'delta_eo')):
        ax.set_xlabel(f'test {title} (%),\nlower is fairer')
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel('test accuracy (%)')
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc='lower center',
        ncol=len(labels),
        title='ringed: chosen setting; arrow: from the backbone',
    )
    fig.suptitle(
        f'{dataset}: accuracy against fairness, epoch by {rule},\n'
        f'mean ± std over up to {len(protocol.sweep_seeds or protocol.seeds)} '
        'seeds',
        fontsize=11,
    )
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    fig.savefig(path, dpi=130)


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
    (see :func:`~pyg_bemap_lab.verdicts.significant`), at the epoch
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
    fig.savefig(path, dpi=130)
