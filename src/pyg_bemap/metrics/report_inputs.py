r"""What :func:`~pyg_bemap.metrics.fairness_report` counts: scores and
predictions from the model's output, binary labels and the selected nodes,
each checked with a message that says what to pass instead."""

import math
import warnings

import torch
from torch import Tensor

from pyg_bemap.infra.checks import is_number


def scores_and_predictions(
    pred: Tensor, threshold: float | None
) -> tuple[Tensor, Tensor, Tensor]:
    r"""The scores that rank the nodes, the positive predictions and the
    predicted probability of the positive class (for the threshold-free
    gap): class 1's softmax probability of two-class outputs (the sigmoid
    of their margin), the scores themselves where they are probabilities
    (a threshold in :math:`(0, 1)` passed with scores in :math:`[0, 1]`)
    or hard 0/1 predictions, else the sigmoid of the logits."""
    if not isinstance(pred, Tensor):
        raise ValueError(
            f"'pred' must be a torch.Tensor (got {type(pred).__name__})"
        )
    if threshold is not None and not (
        is_number(threshold) and math.isfinite(threshold)
    ):
        raise ValueError(
            f"'threshold' must be a finite number (got {threshold!r})"
        )
    if pred.is_complex() or (
        pred.is_floating_point() and not bool(torch.isfinite(pred).all())
    ):
        raise ValueError(
            "'pred' holds NaN, infinite or complex values; check the model's "
            'outputs (e.g. a diverged training run)'
        )
    if pred.dim() == 2 and pred.size(1) == 2:
        if threshold is not None:
            raise ValueError(
                "'threshold' applies to one-column scores; two-class outputs "
                '[N, 2] are positive where class 1 is the larger. Leave out '
                "'threshold', or pass 'pred[:, 1] - pred[:, 0]' with it"
            )
        # the margin ranks nodes as class 1's softmax probability does,
        # without that probability's rounding to 1 in confident outputs
        pred = pred.double()
        margin = pred[:, 1] - pred[:, 0]
        return margin, pred.argmax(dim=-1) == 1, margin.sigmoid()
    if pred.dim() == 2 and pred.size(1) == 1:
        pred = pred.view(-1)
    if pred.dim() != 1:
        raise ValueError(
            f"'pred' must hold scores [N], [N, 1] or two-class outputs [N, 2] "
            f'(got shape {list(pred.shape)}); multi-class outputs are not '
            f'supported'
        )
    if not pred.is_floating_point():
        pred = pred.float()
    in_unit = bool(((pred >= 0) & (pred <= 1)).all())
    hard = bool(((pred == 0) | (pred == 1)).all())
    if pred.numel() > 0:
        _warn_on_a_mismatched_threshold(in_unit, hard, threshold)
    given = threshold is not None and 0 < threshold < 1 and in_unit
    probability = pred.double() if given or hard else pred.double().sigmoid()
    return pred, pred > (0.0 if threshold is None else threshold), probability


def _warn_on_a_mismatched_threshold(
    in_unit: bool, hard: bool, threshold: float | None
) -> None:
    r"""Warns when the scores and the threshold belong to different scales:
    probabilities (scores in :math:`[0, 1]`, not all 0 or 1) under the
    default logit threshold 0 (one passed explicitly says the caller knows
    its scores are logits), or logits (scores outside :math:`[0, 1]`) under
    a probability threshold in :math:`(0, 1)`. Hard 0/1 predictions are
    right under either: 0 is negative and 1 positive (:obj:`in_unit`:
    every score in :math:`[0, 1]`; :obj:`hard`: every score 0 or 1)."""
    if threshold is None and in_unit and not hard:
        warnings.warn(
            "'pred' looks like probabilities (every score in [0, 1]), but "
            "'threshold' is 0, the default for logits, so every node with a "
            "score above 0 counts as positive. Pass 'threshold=0.5' for "
            "probabilities, or 'threshold=0' if these are logits",
            stacklevel=4,
        )
    elif threshold is not None and 0 < threshold < 1 and not in_unit:
        warnings.warn(
            f"'threshold' is {threshold:g}, a probability, but 'pred' holds "
            'scores outside [0, 1], like logits. Leave out '
            "'threshold' (0) for logits, or pass 'pred.sigmoid()' with this "
            'threshold',
            stacklevel=4,
        )


def binary_labels(y: Tensor, num_nodes: int) -> Tensor:
    if not isinstance(y, Tensor):
        raise ValueError(
            f"'y' must be a torch.Tensor (got {type(y).__name__})"
        )
    if y.dim() == 2 and y.size(1) == 1:
        y = y.view(-1)
    if y.dim() != 1 or y.numel() != num_nodes:
        raise ValueError(
            f"'y' must have one label per node (expected "
            f'[{num_nodes}], got {list(y.shape)})'
        )
    if y.is_floating_point() and bool((y != y.round()).any()):
        raise ValueError("'y' must hold the integer labels 0 and 1")
    return y.long()


def selected_nodes(
    mask: Tensor | None,
    num_nodes: int,
    device: torch.device,
    name: str = 'mask',
) -> Tensor:
    r"""The boolean mask of the nodes that :obj:`mask` selects (all of them
    if :obj:`None`): a boolean mask, or node indices naming each node once;
    errors call it :obj:`name`."""
    if mask is None:
        return torch.ones(num_nodes, dtype=torch.bool, device=device)
    if not isinstance(mask, Tensor):
        raise ValueError(
            f"'{name}' must be a torch.Tensor (got {type(mask).__name__})"
        )
    if mask.dtype == torch.uint8:
        raise ValueError(
            f"'{name}' is a torch.uint8 tensor, which is ambiguous (a mask or "
            f"node indices); pass a boolean mask ('{name}.bool()') or "
            f"indices ('{name}.long()')"
        )
    if mask.dtype == torch.bool:
        if mask.shape != (num_nodes,):
            raise ValueError(
                f"A boolean '{name}' must have shape [{num_nodes}] "
                f'(got {list(mask.shape)}); pass one split at a time'
            )
        return mask
    if mask.is_floating_point() or mask.dim() != 1:
        raise ValueError(
            f"'{name}' must be a boolean mask or a 1-D tensor of node indices"
        )
    if mask.numel() > 0 and (
        int(mask.min()) < -num_nodes or int(mask.max()) >= num_nodes
    ):
        raise ValueError(
            f"'{name}' holds node indices outside [0, {num_nodes})"
        )
    selected = torch.zeros(num_nodes, dtype=torch.bool, device=device)
    selected[mask] = True
    if int(selected.sum()) != mask.numel():
        raise ValueError(
            f"'{name}' names a node more than once; pass each node once "
            f"('{name}.unique()')"
        )
    return selected
