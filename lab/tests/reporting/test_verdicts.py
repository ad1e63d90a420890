from pyg_bemap_lab.reporting.statistics import PairedDifference
from pyg_bemap_lab.reporting.verdicts import (
    fewest_seeds,
    format_difference,
    verdict,
)


def diff(mean, low, high, p_value=0.004, seeds=10):
    return PairedDifference(mean, low, high, p_value, seeds)


NONE = diff(0.1, -1.0, 1.2, p_value=0.8)


def test_a_mark_needs_the_interval_and_the_exact_test():
    few = diff(2.0, 0.5, 3.0, p_value=0.25, seeds=3)  # 3 seeds: p >= 0.25
    assert format_difference(few) == '+2.00 [+0.50, +3.00]'
    assert format_difference(diff(2.0, 0.5, 3.0)) == '+2.00 [+0.50, +3.00]*'
    assert not format_difference(diff(2.0, -0.5, 3.0)).endswith('*')


def test_verdict_counts_only_marked_differences():
    nothing = dict(acc=NONE, auc=NONE, sp=NONE, eo=NONE)
    assert verdict(nothing) == (
        'no significant change in either gap; '
        'no significant change in accuracy or AUC'
    )
    fairer = dict(
        nothing, sp=diff(-3.04, -5.0, -1.2), acc=diff(-1.0, -2, -0.5)
    )
    assert verdict(fairer) == (
        'fairer: delta_sp -3.0 [-5.0, -1.2]; acc -1.0 [-2.0, -0.5]'
    )
    unmarked = dict(nothing, sp=diff(-3.0, -5.0, -1.2, p_value=0.06))
    assert verdict(unmarked) == verdict(nothing)
    worse = dict(nothing, eo=diff(2.0, 1.0, 3.0))
    assert verdict(worse).startswith('less fair: delta_eo +2.0 [+1.0, +3.0];')
    mixed = dict(worse, sp=diff(-2.0, -3.0, -1.0))
    assert verdict(mixed).startswith(
        'mixed: delta_sp -2.0 [-3.0, -1.0], delta_eo +2.0 [+1.0, +3.0];'
    )


def test_no_verdict_without_runs_or_with_too_few_seeds():
    assert fewest_seeds() == 6  # 2 / 2**5 = 0.0625, 2 / 2**6 < 0.05
    nan = float('nan')
    empty = PairedDifference(nan, nan, nan, nan, 0)
    assert verdict(dict(acc=empty, auc=empty, sp=empty, eo=empty)) == (
        'no verdict: no paired runs'
    )
    few = diff(-3.0, -5.0, -1.0, p_value=0.25, seeds=3)
    assert verdict(dict(acc=few, auc=few, sp=few, eo=few)) == (
        'no verdict: 3 paired seeds, a mark needs at least 6'
    )
    one = diff(-3.0, nan, nan, p_value=1.0, seeds=1)
    assert verdict(dict(acc=one, auc=one, sp=one, eo=one)) == (
        'no verdict: 1 paired seed, a mark needs at least 6'
    )
