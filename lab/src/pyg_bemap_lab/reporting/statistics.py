r"""Paired comparisons of two methods over the same seeds."""

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass(frozen=True)
class PairedDifference:
    r"""The difference :math:`b - a` of a metric between two methods run on
    the same seeds (same split, same initialisation).

    Attributes:
        mean (float): The mean difference over the seeds.
        low (float): The lower end of its confidence interval.
        high (float): The upper end.
        p_value (float): The two-sided p-value of an exact paired
            sign-flip permutation test of a zero mean difference.
        seeds (int): The number of seeds where both values are defined.
    """

    mean: float
    low: float
    high: float
    p_value: float
    seeds: int

    @property
    def excludes_zero(self) -> bool:
        r"""Whether the confidence interval lies on one side of 0."""
        return self.low > 0 or self.high < 0


def paired_difference(
    a: Sequence[float],
    b: Sequence[float],
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> PairedDifference:
    r"""Compares :obj:`b` with :obj:`a`, paired by position (seed).

    The interval is the percentile bootstrap interval of the mean of the
    paired differences (:func:`scipy.stats.bootstrap`, :obj:`resamples`
    resamples, seeded); the p-value is exact: every sign flip of the
    differences (:func:`scipy.stats.permutation_test`). Pairs with a NaN
    value are left out.

    Args:
        a (Sequence[float]): The metric of the reference method, per seed.
        b (Sequence[float]): The metric of the compared method, per seed.
        confidence (float, optional): The confidence level.
            (default: :obj:`0.95`)
        resamples (int, optional): Bootstrap resamples.
            (default: :obj:`10000`)
        seed (int, optional): The bootstrap's seed. (default: :obj:`0`)
    """
    if len(a) != len(b):
        raise ValueError(
            f"'a' and 'b' must hold one value per seed each (got {len(a)} "
            f'and {len(b)} values)'
        )
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    diffs = diffs[~np.isnan(diffs)]
    nan = math.nan
    if diffs.size == 0:
        return PairedDifference(nan, nan, nan, nan, 0)
    mean = float(diffs.mean())
    if diffs.size < 2:
        return PairedDifference(mean, nan, nan, nan, int(diffs.size))
    if np.all(diffs == diffs[0]):  # no spread: the interval is a point
        p_value = 1.0 if mean == 0 else 2.0 / 2**diffs.size
        return PairedDifference(mean, mean, mean, p_value, int(diffs.size))
    interval = stats.bootstrap(
        (diffs,),
        np.mean,
        confidence_level=confidence,
        n_resamples=resamples,
        method='percentile',
        rng=np.random.default_rng(seed),
    ).confidence_interval
    test = stats.permutation_test(
        (diffs,),
        np.mean,
        permutation_type='samples',
        alternative='two-sided',
        n_resamples=np.inf,
    )
    return PairedDifference(
        mean,
        float(interval.low),
        float(interval.high),
        float(test.pvalue),
        int(diffs.size),
    )


def mean_interval(
    values: Sequence[float], confidence: float = 0.95
) -> tuple[float, float]:
    r"""The mean of :obj:`values` and the half-width of its Student-t
    confidence interval (NaN below two values); NaN values are left out."""
    kept = [v for v in values if not math.isnan(v)]
    if not kept:
        return math.nan, math.nan
    mean = statistics.mean(kept)
    if len(kept) < 2:
        return mean, math.nan
    scale = statistics.stdev(kept) / math.sqrt(len(kept))
    quantile = stats.t.ppf(0.5 + confidence / 2, len(kept) - 1)
    return mean, float(quantile * scale)
