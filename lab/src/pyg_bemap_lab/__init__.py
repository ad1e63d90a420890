r"""The laboratory of :obj:`pyg-bemap`: the methods (:mod:`.methods`,
:mod:`.models`), the configuration of a run (:mod:`.run_config`), one
training loop (:mod:`.training`), one vocabulary of selection rules
(:mod:`.selection`), protocols (:mod:`.protocols`, :mod:`.planning`,
:mod:`.execution`), stored runs (:mod:`.store`) and paired comparisons
(:mod:`.statistics`); on a graph of one's own, :func:`compare` and
:func:`sweep`.

The names below are imported on first use, so that the command line
starts without torch."""

import importlib
from importlib.metadata import version
from typing import Any

#: The installed laboratory's version (its ``pyproject.toml`` states it,
#: with the library versions it works with).
__version__ = version('pyg-bemap-lab')

#: Each exported name and the module that holds it.
_HOMES = {
    'BACKBONES': 'methods',
    'METHODS': 'methods',
    'PAPER_BUDGETS': 'models',
    'NodeClassifier': 'models',
    'RunConfig': 'run_config',
    'DEFAULT_RULE': 'selection',
    'RULES': 'selection',
    'History': 'training',
    'Run': 'training',
    'Trainer': 'training',
    'train': 'training',
    'train_run': 'training',
    'compare': 'comparison',
    'ComparisonResult': 'comparison_report',
    'sweep': 'sweeping',
}

__all__ = list(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
    module = importlib.import_module(f'{__name__}.{_HOMES[name]}')
    return getattr(module, name)


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
