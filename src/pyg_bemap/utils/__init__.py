from pyg_bemap.utils.balance import balance_score
from pyg_bemap.utils.counts import (
    exact_counting_memory,
    hop_group_counts,
)
from pyg_bemap.utils.groups import sensitive_groups
from pyg_bemap.utils.sampling import fair_quotas

__all__ = [
    'balance_score',
    'exact_counting_memory',
    'fair_quotas',
    'hop_group_counts',
    'sensitive_groups',
]
