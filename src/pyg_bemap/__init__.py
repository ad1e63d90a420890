r"""BeMap (Balanced Message Passing) for PyTorch Geometric."""

from importlib.metadata import PackageNotFoundError, version

from pyg_bemap.bemap_info import BeMapInfo
from pyg_bemap.edge_index import BeMapEdgeIndex, attach_bemap, get_bemap
from pyg_bemap.functional import balanced_edge_sample
from pyg_bemap.metrics import (
    Diagnosis,
    FairnessReport,
    diagnose,
    fairness_report,
)
from pyg_bemap.nn import (
    BeMapConv,
    BeMapGCN,
    RowNormConv,
    one_sample_per_call,
    to_bemap,
)
from pyg_bemap.rules import (
    balance_score,
    exact_counting_memory,
    fair_quotas,
    hop_group_counts,
)
from pyg_bemap.settings import SamplerSettings
from pyg_bemap.transforms import AttachBeMap, BalanceAwareSampling

# The installed distribution's version (``pyproject.toml`` states it,
# once); ``'0+unknown'`` for a source tree on the path, not installed.
try:
    __version__ = version('pyg-bemap')
except PackageNotFoundError:  # a source tree on the path
    __version__ = '0+unknown'

__all__ = [
    'AttachBeMap',
    'BalanceAwareSampling',
    'BeMapConv',
    'BeMapEdgeIndex',
    'BeMapGCN',
    'BeMapInfo',
    'Diagnosis',
    'FairnessReport',
    'RowNormConv',
    'SamplerSettings',
    'attach_bemap',
    'balance_score',
    'balanced_edge_sample',
    'diagnose',
    'exact_counting_memory',
    'fair_quotas',
    'fairness_report',
    'get_bemap',
    'hop_group_counts',
    'one_sample_per_call',
    'to_bemap',
    '__version__',
]
