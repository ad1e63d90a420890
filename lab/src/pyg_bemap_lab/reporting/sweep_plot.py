r"""The sweep's picture: accuracy against each gap, on validation (where
the frontier is drawn) and on test (with the 95 % intervals of the
frontier and its backbones), every point numbered, with the key of the
settings below."""

import math
from typing import Any

from pyg_bemap_lab.reporting.figures import save_png
from pyg_bemap_lab.reporting.plot_labels import canvas, spread_labels
from pyg_bemap_lab.reporting.sweep_points import SweepPoint

#: Colours of the kinds of points.
COLOURS = {'BeMap': 'tab:blue', 'FairDrop': 'tab:orange', 'other': 'tab:gray'}


def _colour(point: SweepPoint) -> str:
    for kind, colour in COLOURS.items():
        if point.method.startswith(kind):
            return colour
    return COLOURS['other']


def plot_pareto(points: list[SweepPoint], dataset: str, path: str) -> None:
    r"""Saves a PNG of 2 x 2 panels: validation (top) and test (bottom)
    accuracy against :math:`\Delta_{SP}` (left) and :math:`\Delta_{EO}`
    (right), in %. Filled points are on the validation frontier (accuracy
    against :math:`\Delta_{SP}`), drawn as a line in the top-left panel;
    on test, those points and the backbones they are compared with carry
    their 95 % intervals over the seeds (all of them would cover each
    other)."""
    from matplotlib.figure import Figure  # no pyplot: no global backend

    fig = Figure(figsize=(13, 10.5))
    canvas(fig)
    axes = fig.subplots(2, 2)
    barred = {p.label for p in points if p.on_frontier}
    barred |= {p.backbone for p in points if p.on_frontier and p.backbone}
    for row, split in enumerate(('val', 'test')):
        for col, gap in enumerate(('sp', 'eo')):
            ax = axes[row, col]
            drawn = [
                _draw(ax, p, number, split, gap, p.label in barred)
                for number, p in enumerate(points, 1)
            ]
            spread_labels(ax, [d for d in drawn if d is not None])
            name = 'delta_sp' if gap == 'sp' else 'delta_eo'
            ax.set_xlabel(f'{split} {name} (%, lower is fairer)')
            ax.set_ylabel(f'{split} accuracy (%)')
            ax.grid(alpha=0.3)
    frontier = sorted(
        (p for p in points if p.on_frontier), key=lambda p: p.val['sp']
    )
    axes[0, 0].plot(
        [100 * p.val['sp'] for p in frontier],
        [100 * p.val['acc'] for p in frontier],
        color='black',
        lw=1,
        ls='--',
        label='validation frontier',
    )
    axes[0, 0].legend(loc='best', fontsize=8)  # clear of the points
    fig.suptitle(
        f'{dataset}: means over the paired seeds; filled: on the '
        "validation frontier; bars (test): 95 % intervals of the frontier's "
        'points\nand of the backbones they are compared with (sweep.csv '
        'holds every interval)',
        fontsize=11,
    )
    rows = math.ceil(len(points) / 4)
    key = [f'{n:>2}  {p.label}' for n, p in enumerate(points, 1)]
    for col in range(4):
        fig.text(
            0.06 + 0.23 * col,
            0.01 + 0.017 * rows,
            '\n'.join(key[col * rows : (col + 1) * rows]),
            fontsize=9,
            family='monospace',
            va='top',
        )
    fig.tight_layout(rect=(0, 0.02 + 0.017 * rows, 1, 1))
    save_png(fig, path, dpi=110)


def _draw(
    ax: Any,
    point: SweepPoint,
    number: int,
    split: str,
    gap: str,
    barred: bool,
) -> tuple[Any, float, float] | None:
    r"""Draws one point (with its bars if :obj:`barred` on test) and returns
    its number's label with the point's position."""
    values = point.val if split == 'val' else point.test
    x, y = 100 * values[gap], 100 * values['acc']
    if math.isnan(x + y):
        return None
    colour = _colour(point)
    face = colour if point.on_frontier else 'white'
    if split == 'test' and barred:
        ax.errorbar(
            x,
            y,
            xerr=_finite(100 * point.ci[gap]),
            yerr=_finite(100 * point.ci['acc']),
            color=colour,
            alpha=0.35,
            lw=0.8,
            capsize=2,
        )
    ax.scatter(x, y, s=36, facecolor=face, edgecolor=colour, zorder=3)
    return ax.text(x, y, str(number), fontsize=8, color=colour), x, y


def _finite(value: float) -> float:
    return 0.0 if math.isnan(value) else value
