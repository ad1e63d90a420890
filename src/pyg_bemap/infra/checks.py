r"""Checks of scalar arguments at the public boundary: each raises a
:class:`ValueError` that names the argument and what it must be, and
returns the value as a Python number (NumPy and other scalars registered
as :mod:`numbers` are accepted wherever Python numbers are)."""

import math
import numbers
from typing import Any, TypeGuard

import torch


def check_integer(name: str, value: Any, minimum: int = 0) -> int:
    r"""An integer of at least :obj:`minimum` (:obj:`True` is no integer
    here)."""
    if not is_integer(value):
        raise ValueError(
            f"'{name}' must be an integer of at least {minimum} "
            f'(got {value!r})'
        )
    if value < minimum:
        raise ValueError(
            f"'{name}' must be an integer of at least {minimum} (got {value})"
        )
    return int(value)


#: The seeds every random choice takes: what :func:`torch.manual_seed`
#: takes, from 0.
MAX_SEED = 2**63 - 1


def check_seed(name: str, value: Any) -> int:
    r"""A seed: an integer from 0 to :obj:`MAX_SEED`."""
    if not is_integer(value) or not 0 <= value <= MAX_SEED:
        raise ValueError(
            f"'{name}' must be a seed, an integer from 0 to 2**63 - 1 "
            f'(got {value!r})'
        )
    return int(value)


def is_integer(value: Any) -> TypeGuard[int]:
    r"""Whether :obj:`value` is an integer (Python or NumPy), not a
    boolean."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_number(value: Any) -> TypeGuard[float]:
    r"""Whether :obj:`value` is a real number (Python or NumPy), not a
    boolean."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_positive(name: str, value: Any) -> float:
    r"""A finite number above zero."""
    if not is_number(value) or not math.isfinite(value) or value <= 0:
        raise ValueError(
            f"'{name}' must be a finite number above 0 (got {value!r})"
        )
    return float(value)


def check_number(
    name: str, value: Any, low: float = -math.inf, high: float = math.inf
) -> float:
    r"""A finite number in :math:`[l, h]`, :math:`l` = :obj:`low`,
    :math:`h` = :obj:`high`."""
    if not is_number(value) or not math.isfinite(value):
        raise ValueError(f"'{name}' must be a finite number (got {value!r})")
    if not low <= value <= high:
        raise ValueError(
            f"'{name}' must be a number in [{low:g}, {high:g}] (got {value!r})"
        )
    return float(value)


def check_share(name: str, value: Any, maximum: float = 1) -> float:
    r"""A number in :math:`[0, m]`, :math:`m` = :obj:`maximum`."""
    if not is_number(value) or not 0.0 <= value <= maximum:
        raise ValueError(
            f"'{name}' must be a number in [0, {maximum}] (got {value!r})"
        )
    return float(value)


def check_memory_budget(value: Any) -> int:
    r"""A positive number of bytes."""
    if not is_integer(value) or value <= 0:
        raise ValueError(
            f"'memory_budget' must be a positive number of bytes, e.g. "
            f'2**30 for 1 GiB (got {value!r})'
        )
    return int(value)


def check_generator(value: Any) -> torch.Generator | None:
    r""":obj:`None` or a :class:`torch.Generator`."""
    if value is not None and not isinstance(value, torch.Generator):
        raise ValueError(
            f"'generator' must be a torch.Generator (e.g. "
            f"'torch.Generator().manual_seed(0)') or None "
            f'(got {type(value).__name__})'
        )
    return value
