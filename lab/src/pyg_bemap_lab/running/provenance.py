r"""What a stored run was made with: the code's commit and the versions of
the libraries it ran on, so that two runs of one configuration and seed
that differ can be told apart."""

import importlib.metadata
import os.path as osp
import subprocess
from types import ModuleType

import torch

import pyg_bemap
import pyg_bemap_lab

#: The distributions whose versions a run records beside torch's (absent
#: ones are left out: torch-sparse and torch-scatter are optional).
DISTRIBUTIONS = (
    'torch_geometric',
    'torch_sparse',
    'torch_scatter',
    'pyg-bemap',
    'pyg-bemap-lab',
)


def provenance() -> dict[str, str]:
    r"""torch's version with its build (:obj:`torch.__version__`, such as
    :obj:`'2.14.1+cu130'`: builds of one release compute apart), the
    versions of :obj:`DISTRIBUTIONS` that are installed and, for
    :obj:`pyg_bemap` and :obj:`pyg_bemap_lab` where each is imported from a
    Git checkout, its commit (:obj:`'pyg_bemap commit'`, with
    :obj:`'+changes'` where tracked files differ from it) when this process
    imported them: the code its runs use, whatever is committed since."""
    found = {'torch': str(torch.__version__)}
    for name in DISTRIBUTIONS:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found | _COMMITS


def _commit(module: ModuleType) -> str | None:
    folder = osp.dirname(osp.abspath(str(module.__file__)))
    try:
        head = _git(folder, 'rev-parse', 'HEAD')
        changes = _git(folder, 'status', '--porcelain', '--untracked-files=no')
    except (OSError, subprocess.SubprocessError):
        return None  # not a checkout, or no git
    return head + ('+changes' if changes else '')


def _git(folder: str, *args: str) -> str:
    return subprocess.run(
        ['git', '-C', folder, *args],
        capture_output=True,
        check=True,
        text=True,
        timeout=30,
    ).stdout.strip()


def _imported_commits() -> dict[str, str]:
    found = {}
    for module in (pyg_bemap, pyg_bemap_lab):
        commit = _commit(module)
        if commit is not None:
            found[f'{module.__name__} commit'] = commit
    return found


#: The commits of the code this process imported, read once as it imports
#: this module (with the library and the lab; a worker at its start).
_COMMITS = _imported_commits()
