r"""Reading a paired difference: whether it is marked, the one-line
verdict of a comparison, and the figures as text."""

import math
import statistics

from pyg_bemap_lab.reporting.statistics import PairedDifference

#: The column title of each reported metric, by its stored name.
METRICS = {
    'acc': 'acc',
    'auc': 'AUC',
    'sp': 'delta_sp',
    'eo': 'delta_eo',
    'prob': 'delta_prob',
}

#: The level of the paired sign-flip test behind a mark (see
#: :func:`~pyg_bemap_lab.reporting.statistics.paired_difference`).
SIGNIFICANCE = 0.05

#: What the intervals of the paired differences are and how much they
#: cover (simulated: normal differences, 4,000 replicates).
COVERAGE = (
    '95 % percentile-bootstrap intervals over the paired seeds, which '
    'cover less than 95 % with few seeds (for normal differences about 90 '
    '% at 10 seeds, 94 % at 30)'
)

#: :obj:`COVERAGE`, and what a mark is.
INTERVALS = (
    f'{COVERAGE}; a difference is marked (* in the tables) only where its '
    'interval excludes 0 and the paired sign-flip test gives p < '
    '0.05 (exact up to 16 seeds, from 100,000 seeded random sign flips '
    'beyond; its level holds for differences symmetric about 0)'
)


def significant(diff: PairedDifference) -> bool:
    r"""Whether a difference is marked: its interval excludes 0 and its
    sign-flip test gives :math:`p <` :obj:`SIGNIFICANCE`."""
    return diff.excludes_zero and diff.p_value < SIGNIFICANCE


def fewest_seeds() -> int:
    r"""The fewest paired seeds with which the exact sign-flip test can
    reach :math:`p <` :obj:`SIGNIFICANCE` (its smallest two-sided p-value
    is :math:`2 / 2^n`)."""
    return math.floor(1 - math.log2(SIGNIFICANCE)) + 1


def verdict(diffs: dict[str, PairedDifference]) -> str:
    r"""One sentence on a paired comparison: what happened to the two gaps
    and to accuracy and AUC, counting only marked differences; or why there
    is no verdict (no paired runs, or too few seeds for any mark)."""
    seeds = diffs['acc'].seeds
    if seeds == 0:
        return 'no verdict: no paired runs'
    if seeds < fewest_seeds():
        return (
            f'no verdict: {seeds} paired seed{"s" * (seeds > 1)}, a mark '
            f'needs at least {fewest_seeds()}'
        )
    fairer = [m for m in ('sp', 'eo') if significant(diffs[m])]
    lower = [m for m in fairer if diffs[m].mean < 0]
    higher = [m for m in fairer if diffs[m].mean > 0]
    if lower and higher:
        fairness = 'mixed: ' + _listed(diffs, lower + higher)
    elif lower:
        fairness = 'fairer: ' + _listed(diffs, lower)
    elif higher:
        fairness = 'less fair: ' + _listed(diffs, higher)
    else:
        fairness = 'no significant change in either gap'
    costs = [m for m in ('acc', 'auc') if significant(diffs[m])]
    if costs:
        utility = _listed(diffs, costs)
    else:
        utility = 'no significant change in accuracy or AUC'
    return f'{fairness}; {utility}'


def marked_gaps(diffs: dict[str, PairedDifference]) -> set[tuple[str, bool]]:
    r"""The marked gap differences of a comparison, each as its metric and
    whether it is fairer (a lower gap); none below :func:`fewest_seeds`."""
    if diffs['acc'].seeds < fewest_seeds():
        return set()
    return {
        (m, diffs[m].mean < 0) for m in ('sp', 'eo') if significant(diffs[m])
    }


def _listed(diffs: dict[str, PairedDifference], metrics: list[str]) -> str:
    return ', '.join(
        f'{METRICS[m]} {diffs[m].mean:+.1f} '
        f'[{diffs[m].low:+.1f}, {diffs[m].high:+.1f}]'
        for m in metrics
    )


def format_mean_std(values: list[float]) -> str:
    r"""Mean ± sample standard deviation to 2 decimals, NaN left out;
    :obj:`n/a` without values."""
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return 'n/a'
    if len(values) == 1:
        return f'{values[0]:.2f}'
    return f'{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}'


def format_difference(diff: PairedDifference) -> str:
    r"""A paired difference as :obj:`mean [low, high]`, with :obj:`*` where
    the interval excludes 0 and the exact test gives
    :math:`p <` :obj:`SIGNIFICANCE`."""
    if math.isnan(diff.mean):
        return 'n/a'
    if math.isnan(diff.low):
        return f'{diff.mean:+.2f}'
    mark = '*' if significant(diff) else ''
    return f'{diff.mean:+.2f} [{diff.low:+.2f}, {diff.high:+.2f}]{mark}'
