r"""What the tuning grid shows, built from stored runs: every combination
a protocol tried for each backbone, and the validation curves of the
chosen one, so that a reader can see whether a weak baseline is the
tuning's fault or the data's."""

import math
import statistics
from dataclasses import dataclass

from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.reporting.figures import save_png
from pyg_bemap_lab.run_config import Chosen, RunConfig
from pyg_bemap_lab.running.planning import chosen_runs, stored_runs
from pyg_bemap_lab.running.protocols import Protocol, tuned_backbones


@dataclass(frozen=True)
class GridPoint:
    r"""One grid combination of one backbone, averaged over its tuning
    runs (in %, except the loss and the epochs).

    Args:
        config (RunConfig): The combination.
        runs (int): Its tuning runs.
        loss (float): The lowest validation loss (the tuning criterion).
        val_auc (float): The validation AUC at that epoch.
        best_val_auc (float): The highest validation AUC at any epoch.
        test_auc (float): The test AUC at the epoch of the lowest
            validation loss.
        epochs (float): The epochs trained before early stopping.
    """

    config: RunConfig
    runs: int
    loss: float
    val_auc: float
    best_val_auc: float
    test_auc: float
    epochs: float


def grid_points(
    protocol: Protocol, store: RunStore, dataset: str, method: str
) -> list[GridPoint]:
    r"""The stored tuning runs of :obj:`method` on :obj:`dataset`, one
    :class:`GridPoint` per grid combination that has runs."""
    points = []
    for config in protocol.grid_configs():
        runs = stored_runs(
            protocol, store, dataset, method, config, protocol.grid_seeds
        )
        if runs:
            points.append(_grid_point(config, runs))
    return points


def _grid_point(config: RunConfig, runs: list[dict]) -> GridPoint:
    def mean(values: list[float]) -> float:
        kept = [v for v in values if not math.isnan(v)]
        return statistics.mean(kept) if kept else math.nan

    curves = [run['curve'] for run in runs]
    lowest = [
        min(range(len(c['loss'])), key=c['loss'].__getitem__) for c in curves
    ]
    return GridPoint(
        config=config,
        runs=len(runs),
        loss=mean([c['loss'][i] for c, i in zip(curves, lowest)]),
        val_auc=100 * mean([c['auc'][i] for c, i in zip(curves, lowest)]),
        best_val_auc=100 * mean([max(c['auc']) for c in curves]),
        test_auc=100 * mean([run['test']['val-loss']['auc'] for run in runs]),
        epochs=mean([run['epochs'] for run in runs]),
    )


def tuning_report(protocol: Protocol, store: RunStore, chosen: Chosen) -> str:
    r"""Markdown: per dataset, every grid combination of every tuned
    backbone with its tuning figures (see :class:`GridPoint`), the chosen
    one marked."""
    names = sorted(protocol.grid)
    lines = [
        f'## Tuning grids of the protocol {protocol.name!r}',
        '',
        f'Each combination trained with the seeds {list(protocol.grid_seeds)}'
        '; means over those runs. The lowest validation loss chose the '
        'combination (marked `>`). "best val AUC" is the highest validation '
        'AUC at any epoch, an upper bound on what any epoch-selection rule '
        'could have picked on validation; the test AUC (at the epoch of the '
        'lowest validation loss) is shown for reading only and chose '
        'nothing.',
        '',
    ]
    for dataset in protocol.datasets:
        points = {
            m: grid_points(protocol, store, dataset, m)
            for m in tuned_backbones(protocol)
        }
        if not any(points.values()):
            continue
        lines += [f'### {dataset}', '']
        lines += [
            '| method | ' + ' | '.join(names) + ' | runs | val loss | '
            'val AUC | best val AUC | test AUC | epochs |',
            '|---|' + '---|' * (len(names) + 6),
        ]
        for method, grid in points.items():
            for point in grid:
                mark = (
                    '> '
                    if point.config == chosen.get((dataset, method))
                    else ''
                )
                values = ' | '.join(
                    str(point.config.as_dict()[n]) for n in names
                )
                lines.append(
                    f'| {mark}{method} | {values} | {point.runs} | '
                    f'{point.loss:.3f} | {point.val_auc:.1f} | '
                    f'{point.best_val_auc:.1f} | {point.test_auc:.1f} | '
                    f'{point.epochs:.0f} |'
                )
        lines.append('')
    return '\n'.join(lines)


def plot_curves(
    protocol: Protocol,
    store: RunStore,
    chosen: Chosen,
    path: str,
    method: str = 'GCN',
) -> None:
    r"""Saves a PNG of the validation loss (left) and validation AUC
    (right) per epoch of :obj:`method`'s chosen configuration, one line
    per seed, one row per dataset with runs."""
    from matplotlib.figure import Figure  # no pyplot: no global backend

    runs_of = {
        d: chosen_runs(protocol, store, chosen, d, method)
        for d in protocol.datasets
        if (d, method) in chosen
    }
    datasets = [d for d, runs in runs_of.items() if runs]
    fig = Figure(figsize=(8, 2.3 * max(1, len(datasets)) + 0.9))
    axes = fig.subplots(max(1, len(datasets)), 2, squeeze=False)
    for row, dataset in enumerate(datasets):
        runs = runs_of[dataset]
        for run in runs:
            curve = run['curve']
            axes[row, 0].plot(curve['loss'], lw=0.8, alpha=0.7)
            axes[row, 1].plot(
                [100 * a for a in curve['auc']], lw=0.8, alpha=0.7
            )
        axes[row, 0].set_title(f'{dataset} ({len(runs)} seeds): loss')
        axes[row, 1].set_title(f'{dataset}: AUC (%)')
    axes[-1, 0].set_xlabel('epoch')
    axes[-1, 1].set_xlabel('epoch')
    for ax in axes.flat:
        ax.grid(alpha=0.3)
    fig.suptitle(
        f'{method}, chosen hyper-parameters: validation curves,\n'
        'one line per seed, until early stopping',
        fontsize=11,
    )
    fig.tight_layout()
    save_png(fig, path, dpi=130)
