r"""Trade-off plots built from stored runs: test accuracy against each
fairness gap, one curve per swept method."""

import statistics
from typing import Any

from pyg_bemap.experiments.protocols import (
    Protocol,
    stored_runs,
    sweep_configs,
)
from pyg_bemap.experiments.store import RunStore

Chosen = dict[tuple[str, str], dict[str, Any]]

#: The marker and line style of each curve, distinct in greyscale too.
STYLES = [('o', '-'), ('s', '--'), ('^', ':'), ('D', '-.')]


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
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
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
        marker, line = STYLES[i % len(STYLES)]
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
            ax.errorbar(
                xs,
                ys,
                xerr=[
                    [min(p[gap][1], p[gap][0]) for _, p in series],
                    [p[gap][1] for _, p in series],
                ],
                yerr=[p['acc'][1] for _, p in series],
                marker=marker,
                linestyle=line if name in curves else 'none',
                color=f'C{i}',
                capsize=3,
                label=name,
            )
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
    for ax, title in zip(axes, ('delta_sp', 'delta_eo')):
        ax.set_xlabel(f'test {title} (%), lower is fairer', fontsize=11)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel('test accuracy (%)', fontsize=11)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc='center right',
        fontsize=10,
        title='ringed: chosen setting',
    )
    fig.suptitle(
        f'{dataset}: accuracy against fairness, epoch by {rule}, '
        f'mean ± std over up to {len(protocol.sweep_seeds or protocol.seeds)} '
        'seeds',
        fontsize=12,
    )
    fig.tight_layout(rect=(0, 0, 0.82, 1))
    fig.savefig(path, dpi=130)
    plt.close(fig)
