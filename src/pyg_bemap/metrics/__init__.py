from pyg_bemap.metrics.bias import (
    DistanceBias,
    distance_bias,
    layerwise_distance_bias,
    majority_ratio,
    propagate,
)
from pyg_bemap.metrics.diagnose import Diagnosis, diagnose
from pyg_bemap.metrics.fairness_report import (
    FairnessReport,
    GroupMetrics,
    OnePredictedClassWarning,
    fairness_report,
    roc_auc,
)
from pyg_bemap.metrics.probe import (
    LINE_STYLES,
    ProbeBin,
    ProbeResult,
    sensitive_attribute_probe,
)
from pyg_bemap.metrics.task import FairnessTask, fairness_task

__all__ = [
    'LINE_STYLES',
    'Diagnosis',
    'DistanceBias',
    'FairnessReport',
    'FairnessTask',
    'GroupMetrics',
    'OnePredictedClassWarning',
    'ProbeBin',
    'ProbeResult',
    'diagnose',
    'distance_bias',
    'fairness_report',
    'fairness_task',
    'layerwise_distance_bias',
    'majority_ratio',
    'propagate',
    'roc_auc',
    'sensitive_attribute_probe',
]
