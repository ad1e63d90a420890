import math

import numpy as np
import pytest
from scipy import stats

from pyg_bemap_lab.reporting.statistics import paired_difference

A = [0.71, 0.74, 0.69, 0.75, 0.72, 0.70, 0.73, 0.76, 0.71, 0.74]
B = [0.68, 0.73, 0.66, 0.71, 0.70, 0.70, 0.69, 0.74, 0.67, 0.72]


def test_against_scipy_on_fixed_numbers():
    result = paired_difference(A, B, seed=1)
    diffs = np.array(B) - np.array(A)
    interval = stats.bootstrap(
        (diffs,),
        np.mean,
        n_resamples=10_000,
        method='percentile',
        rng=np.random.default_rng(1),
    ).confidence_interval
    exact = stats.permutation_test(
        (diffs,), np.mean, permutation_type='samples', n_resamples=np.inf
    )
    assert result.mean == pytest.approx(diffs.mean())
    assert (result.low, result.high) == pytest.approx(
        (interval.low, interval.high)
    )
    assert result.p_value == pytest.approx(exact.pvalue)
    assert result.seeds == 10 and result.excludes_zero and result.high < 0


def test_hand_computed_exact_test():
    # all five differences positive: only the all-plus and all-minus sign
    # flips reach the observed mean, 2 of 2**5
    result = paired_difference([0] * 5, [1, 2, 3, 4, 5])
    assert result.p_value == pytest.approx(2 / 32)
    assert result.mean == 3.0


def test_degenerate_inputs():
    assert paired_difference([1, 2], [1, 2]).p_value == 1.0
    one = paired_difference([1.0, math.nan], [2.0, 3.0])
    assert one.seeds == 1 and one.mean == 1.0 and math.isnan(one.low)
    assert paired_difference([], []).seeds == 0
    with pytest.raises(ValueError, match='one value per seed'):
        paired_difference([1, 2], [1])


def test_thirty_seeds_draw_random_flips_instead_of_all_of_them():
    # 2**30 flips would not fit in memory: beyond EXACT_UP_TO seeds the
    # p-value comes from RANDOM_FLIPS seeded flips
    from pyg_bemap_lab.reporting.statistics import EXACT_UP_TO, RANDOM_FLIPS

    rng = np.random.default_rng(3)
    a = rng.normal(size=30)
    b = a + 0.5 + rng.normal(scale=0.5, size=30)
    first = paired_difference(a, b)
    assert first == paired_difference(a, b)  # seeded: the same p-value
    assert first.seeds == 30 > EXACT_UP_TO
    assert 1 / (RANDOM_FLIPS + 1) <= first.p_value < 0.01
    null = paired_difference(a, a + rng.normal(scale=0.5, size=30))
    assert null.p_value > 0.01
    # up to EXACT_UP_TO seeds, every flip: the smallest p-value is exact
    exact = paired_difference([0.0] * 16, np.linspace(1, 2, 16))
    assert exact.p_value == pytest.approx(2 / 2**16)
