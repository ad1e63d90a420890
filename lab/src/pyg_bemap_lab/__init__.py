r"""The experiments: methods and training (:mod:`.training`), which epoch
is reported (:mod:`.selection`), stored runs (:mod:`.store`) and paired
comparisons (:mod:`.statistics`)."""

from pyg_bemap_lab.training import (
    BACKBONES,
    METHODS,
    PAPER_BUDGETS,
    SELECTIONS,
    EpochRecord,
    Hyper,
    NodeClassifier,
    Trainer,
    TrainResult,
    fast_graph,
    select,
    train_and_record,
    train_run,
)

__all__ = [
    'BACKBONES',
    'METHODS',
    'PAPER_BUDGETS',
    'SELECTIONS',
    'EpochRecord',
    'Hyper',
    'NodeClassifier',
    'Trainer',
    'TrainResult',
    'fast_graph',
    'select',
    'train_and_record',
    'train_run',
]
