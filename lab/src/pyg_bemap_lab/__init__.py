r"""The laboratory of :obj:`pyg-bemap`: the methods (:mod:`.models`), one
training loop (:mod:`.training`), one vocabulary of selection rules
(:mod:`.selection`), protocols (:mod:`.protocols`, :mod:`.planning`,
:mod:`.execution`), stored runs (:mod:`.store`) and paired comparisons
(:mod:`.statistics`); on a graph of one's own, :func:`compare` and
:func:`sweep`."""

from pyg_bemap_lab.comparison import ComparisonResult, compare
from pyg_bemap_lab.models import (
    BACKBONES,
    METHODS,
    PAPER_BUDGETS,
    Hyper,
    NodeClassifier,
    fast_graph,
)
from pyg_bemap_lab.selection import DEFAULT_RULE, RULES
from pyg_bemap_lab.sweep import sweep
from pyg_bemap_lab.training import (
    History,
    Run,
    Trainer,
    train,
    train_run,
)

__all__ = [
    'BACKBONES',
    'METHODS',
    'PAPER_BUDGETS',
    'DEFAULT_RULE',
    'RULES',
    'Hyper',
    'NodeClassifier',
    'fast_graph',
    'History',
    'Run',
    'Trainer',
    'train',
    'train_run',
    'compare',
    'ComparisonResult',
    'sweep',
]
