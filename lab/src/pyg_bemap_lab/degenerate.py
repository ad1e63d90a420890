r"""Degenerate runs, which must never be read as fair: a run whose
reported epoch predicts one class for every test node has gaps of 0 and
looks perfectly fair, and a run whose validation loss never left its
starting plateau learned nothing."""

from typing import Any

#: A run is on a plateau if its lowest validation loss is less than this
#: share below the first epoch's.
PLATEAU_DROP = 0.01

#: Why a run is degenerate, by the name tables show.
KINDS = {
    'constant': 'one class predicted for every test node',
    'plateau': 'the validation loss never left its starting plateau',
}


def degenerate(run: dict[str, Any], rule: str) -> str | None:
    r"""Why the stored :obj:`run` is degenerate at the epoch :obj:`rule`
    picked (a key of :obj:`KINDS`), or :obj:`None` if it is not.

    :obj:`'constant'`: the share of test nodes predicted positive is 0 or 1
    (runs stored before that share was recorded: both test gaps exactly 0,
    which a classifier that predicts both classes reaches only by chance).
    :obj:`'plateau'`: the lowest validation loss is less than
    :obj:`PLATEAU_DROP` below the first epoch's.
    """
    picked = run['test'].get(rule)
    if picked is None:
        return None
    share = picked.get('pos')
    if share is None:
        constant = picked['sp'] == 0 and picked['eo'] == 0
    else:
        constant = share in (0.0, 1.0)
    if constant:
        return 'constant'
    loss = run['curve']['loss']
    if loss and min(loss) > (1 - PLATEAU_DROP) * loss[0]:
        return 'plateau'
    return None
