r"""Which epoch of a training run is reported: rules that look at the
validation split only, and the reference code's rule, which looks at the
test split and is kept, labelled, for comparison."""

import math
from collections.abc import Sequence

#: The metrics a run records after every epoch, on the validation split.
CURVE_METRICS = ('loss', 'acc', 'auc', 'sp', 'eo')


def lowest_validation_loss(loss: Sequence[float]) -> int | None:
    r"""The epoch (0-based) with the lowest validation loss; ties go to the
    earliest; :obj:`None` for an empty curve."""
    finite = [(v, i) for i, v in enumerate(loss) if not math.isnan(v)]
    return min(finite)[1] if finite else None


def fairness_aware(
    acc: Sequence[float],
    auc: Sequence[float],
    sp: Sequence[float],
    eo: Sequence[float],
    tolerance: float = 0.95,
) -> int | None:
    r"""The fairness-aware rule of recent fair-GNN benchmarks: among the
    epochs whose validation accuracy and AUC are both at least
    :obj:`tolerance` times the run's best, the one with the lowest
    validation :math:`\Delta_{SP} + \Delta_{EO}`; ties go to the earliest.
    Epochs with an undefined gap are not eligible; :obj:`None` if none is.
    """
    best_acc = max((v for v in acc if not math.isnan(v)), default=math.nan)
    best_auc = max((v for v in auc if not math.isnan(v)), default=math.nan)
    eligible = [
        (sp[i] + eo[i], i)
        for i in range(len(acc))
        if acc[i] >= tolerance * best_acc
        and auc[i] >= tolerance * best_auc
        and not math.isnan(sp[i] + eo[i])
    ]
    return min(eligible)[1] if eligible else None


def select_on_test_split(
    acc: Sequence[float],
    sp: Sequence[float],
    eo: Sequence[float],
    budget: float,
) -> int | None:
    r"""The reference code's rule, on **test** metrics: the best test
    accuracy among epochs whose test :math:`\Delta_{SP}` and
    :math:`\Delta_{EO}` are below :obj:`budget` (ties: the earliest). It
    selects on the test split: reported only to compare with the paper."""
    eligible = [
        (-acc[i], i)
        for i in range(len(acc))
        if sp[i] < budget and eo[i] < budget
    ]
    return min(eligible)[1] if eligible else None
