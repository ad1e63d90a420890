from matplotlib.figure import Figure

from pyg_bemap_lab.reporting.plot_labels import canvas, spread_labels


def test_labels_move_apart_and_stay_legible_over_bars():
    fig = Figure(figsize=(4, 3))
    canvas(fig)
    ax = fig.subplots()
    ax.errorbar([1.0, 1.1], [1.0, 1.0], xerr=0.5, yerr=0.5)
    (points,) = ax.plot([1.0, 1.1], [1.0, 1.0], 'o', zorder=3)
    texts = [ax.text(1.0, 1.0, 'first'), ax.text(1.1, 1.0, 'second')]
    spread_labels(ax, [(t, t.get_position()[0], 1.0) for t in texts])
    renderer = fig.canvas.get_renderer()
    first, second = (t.get_window_extent(renderer) for t in texts)
    assert not first.overlaps(second)
    bars = [c.get_zorder() for c in ax.collections]
    for text in texts:  # on a ground over the bars, under the points
        assert text.get_bbox_patch().get_facecolor()[:3] == (1.0, 1.0, 1.0)
        assert max(bars) < text.get_zorder() < points.get_zorder()
