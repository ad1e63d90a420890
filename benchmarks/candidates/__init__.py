r"""Candidates for the library's hot paths, kept beside the benchmarks until
a GPU measures them (issue "GPU": "choose the kernel by measurement").

A candidate module replaces one function of the library by a drop-in of
the same signature (:obj:`REPLACES` names it) and is measured by the
resample, step and end-to-end benchmarks with :obj:`--candidate NAME
--device cuda` (``CANDIDATES=NAME bash scripts/gpu_check.sh``), which
patch it in for their own process only. The library never imports this
package. A candidate that beats the library's function on the GPU moves
into the library in place of it (so that no branch is added); one that
does not is deleted.
"""

import importlib
from types import ModuleType


def replaced(candidate: ModuleType) -> tuple[ModuleType, str]:
    r"""The library module and the name of the function that
    :obj:`candidate` replaces (its :obj:`REPLACES`)."""
    owner, _, attribute = candidate.REPLACES.rpartition('.')
    return importlib.import_module(owner), attribute
