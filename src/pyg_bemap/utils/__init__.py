r"""The public functions of :mod:`pyg_bemap.rules` and
:func:`~pyg_bemap.metrics.fairness_task` under their earlier namespace."""

from pyg_bemap.metrics.task import FairnessTask, fairness_task
from pyg_bemap.rules import (
    balance_score,
    exact_counting_memory,
    fair_quotas,
    hop_group_counts,
    sensitive_groups,
)

__all__ = [
    'FairnessTask',
    'fairness_task',
    'balance_score',
    'exact_counting_memory',
    'fair_quotas',
    'hop_group_counts',
    'sensitive_groups',
]
