r"""The laboratory of :obj:`pyg-bemap`, in three phases: its vocabulary
(the methods, :mod:`.methods`; the configuration of a run,
:mod:`.run_config`; the selection rules, :mod:`.selection`; names and
defaults, :mod:`.names`), then

* :mod:`.io`: the run store and graphs of one's own;
* :mod:`.running`: the models, one training loop, protocols and their
  execution;
* :mod:`.reporting`: tables, plots, paired statistics and the report of
  every command;

and the commands on top (:mod:`.cli`, :mod:`.commands`; on a graph of
one's own, :func:`compare` and :func:`sweep`).

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
    'PAPER_BUDGETS': 'running.models',
    'NodeClassifier': 'running.models',
    'RunConfig': 'run_config',
    'DEFAULT_RULE': 'selection',
    'RULES': 'selection',
    'History': 'running.training',
    'Run': 'running.training',
    'Trainer': 'running.training',
    'train': 'running.training',
    'train_run': 'running.training',
    'compare': 'comparison',
    'ComparisonResult': 'reporting.comparison_report',
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
