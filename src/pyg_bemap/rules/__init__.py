r"""What the BeMap paper defines, one rule per module: the sensitive groups
(rule 1, ``groups``), the group counts within :math:`L` hops (rule 2,
``counts``, ``reachability``), the balance scores (rule 3,
``balance``), the quotas (rule 4, ``quotas``) and the draw of a
fair neighbourhood (``draw``)."""

from pyg_bemap.rules.balance import balance_score
from pyg_bemap.rules.counts import exact_counting_memory, hop_group_counts
from pyg_bemap.rules.groups import check_edge_index, sensitive_groups
from pyg_bemap.rules.quotas import STRATEGIES, fair_quotas

__all__ = [
    'STRATEGIES',
    'balance_score',
    'check_edge_index',
    'exact_counting_memory',
    'fair_quotas',
    'hop_group_counts',
    'sensitive_groups',
]
