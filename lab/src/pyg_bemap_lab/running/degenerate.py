r"""Degenerate runs, which must never be read as fair: a run whose
reported epoch predicts one class for every test node has gaps of 0 and
looks perfectly fair, and a run whose validation loss never left its
starting plateau learned nothing."""

import math
from typing import Any

from pyg_bemap_lab.selection import NEAR_CONSTANT

#: A run is on a plateau if its lowest validation loss is less than this
#: share below the first epoch's.
PLATEAU_DROP = 0.01

#: Why a run is degenerate, by the name tables show.
KINDS = {
    'constant': 'one class predicted for every test node',
    'near-constant': 'one class predicted for fewer than '
    f'{NEAR_CONSTANT:.0%} of the test nodes',
    'plateau': 'the validation loss never left its starting plateau',
}


def degenerate(run: dict[str, Any], rule: str) -> str | None:
    r"""Why the stored :obj:`run` is degenerate at the epoch :obj:`rule`
    picked (a key of :obj:`KINDS`), or :obj:`None` if it is not.

    :obj:`'constant'`: the share of test nodes predicted positive is 0 or 1
    (runs stored before that share was recorded: both test gaps exactly 0,
    which a classifier that predicts both classes reaches only by chance).
    :obj:`'near-constant'`: one class is predicted for fewer than
    :obj:`~pyg_bemap_lab.selection.NEAR_CONSTANT` of the test nodes.
    :obj:`'plateau'`: the lowest validation loss is less than
    :obj:`PLATEAU_DROP` below the first epoch's.
    """
    picked = run['test'].get(rule)
    if picked is None:
        return None
    return kind_of(
        picked.get('pos'), picked['sp'], picked['eo'], run['curve']['loss']
    )


def kind_of(
    share: float | None, sp: float, eo: float, loss: list[float]
) -> str | None:
    r"""The kind of :func:`degenerate` of a report whose share of test
    nodes predicted positive is :obj:`share` (:obj:`None`: not recorded)
    and whose gaps are :obj:`sp` and :obj:`eo`, in a run whose validation
    loss curve is :obj:`loss`."""
    # one class for every node: a positive share of 0 or 1, or, where the
    # share was not recorded, both gaps exactly 0
    constant = sp == 0 and eo == 0 if share is None else share in (0.0, 1.0)
    if constant:
        return 'constant'
    if share is not None and one_class(share):
        return 'near-constant'
    return 'plateau' if _plateau(loss) else None


def one_class(share: float) -> bool:
    r"""Whether a report whose share of nodes predicted positive is
    :obj:`share` predicts one class for all of them, or for all but fewer
    than :obj:`~pyg_bemap_lab.selection.NEAR_CONSTANT`."""
    return min(share, 1 - share) < NEAR_CONSTANT


def _plateau(loss: list[float]) -> bool:
    finite = [v for v in loss if not math.isnan(v)]
    return bool(finite) and min(finite) > (1 - PLATEAU_DROP) * finite[0]
