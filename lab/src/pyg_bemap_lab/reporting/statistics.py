r"""Paired comparisons of two methods over the same seeds."""

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

#: Up to this many paired seeds the sign-flip test enumerates every flip
#: (:math:`2^{16}` of them); beyond, the flips would not fit in memory
#: (:math:`2^{30}` for 30 seeds) and :obj:`RANDOM_FLIPS` seeded random
#: flips estimate the p-value.
EXACT_UP_TO = 16

#: The random sign flips of the test beyond :obj:`EXACT_UP_TO` seeds.
RANDOM_FLIPS = 100_000


@dataclass(frozen=True)
class PairedDifference:
    r"""The difference :math:`b - a` of a metric between two methods run on
    the same seeds (same split, same initialisation).

    Attributes:
        mean (float): The mean difference over the seeds.
        low (float): The lower end of its confidence interval.
        high (float): The upper end.
        p_value (float): The two-sided p-value of a paired sign-flip
            permutation test of a zero mean difference (exact up to
            :obj:`EXACT_UP_TO` seeds).
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
    resamples, seeded); the p-value is that of the sign-flip test of the
    differences (:func:`scipy.stats.permutation_test`): exact, every flip,
    up to :obj:`EXACT_UP_TO` seeds; beyond, from :obj:`RANDOM_FLIPS` random
    flips drawn from :obj:`seed` (scipy then counts the observed statistic
    among them, so the p-value is never 0). Pairs with a NaN value are
    left out.

    Args:
        a (Sequence[float]): The metric of the reference method, per seed.
        b (Sequence[float]): The metric of the compared method, per seed.
        confidence (float, optional): The confidence level.
            (default: :obj:`0.95`)
        resamples (int, optional): Bootstrap resamples.
            (default: :obj:`10000`)
        seed (int, optional): The seed of the bootstrap and of the random
            flips. (default: :obj:`0`)
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
        n_resamples=np.inf if diffs.size <= EXACT_UP_TO else RANDOM_FLIPS,
        rng=np.random.default_rng(seed),
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
