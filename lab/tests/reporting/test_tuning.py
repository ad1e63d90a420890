import math

import pytest

from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.reporting.tuning import (
    grid_points,
    plot_curves,
    tuning_report,
)
from pyg_bemap_lab.run_config import RunConfig
from pyg_bemap_lab.running.protocols import Protocol, record_of

GRID = Protocol(
    name='grid',
    description='for tests',
    datasets=('nba',),
    methods=('GCN',),
    seeds=(0, 1, 2),
    max_epochs=3,
    patience=3,
    config=RunConfig(hidden=8),
    grid=dict(lr=(1e-2, 1e-3)),
    grid_seeds=(0, 1),
)
FAST, SLOW = GRID.grid_configs()


def run(config, seed, loss, auc, test_auc):
    result = dict(
        curve=dict(loss=loss, auc=auc),
        epochs=len(loss),
        test={
            rule: dict(epoch=0, acc=0.7, auc=test_auc, sp=0.1, eo=0.1)
            for rule in ('val-loss', 'val-fair', 'test-fair')
        },
    )
    return record_of(GRID, ('nba', 'GCN', config, seed), result)


@pytest.fixture
def store(tmp_path):
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    # lowest loss at epoch 1 (AUC 0.7), best AUC 0.9 at epoch 2
    store.add(run(FAST, 0, [0.6, 0.4, 0.5], [0.5, 0.7, 0.9], 0.65))
    store.add(run(FAST, 1, [0.3, 0.5], [0.6, 0.8], 0.75))
    store.add(run(FAST, 2, [0.1, 0.1], [0.9, 0.9], 0.99))  # not a grid seed
    store.add(run(SLOW, 0, [0.9, 0.8, 0.7], [0.5, 0.5, 0.55], 0.5))
    return store


def test_grid_points_average_the_tuning_runs_only(store):
    fast, slow = grid_points(GRID, store, 'nba', 'GCN')
    assert fast.config == FAST and fast.runs == 2
    assert fast.loss == pytest.approx((0.4 + 0.3) / 2)
    assert fast.val_auc == pytest.approx(100 * (0.7 + 0.6) / 2)
    assert fast.best_val_auc == pytest.approx(100 * (0.9 + 0.8) / 2)
    assert fast.test_auc == pytest.approx(100 * (0.65 + 0.75) / 2)
    assert fast.epochs == 2.5
    assert slow.runs == 1 and slow.val_auc == pytest.approx(55.0)
    assert grid_points(GRID, store, 'nba', 'MLP') == []


def test_nan_figures_are_left_out_of_the_means(tmp_path):
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    store.add(run(FAST, 0, [0.4], [math.nan], math.nan))
    store.add(run(FAST, 1, [0.2], [0.8], 0.7))
    (point,) = grid_points(GRID, store, 'nba', 'GCN')
    assert point.val_auc == pytest.approx(80.0)
    assert point.test_auc == pytest.approx(70.0)


def test_report_marks_the_chosen_combination(store, tmp_path):
    report = tuning_report(GRID, store, {('nba', 'GCN'): FAST})
    rows = [line for line in report.splitlines() if 'GCN |' in line]
    assert rows == [
        '| > GCN | 0.01 | 2 | 0.350 | 65.0 | 85.0 | 70.0 | 2 |',
        '| GCN | 0.001 | 1 | 0.700 | 55.0 | 55.0 | 50.0 | 3 |',
    ]
    path = tmp_path / 'curves.png'
    plot_curves(GRID, store, {('nba', 'GCN'): FAST}, str(path))
    assert path.stat().st_size > 10_000


def test_reproduce_writes_the_grid_beside_the_report(store, tmp_path):
    from pyg_bemap_lab.cli import main
    from pyg_bemap_lab.running.protocols import PROTOCOLS

    argv = ['reproduce', '--protocol', 'grid', '--report-only']
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(PROTOCOLS, 'grid', GRID)
        names = tuple(PROTOCOLS)  # with 'grid'
        patch.setattr('pyg_bemap_lab.cli.PROTOCOL_NAMES', names)
        assert main(argv + ['--out', str(tmp_path), '--root', '/x']) == 0
    grid = (tmp_path / 'tuning_grid.md').read_text()
    table = tuning_report(GRID, store, {('nba', 'GCN'): FAST})
    assert grid.startswith(table)  # then the runs' code versions
    assert grid[len(table) :].startswith('\n## Code versions\n')
    assert (tmp_path / 'curves_grid.png').stat().st_size > 10_000
    assert not (tmp_path / 'paired_grid.png').exists()  # nothing to pair
