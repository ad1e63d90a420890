r"""The checks of the values the command line and Python take alike: each
raises a :class:`ValueError` that names the value and what it must be
(the command line prints it as its one-line error)."""

import numbers
import os
from typing import Any


def whole_number(name: str, value: Any, minimum: int) -> int:
    r""":obj:`value` as an integer of at least :obj:`minimum` (NumPy's
    integers too; :obj:`True` and :obj:`2.5` are none)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Integral)
        or value < minimum
    ):
        raise ValueError(
            f'{name} must be an integer of at least {minimum} (got {value!r})'
        )
    return int(value)


def out_folder(name: str, path: Any) -> str:
    r""":obj:`path` as a folder to write to: a non-empty path that is no
    file, and no file above it."""
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f'{name} must name a folder (got {path!r})')
    if not os.fspath(path):
        raise ValueError(f'{name} must name a folder (got nothing)')
    path = os.fspath(path)
    here = path
    while here:
        if os.path.exists(here) and not os.path.isdir(here):
            raise ValueError(f'{name} names a file, not a folder: {here}')
        parent = os.path.dirname(here)
        here = '' if parent == here else parent
    return path


def run_counts(
    seeds: Any, epochs: Any, patience: Any, jobs: Any
) -> tuple[int, int, int, int]:
    r"""The counts of a comparison or a sweep: at least 2 paired seeds (a
    paired interval needs two), and at least 1 epoch, epoch of patience
    and job."""
    return (
        whole_number('seeds', seeds, 2),
        whole_number('epochs', epochs, 1),
        whole_number('patience', patience, 1),
        whole_number('jobs', jobs, 1),
    )
