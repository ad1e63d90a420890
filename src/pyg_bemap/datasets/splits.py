r"""Seeded random splits of the labelled nodes (the reference code's own
splits are in :mod:`~pyg_bemap.datasets.reference_splits`)."""

import numbers

import torch
from torch import Tensor


def split_masks(
    y: Tensor, seed: int, label_budget: int | None = None
) -> tuple[Tensor, Tensor, Tensor]:
    r"""A seeded random 50% / 25% / 25% split of the labelled nodes
    (:obj:`y >= 0`); :obj:`label_budget` caps the training nodes.
    """
    labelled = (y >= 0).nonzero().view(-1)
    gen = torch.Generator().manual_seed(seed)
    labelled = labelled[torch.randperm(labelled.numel(), generator=gen)]
    half, three_quarters = labelled.numel() // 2, (3 * labelled.numel()) // 4
    train_end = half if label_budget is None else min(half, label_budget)
    masks = []
    for index in (
        labelled[:train_end],
        labelled[half:three_quarters],
        labelled[three_quarters:],
    ):
        mask = torch.zeros(y.numel(), dtype=torch.bool)
        mask[index] = True
        masks.append(mask)
    return masks[0], masks[1], masks[2]


def check_label_budget(label_budget: object, also: str = '') -> int:
    r"""Returns :obj:`label_budget` as an :obj:`int` if it is a positive
    integer (Python or NumPy, not a boolean), else raises a
    :class:`ValueError` (:obj:`also` names other accepted values)."""
    if (
        not isinstance(label_budget, numbers.Integral)
        or isinstance(label_budget, bool)
        or label_budget < 1
    ):
        raise ValueError(
            f"'label_budget' must be a positive integer{also} (got "
            f'{label_budget!r})'
        )
    return int(label_budget)
