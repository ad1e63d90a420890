r"""Reports as plain Python values that JSON can hold."""

import math
from typing import Any


def nan_as_none(value: Any) -> Any:
    r""":obj:`value` with every NaN float in it, at any depth of its
    dictionaries and lists, replaced by :obj:`None` (JSON has no NaN)."""
    if isinstance(value, dict):
        return {k: nan_as_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [nan_as_none(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return None
    return value
