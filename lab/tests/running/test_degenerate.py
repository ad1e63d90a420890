from pyg_bemap_lab.running.degenerate import degenerate
from pyg_bemap_lab.selection import NEAR_CONSTANT


def run(loss=(0.7, 0.6), **picked):
    metrics = dict(epoch=1, acc=0.7, auc=0.7, sp=0.1, eo=0.1)
    metrics.update(picked)
    return {'curve': {'loss': list(loss)}, 'test': {'val-loss': metrics}}


def test_one_class_for_every_test_node_is_degenerate():
    assert degenerate(run(pos=1.0), 'val-loss') == 'constant'
    assert degenerate(run(pos=0.0), 'val-loss') == 'constant'
    assert degenerate(run(pos=0.3), 'val-loss') is None
    # a run stored before the positive share was: both gaps exactly 0
    old = run()
    old['test']['val-loss'].update(sp=0.0, eo=0.0)
    assert degenerate(old, 'val-loss') == 'constant'
    assert degenerate(run(sp=0.0), 'val-loss') is None


def test_one_class_for_almost_every_test_node_is_near_constant():
    # the threshold is stated: fewer than NEAR_CONSTANT of the nodes
    assert NEAR_CONSTANT == 0.05
    assert degenerate(run(pos=0.98), 'val-loss') == 'near-constant'
    assert degenerate(run(pos=0.03), 'val-loss') == 'near-constant'
    assert degenerate(run(pos=0.95), 'val-loss') is None
    assert degenerate(run(pos=0.06), 'val-loss') is None


def test_a_validation_loss_that_never_left_its_plateau_is_degenerate():
    assert degenerate(run((0.70, 0.695, 0.71), pos=0.5), 'val-loss') == (
        'plateau'
    )
    assert degenerate(run((0.70, 0.69, 0.71), pos=0.5), 'val-loss') is None


def test_a_rule_that_picked_no_epoch_has_no_degenerate_run():
    empty = {'curve': {'loss': []}, 'test': {'val-fair': None}}
    assert degenerate(empty, 'val-fair') is None
