r"""Checks of scalar arguments at the public boundary: each raises a
:class:`ValueError` that names the argument and what it must be."""

import math
from typing import Any

import torch


def check_integer(name: str, value: Any, minimum: int = 0) -> int:
    r"""An integer of at least :obj:`minimum` (:obj:`True` is no integer
    here)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            f"'{name}' must be an integer of at least {minimum} "
            f'(got {value!r})'
        )
    if value < minimum:
        raise ValueError(
            f"'{name}' must be an integer of at least {minimum} (got {value})"
        )
    return value


def check_positive(name: str, value: Any) -> float:
    r"""A finite number above zero."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(
            f"'{name}' must be a finite number above 0 (got {value!r})"
        )
    return value


def check_share(name: str, value: Any, maximum: float = 1) -> float:
    r"""A number in :math:`[0, m]`, :math:`m` = :obj:`maximum`."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not 0.0 <= value <= maximum
    ):
        raise ValueError(
            f"'{name}' must be a number in [0, {maximum}] (got {value!r})"
        )
    return value


def check_memory_budget(value: Any) -> int:
    r"""A positive number of bytes."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(
            f"'memory_budget' must be a positive number of bytes, e.g. "
            f'2**30 for 1 GiB (got {value!r})'
        )
    return value


def check_generator(value: Any) -> torch.Generator | None:
    r""":obj:`None` or a :class:`torch.Generator`."""
    if value is not None and not isinstance(value, torch.Generator):
        raise ValueError(
            f"'generator' must be a torch.Generator (e.g. "
            f"'torch.Generator().manual_seed(0)') or None "
            f'(got {type(value).__name__})'
        )
    return value
