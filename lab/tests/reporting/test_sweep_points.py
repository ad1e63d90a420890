import math

from pyg_bemap_lab.reporting.sweep_points import (
    SweepPoint,
    _mark_frontier,
    setting_label,
    validation_choice,
)


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
        return SweepPoint(label, method, {}, backbone, 10, 0, values,
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
