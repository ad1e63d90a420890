r"""BeMap's hyper-parameters in one frozen, validated value."""

from dataclasses import dataclass
from typing import Any

from pyg_bemap.infra.checks import check_integer, check_positive, check_share
from pyg_bemap.rules.quotas import check_strategy


@dataclass(frozen=True)
class SamplerSettings:
    r"""The hyper-parameters of BeMap's sampler, from the `"BeMap: Balanced
    Message Passing for Fair Graph Neural Network"
    <https://arxiv.org/abs/2306.04107>`_ paper, checked once when built.

    One value serves every entry point:
    :class:`~pyg_bemap.BalanceAwareSampling` uses :obj:`num_hops` and
    :obj:`delta` (the balance scores
    :math:`b_i = 1 / (D_i + \delta)` over :math:`L`-hop group counts);
    :class:`~pyg_bemap.BeMapConv`, :func:`~pyg_bemap.to_bemap` and
    :func:`~pyg_bemap.balanced_edge_sample` use :obj:`beta`,
    :obj:`min_keep` and :obj:`strategy` (the draw of every pass).

    .. code-block:: python

        settings = SamplerSettings(beta=0.5, num_hops=3)
        data = BalanceAwareSampling(sens_attr='s', settings=settings)(data)
        model = to_bemap(model, settings=settings)

    Args:
        beta (float, optional): The share :math:`\beta \in [0, 1]` of a
            one-group neighbourhood to keep. (default: :obj:`0.25`)
        min_keep (int, optional): The minimum :math:`m` of neighbours kept of
            a one-group neighbourhood. (default: :obj:`4`)
        strategy (str, optional): The weights inside a group:
            :obj:`'balance'` (the balance score), :obj:`'uniform'` or
            :obj:`'degree'` (:math:`\deg(j)^{3/4}`). (default:
            :obj:`'balance'`)
        num_hops (int, optional): The number of hops :math:`L` of the group
            counts, usually the number of message-passing layers.
            (default: :obj:`2`)
        delta (float, optional): The smoothing term :math:`\delta > 0` of the
            balance score. (default: :obj:`1.0`)
    """

    beta: float = 0.25
    min_keep: int = 4
    strategy: str = 'balance'
    num_hops: int = 2
    delta: float = 1.0

    def __post_init__(self) -> None:
        # Python numbers, whatever was passed (e.g. NumPy scalars)
        checked = {
            'beta': check_share('beta', self.beta),
            'min_keep': check_integer('min_keep', self.min_keep),
            'strategy': check_strategy(self.strategy),
            'num_hops': check_integer('num_hops', self.num_hops),
            'delta': check_positive('delta', self.delta),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def draw_key(self) -> tuple[float, int, str]:
        r"""The fields a sample depends on, :obj:`(beta, min_keep,
        strategy)`: layers whose settings differ only in :obj:`num_hops` or
        :obj:`delta` share their samples."""
        return (self.beta, self.min_keep, self.strategy)

    @classmethod
    def resolve(
        cls, settings: 'SamplerSettings | None', **values: Any
    ) -> 'SamplerSettings':
        r"""The settings of a call that takes both a :obj:`settings` value
        and its fields as keywords (:obj:`None`: not given).

        Raises:
            ValueError: If :obj:`settings` is not a :class:`SamplerSettings`,
                or is given together with one of the keywords.
        """
        given = {k: v for k, v in values.items() if v is not None}
        if settings is None:
            return cls(**given)
        if not isinstance(settings, SamplerSettings):
            raise ValueError(
                f"'settings' must be a SamplerSettings (got "
                f"{type(settings).__name__}), e.g. 'SamplerSettings(beta=0.5)'"
            )
        if given:
            raise ValueError(
                f'Pass either settings={settings} or the keywords '
                f'{sorted(given)}, not both; e.g. '
                f"'dataclasses.replace(settings, {next(iter(given))}=...)'"
            )
        return settings
