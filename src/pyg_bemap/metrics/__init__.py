from pyg_bemap.metrics.bias import (
    DistanceBias,
    ProbeBin,
    ProbeResult,
    distance_bias,
    layerwise_distance_bias,
    majority_ratio,
    propagate,
    sensitive_attribute_probe,
)
from pyg_bemap.metrics.diagnose import Diagnosis, diagnose
from pyg_bemap.metrics.fairness_report import (
    FairnessReport,
    GroupMetrics,
    fairness_report,
    roc_auc,
)

__all__ = [
    'Diagnosis',
    'DistanceBias',
    'FairnessReport',
    'GroupMetrics',
    'ProbeBin',
    'ProbeResult',
    'diagnose',
    'distance_bias',
    'fairness_report',
    'layerwise_distance_bias',
    'majority_ratio',
    'propagate',
    'roc_auc',
    'sensitive_attribute_probe',
]
