r"""What a stored run was made with: the commits of the library and the lab
(and whether their trees were clean), the versions of Python and of the
libraries it ran on, and its device, so that two runs of one configuration
and seed that differ can be told apart, and a report can say which code
its tables come from."""

import importlib.metadata
import os.path as osp
import platform
import subprocess
from types import ModuleType
from typing import Any

import torch

import pyg_bemap
import pyg_bemap_lab

#: The distributions whose versions a run records beside torch's (absent
#: ones are left out: torch-sparse and torch-scatter are optional).
DISTRIBUTIONS = ('torch_geometric', 'torch_sparse', 'torch_scatter')


def provenance() -> dict[str, Any]:
    r"""What this process runs: for the library (:obj:`'library'`) and the
    lab (:obj:`'lab'`) their :obj:`version` and, where each is imported
    from a Git checkout, its :obj:`commit` and whether tracked files were
    unchanged from it (:obj:`clean`), read when this process imported them
    (:obj:`None` outside a checkout); the versions of Python, of torch with
    its build (:obj:`'2.14.1+cu130'`: builds of one release compute apart)
    and of :obj:`DISTRIBUTIONS` that are installed."""
    found: dict[str, Any] = {
        'library': _COMMITS['library'] | {'version': pyg_bemap.__version__},
        'lab': _COMMITS['lab'] | {'version': pyg_bemap_lab.__version__},
        'python': platform.python_version(),
        'torch': str(torch.__version__),
    }
    for name in DISTRIBUTIONS:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def device_name(device: torch.device) -> str:
    r"""The device a run computed on, as a run records it: a GPU's name, or
    the CPU's architecture and the threads torch uses."""
    if device.type == 'cuda':
        return f'{device}: {torch.cuda.get_device_name(device)}'
    cpu = platform.processor() or platform.machine()
    return f'{device.type}: {cpu}, {torch.get_num_threads()} threads'


def check_committed(exploratory: bool) -> None:
    r"""Refuses to store runs made by code with uncommitted changes: such
    a run names no code that can be read again. :obj:`exploratory` runs are
    stored all the same, marked so.

    Raises:
        ValueError: If the library's or the lab's checkout has uncommitted
            changes and the runs are not exploratory.
    """
    dirty = [
        f'the {part} ({osp.dirname(module.__file__ or "")})'
        for part, module in (('library', pyg_bemap), ('lab', pyg_bemap_lab))
        if _COMMITS[part]['clean'] is False
    ]
    if dirty and not exploratory:
        raise ValueError(
            f'{" and ".join(dirty)} has uncommitted changes, so no stored '
            'run could name its code: commit them, or store the runs as '
            "exploratory ('--exploratory'; exploratory=True)"
        )


def _commit(module: ModuleType) -> dict[str, Any]:
    path = osp.abspath(str(module.__file__))
    folder = osp.dirname(path)
    try:
        # tracked there: an installed copy in a checkout's .venv is not it
        _git(folder, 'ls-files', '--error-unmatch', osp.basename(path))
        head = _git(folder, 'rev-parse', 'HEAD')
        changes = _git(folder, 'status', '--porcelain', '--untracked-files=no')
    except (OSError, subprocess.SubprocessError):
        return {'commit': None, 'clean': None}  # not a checkout, or no git
    return {'commit': head, 'clean': not changes}


def _git(folder: str, *args: str) -> str:
    return subprocess.run(
        ['git', '-C', folder, *args],
        capture_output=True,
        check=True,
        text=True,
        timeout=30,
    ).stdout.strip()


#: The commits of the code this process imported, read once as it imports
#: this module (with the library and the lab; a worker at its start).
_COMMITS = {'library': _commit(pyg_bemap), 'lab': _commit(pyg_bemap_lab)}
