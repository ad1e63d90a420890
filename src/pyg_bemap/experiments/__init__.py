r"""The experiments: methods and training (:mod:`.training`), which epoch
is reported (:mod:`.selection`), stored runs (:mod:`.store`) and paired
comparisons (:mod:`.statistics`)."""

from pyg_bemap.experiments.training import (
    METHODS,
    PAPER_BUDGETS,
    SELECTIONS,
    EpochRecord,
    Hyper,
    NodeClassifier,
    TrainResult,
    fast_graph,
    select,
    train_and_record,
)

__all__ = [
    'METHODS',
    'PAPER_BUDGETS',
    'SELECTIONS',
    'EpochRecord',
    'Hyper',
    'NodeClassifier',
    'TrainResult',
    'fast_graph',
    'select',
    'train_and_record',
]
