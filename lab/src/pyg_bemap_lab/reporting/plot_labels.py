r"""Labels beside the points of a crowded scatter plot, moved apart so that
none covers another (with adjustText), each joined to its point by a thin
line when it had to move, on a pale ground that keeps it legible over the
lines it crosses."""

from typing import Any


def canvas(fig: Any) -> None:
    r"""Gives a :class:`matplotlib.figure.Figure` made without pyplot the
    Agg canvas that measuring the labels needs (no global backend)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)


def spread_labels(ax: Any, labels: list[tuple[Any, float, float]]) -> None:
    r"""Moves the texts of :obj:`labels`, triples of a text (from
    :obj:`Axes.text`, placed on its point) and its point's position, off
    each other and off the points."""
    if not labels:
        return
    from adjustText import adjust_text

    texts, xs, ys = zip(*labels)
    for text in texts:  # legible where an error bar or an arrow passes
        text.set_bbox(dict(facecolor='white', alpha=0.8, lw=0, pad=0.3))
        text.set_zorder(2.5)  # over the bars, under points and arrows
    adjust_text(
        list(texts),
        x=list(xs),
        y=list(ys),
        ax=ax,
        arrowprops=dict(arrowstyle='-', color='0.5', lw=0.5),
        expand=(1.15, 1.3),
    )
