r"""Checks of scalar arguments at the public boundary: each raises a
:class:`ValueError` that names the argument and what it must be, and
returns the value as a Python number (NumPy and other scalars registered
as :mod:`numbers` are accepted wherever Python numbers are)."""

import math
import numbers
from typing import Any, TypeGuard

import torch


def require(valid: bool, name: str, what: str, value: Any) -> None:
    r"""Raises a :class:`ValueError` saying that :obj:`name` must be
    :obj:`what` (and what it got, :obj:`value`) unless :obj:`valid`."""
    if not valid:
        raise ValueError(f"'{name}' must be {what} (got {value!r})")


def check_integer(name: str, value: Any, minimum: int = 0) -> int:
    r"""An integer of at least :obj:`minimum` (:obj:`True` is no integer
    here)."""
    valid = is_integer(value) and value >= minimum
    require(valid, name, f'an integer of at least {minimum}', value)
    return int(value)


#: The seeds every random choice takes: what :func:`torch.manual_seed`
#: takes, from 0.
MAX_SEED = 2**63 - 1


def check_seed(name: str, value: Any) -> int:
    r"""A seed: an integer from 0 to :obj:`MAX_SEED`."""
    valid = is_integer(value) and 0 <= value <= MAX_SEED
    require(valid, name, 'a seed, an integer from 0 to 2**63 - 1', value)
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
    valid = is_number(value) and math.isfinite(value) and value > 0
    require(valid, name, 'a finite number above 0', value)
    return float(value)


def check_number(
    name: str, value: Any, low: float = -math.inf, high: float = math.inf
) -> float:
    r"""A finite number in :math:`[l, h]`, :math:`l` = :obj:`low`,
    :math:`h` = :obj:`high`."""
    finite = is_number(value) and math.isfinite(value)
    require(finite, name, 'a finite number', value)
    in_range = low <= value <= high
    require(in_range, name, f'a number in [{low:g}, {high:g}]', value)
    return float(value)


def check_share(name: str, value: Any, maximum: float = 1) -> float:
    r"""A number in :math:`[0, m]`, :math:`m` = :obj:`maximum`."""
    valid = is_number(value) and 0.0 <= value <= maximum
    require(valid, name, f'a number in [0, {maximum}]', value)
    return float(value)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    r"""One of :obj:`choices`."""
    require(value in choices, name, f'one of {choices}', value)
    return value


def check_memory_budget(value: Any) -> int:
    r"""A positive number of bytes."""
    what = 'a positive number of bytes, e.g. 2**30 for 1 GiB'
    require(is_integer(value) and value > 0, 'memory_budget', what, value)
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
