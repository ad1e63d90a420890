import math

from pyg_bemap_lab.reporting.sweep_points import (
    SweepPoint,
    _mark_frontier,
    setting_label,
    validation_choice,
)
from pyg_bemap_lab.reporting.sweep_report import sweep_summary
from pyg_bemap_lab.sweeping import sweep_protocol


def test_setting_labels_name_the_method_once():
    assert setting_label('FairDrop', {'fairdrop_delta': 0.08}) == (
        'FairDrop delta=0.08'  # it read 'FairDrop FairDrop delta=0.08'
    )
    assert setting_label('BeMap(sym)', {'balance_delta': 0.1}) == (
        'sym balance delta=0.1'
    )
    assert setting_label('BeMap(row)', {'beta': 1.0, 'min_keep': 8}) == (
        'row beta=1 m=8'
    )
    assert setting_label('GCN', {}) == 'GCN'


def test_the_frontier_and_the_validation_choice():
    def point(label, method, acc, sp, eo=0.0, backbone='GCN'):
        values = dict(acc=acc, auc=0.5, sp=sp, eo=eo)
        return SweepPoint(label, method, {}, backbone, 10, 0, 0, values,
                          values, {})  # fmt: skip

    points = [
        point('GCN', 'GCN', 0.80, 0.20, backbone=None),
        point('sym', 'BeMap(sym)', 0.79, 0.10, 0.05),
        point('sym beta=1', 'BeMap(sym)', 0.60, 0.01, 0.0),  # too costly
        point('row', 'BeMap(row)', 0.78, 0.15, 0.30),  # dominated by sym
        point('nan', 'BeMap(sym)', math.nan, 0.0),
    ]
    _mark_frontier(points)
    assert [p.on_frontier for p in points] == [True, True, True, False, False]
    assert validation_choice(points).label == 'sym'
    assert validation_choice(points[:1]) is None


def test_the_summary_counts_the_runs_with_no_epoch_to_report():
    # they are left out of the means; the table says how many per setting
    values = dict(acc=0.8, auc=0.5, sp=0.1, eo=0.1)
    points = [
        SweepPoint('GCN', 'GCN', {}, None, 7, 3, 1, values, values, {}),
        SweepPoint(
            'sym', 'BeMap(sym)', {}, 'GCN', 10, 0, 2, values, values, {}
        ),  # fmt: skip
    ]
    text = sweep_summary(sweep_protocol('nba', 10), points, None)
    rows = {line.split()[0]: line.split() for line in text.splitlines()
            if line.strip()}  # fmt: skip
    header = next(line for line in text.splitlines() if 'val acc' in line)
    assert header.split()[-2:] == ['none', 'deg']
    assert rows['GCN'][-2:] == ['3', '1'] and rows['sym'][-2:] == ['0', '2']
    assert 'none counts runs with no epoch to report' in ' '.join(text.split())
    assert max(len(line) for line in text.splitlines()) <= 80


def test_a_difference_over_one_seed_has_no_interval():
    from pyg_bemap_lab.reporting.statistics import PairedDifference
    from pyg_bemap_lab.reporting.sweep_report import _differences

    one = PairedDifference(2.53, math.nan, math.nan, math.nan, 1)
    both = PairedDifference(-1.0, -2.0, -0.5, 0.01, 8)
    assert _differences({'acc': one, 'sp': both, 'eo': one}) == (
        'acc +2.53, delta_sp -1.00 [-2.00, -0.50]*, delta_eo +2.53'
    )  # it read 'acc +2.53 [+nan, +nan]'
