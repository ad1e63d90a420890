r"""The configuration of one run, typed and frozen: the backbone's
hyper-parameters, BeMap's :class:`~pyg_bemap.SamplerSettings` and
FairDrop's drop rate. Its flat dictionary (:meth:`RunConfig.as_dict`) is
what a stored run records and part of the run store's key."""

import dataclasses
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pyg_bemap import SamplerSettings
from pyg_bemap_lab.names import BEMAP_BETA, BEMAP_MIN_KEEP

#: The flat names of BeMap's settings -> their field in
#: :class:`~pyg_bemap.SamplerSettings` (the balance offset is
#: :obj:`balance_delta`, apart from FairDrop's :obj:`fairdrop_delta`).
SAMPLER_NAMES = {
    'beta': 'beta',
    'min_keep': 'min_keep',
    'num_hops': 'num_hops',
    'balance_delta': 'delta',
}

#: The numbers' types and ranges: (type, low, high, whether each end is in).
RANGES: dict[str, tuple[type, float, float, tuple[bool, bool]]] = {
    'lr': (float, 0.0, math.inf, (False, False)),
    'hidden': (int, 1, math.inf, (True, False)),
    'dropout': (float, 0.0, 1.0, (True, False)),
    'input_dropout': (float, 0.0, 1.0, (True, False)),
    'weight_decay': (float, 0.0, math.inf, (True, False)),
    'fairdrop_delta': (float, 0.0, 1.0, (True, True)),
}


def _number(name: str, value: Any, kind: type) -> float | int:
    r""":obj:`value` as a Python number of :obj:`kind` (NumPy's numbers
    too, and a float that is a whole number as an integer)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, numbers.Real
    ):
        raise TypeError(
            f'{name} must be of type {kind.__name__}, not {value!r}'
        )
    number = float(value)
    if kind is int:
        if not number.is_integer():
            raise ValueError(f'{name} must be a whole number (got {value!r})')
        return int(number)
    return number


def _described(
    kind: type, low: float, high: float, closed: tuple[bool, bool]
) -> str:
    what = 'an integer' if kind is int else 'a number'
    if high == math.inf:
        return f'{what} {">=" if closed[0] else ">"} {low}'
    return f'{what} in {"[" if closed[0] else "("}{low}, {high}' + (
        ']' if closed[1] else ')'
    )


#: The names a stored configuration must give (the others have defaults).
REQUIRED = ('lr', 'hidden', 'dropout', 'input_dropout')


def _default_sampler() -> SamplerSettings:
    return SamplerSettings(beta=BEMAP_BETA, min_keep=BEMAP_MIN_KEEP)


@dataclass(frozen=True)
class RunConfig:
    r"""The configuration of one run of the laboratory.

    Args:
        lr (float): Adam's learning rate. (default: :obj:`1e-3`)
        hidden (int): The hidden layer's width. (default: :obj:`128`)
        dropout (float): The hidden layer's dropout rate :math:`p`.
            (default: :obj:`0.5`)
        input_dropout (float): The input features' dropout rate :math:`q`
            (0 as in most users' models; runs stored before it was named
            used :obj:`dropout` there). (default: :obj:`0.0`)
        weight_decay (float): Adam's weight decay. (default: :obj:`1e-5`)
        scale (bool): Scale the features to :math:`[-1, 1]`.
            (default: :obj:`True`)
        head (bool): A linear output layer after the second layer, as in
            the reference code's model. (default: :obj:`False`)
        sampler (SamplerSettings): BeMap's settings; the strategy inside a
            group is the method's (see
            :obj:`~pyg_bemap_lab.methods.Method.graph`), not the
            configuration's. (default: :math:`\beta` = 0.25,
            :obj:`min_keep` = 4)
        fairdrop_delta (float): FairDrop's drop rate :math:`\delta`.
            (default: :obj:`0.16`)
    """

    lr: float = 1e-3
    hidden: int = 128
    dropout: float = 0.5
    input_dropout: float = 0.0
    weight_decay: float = 1e-5
    scale: bool = True
    head: bool = False
    sampler: SamplerSettings = field(default_factory=_default_sampler)
    fairdrop_delta: float = 0.16

    def __post_init__(self) -> None:
        for name in ('scale', 'head'):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError(f'{name} must be of type bool, not {value!r}')
            object.__setattr__(self, name, bool(value))
        for name, (kind, low, high, closed) in RANGES.items():
            value = _number(name, getattr(self, name), kind)
            if not (low <= value if closed[0] else low < value) or not (
                value <= high if closed[1] else value < high
            ):
                raise ValueError(
                    f'{name} must be {_described(kind, low, high, closed)} '
                    f'(got {getattr(self, name)!r})'
                )
            object.__setattr__(self, name, value)
        if not isinstance(self.sampler, SamplerSettings):
            raise TypeError(
                f'sampler must be a SamplerSettings, not {self.sampler!r}'
            )

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> 'RunConfig':
        r"""The configuration that the flat dictionary :obj:`values` (as
        :meth:`as_dict` gives it) names; :obj:`REQUIRED` must be there,
        defaults fill the rest.

        Raises:
            ValueError: If a required name is missing or a name unknown.
        """
        missing = [name for name in REQUIRED if name not in values]
        if missing:
            raise ValueError(
                f'a run configuration needs {", ".join(missing)} '
                f'(got {sorted(values)})'
            )
        return cls().replace(**values)

    def replace(self, **changes: Any) -> 'RunConfig':
        r"""This configuration with the flat names of :obj:`changes` (as
        :meth:`as_dict` gives them) changed.

        Raises:
            ValueError: If a name is unknown.
        """
        known = set(self.as_dict())
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ValueError(
                f'unknown run setting(s) {", ".join(unknown)}; the settings '
                f'are {", ".join(sorted(known))}'
            )
        sampler = {
            SAMPLER_NAMES[k]: v
            for k, v in changes.items()
            if k in SAMPLER_NAMES
        }
        own = {k: v for k, v in changes.items() if k not in SAMPLER_NAMES}
        if sampler:
            own['sampler'] = dataclasses.replace(self.sampler, **sampler)
        return dataclasses.replace(self, **own)

    def as_dict(self) -> dict[str, Any]:
        r"""The flat dictionary of every setting: the backbone's
        hyper-parameters, BeMap's :obj:`beta`, :obj:`min_keep`,
        :obj:`num_hops` and :obj:`balance_delta`, and
        :obj:`fairdrop_delta`."""
        values = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name != 'sampler'
        }
        for name, attribute in SAMPLER_NAMES.items():
            values[name] = getattr(self.sampler, attribute)
        return values

    def sampler_settings(self, strategy: str = 'balance') -> SamplerSettings:
        r"""BeMap's settings with the :obj:`strategy` inside a group."""
        return dataclasses.replace(self.sampler, strategy=strategy)


#: The configuration chosen for each (dataset, method).
Chosen = dict[tuple[str, str], RunConfig]
