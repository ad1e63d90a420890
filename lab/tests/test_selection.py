import math

import pytest

from pyg_bemap_lab.selection import (
    MIN_EPOCH,
    NEAR_CONSTANT,
    RULES,
    check_rule,
    fairness_aware,
    highest,
    learned,
    lowest_learned_loss,
    lowest_validation_loss,
    pick_epoch,
    select_on_test_split,
)

NAN = math.nan


def test_lowest_validation_loss():
    assert lowest_validation_loss([0.9, 0.5, 0.7, 0.5]) == 1  # earliest tie
    assert lowest_validation_loss([NAN, 0.8]) == 1
    assert lowest_validation_loss([]) is None


def test_fairness_aware_rule():
    acc = [0.60, 0.80, 0.78, 0.77, 0.70]
    auc = [0.60, 0.89, 0.88, 0.80, 0.90]
    sp = [0.00, 0.10, 0.05, 0.01, 0.02]
    eo = [0.00, 0.10, 0.05, 0.01, 0.02]
    # epoch 0: accuracy below 95 % of 0.80; epoch 3: AUC below 95 % of
    # 0.90 (0.855); epoch 4: accuracy 0.70 < 0.76. Left: 1 and 2.
    assert fairness_aware(acc, auc, sp, eo) == 2
    assert fairness_aware(acc, auc, sp, eo, tolerance=0.85) == 3
    # an undefined gap is never chosen
    assert fairness_aware([0.8, 0.8], [0.8, 0.8], [0.1, NAN], [0.1, 0.0]) == 0
    assert fairness_aware([0.8], [0.8], [NAN], [0.1]) is None


def test_selection_on_the_test_split_is_the_reference_rule():
    acc = [0.70, 0.90, 0.85, 0.85]
    sp = [0.01, 0.20, 0.03, 0.01]
    eo = [0.01, 0.01, 0.03, 0.02]
    assert select_on_test_split(acc, sp, eo, budget=0.05) == 2  # earliest tie
    assert select_on_test_split(acc, sp, eo, budget=0.005) is None


def test_the_reference_budget_is_strict_and_an_undefined_gap_fails_it():
    acc = [0.90, 0.80, 0.70]
    sp = [0.07, NAN, 0.06]
    eo = [0.00, 0.00, 0.069]
    # epoch 0 sits on the budget, epoch 1 has no delta_sp: only 2 is under
    assert select_on_test_split(acc, sp, eo, budget=0.07) == 2


def test_the_lowest_loss_among_epochs_that_learned():
    loss = [0.60, 0.40, 0.45, 0.50, 0.55, 0.42]
    auc = [0.50, 0.80, 0.70, 0.49, 0.75, 0.60]
    pos = [0.50, 0.98, 0.50, 0.50, 0.03, 0.95]
    # 0: AUC not above 0.5; 1: 98 % positive; 3: AUC below 0.5; 4: 3 %
    # positive; 5 is the lowest loss left (95 % positive is allowed)
    assert lowest_learned_loss(loss, auc, pos) == 5
    assert lowest_learned_loss(loss[:2], auc[:2], pos[:2]) is None
    assert learned(0.51, NEAR_CONSTANT) and not learned(0.5, 0.5)


def test_the_late_rule_skips_the_first_epochs():
    loss = [0.1] * MIN_EPOCH + [0.5, 0.4, 0.45]
    val = dict(loss=loss, pos=[0.5] * len(loss), auc=[0.8] * len(loss))
    assert pick_epoch('val-loss', val) == 0
    assert pick_epoch('val-loss-late', val) == MIN_EPOCH + 1


def test_every_rule_has_one_name_and_picks_its_epoch():
    val = dict(
        loss=[0.6, 0.5, 0.55, 0.5],
        acc=[0.70, 0.80, 0.80, 0.75],
        auc=[0.80, 0.79, 0.90, NAN],
        sp=[0.01, 0.20, 0.02, 0.0],
        eo=[0.01, 0.01, 0.01, 0.0],
        pos=[0.5, 0.5, 0.5, 0.5],
    )
    test = dict(acc=[0.9, 0.6, 0.95, 0.99], sp=[0.01] * 4, eo=[0.0] * 4)
    picked = {rule: pick_epoch(rule, val, test, budget=0.05) for rule in RULES}
    assert picked == {
        'val-loss': 1,  # the earliest of two lowest losses
        'val-acc': 1,  # the earliest of two best accuracies
        'val-auc': 2,  # NaN skipped
        'val-fair': 2,  # 0: accuracy too low, 1: larger gap, 3: no AUC
        'val-loss-learned': 1,  # 3 has no AUC
        'val-loss-late': None,  # every epoch before MIN_EPOCH
        'test-fair': 3,  # the best TEST accuracy within the budget
    }
    assert highest([NAN]) is None
    with pytest.raises(ValueError, match='needs the test curve'):
        pick_epoch('test-fair', val)
    with pytest.raises(ValueError, match="unknown selection rule 'paper'"):
        check_rule('paper')
    with pytest.raises(ValueError, match='choose from val-loss, val-fair'):
        check_rule('val-acc', ('val-loss', 'val-fair'))
