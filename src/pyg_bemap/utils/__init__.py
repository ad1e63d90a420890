from pyg_bemap.utils.balance import balance_score
from pyg_bemap.utils.counts import (
    exact_counting_memory,
    hop_group_counts,
)
from pyg_bemap.utils.groups import sensitive_groups
from pyg_bemap.utils.sampling import fair_quotas
from pyg_bemap.utils.task import FairnessTask, fairness_task

__all__ = [
    'FairnessTask',
    'fairness_task',
    'balance_score',
    'exact_counting_memory',
    'fair_quotas',
    'hop_group_counts',
    'sensitive_groups',
]
