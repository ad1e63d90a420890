r"""Accuracy, AUC and group-fairness gaps of a binary node classifier."""

import math
import warnings
from dataclasses import asdict, dataclass

import torch
from torch import Tensor

from pyg_bemap.metrics.json_ready import nan_as_none
from pyg_bemap.metrics.report_inputs import (
    binary_labels,
    scores_and_predictions,
    selected_nodes,
)
from pyg_bemap.rules.groups import check_same_device, sensitive_groups


class OnePredictedClassWarning(UserWarning):
    r"""Every evaluated node is predicted one class: the gaps are 0 (or NaN)
    by construction and say nothing of fairness. A category of its own, so
    code that flags such predictions itself can filter it."""


@dataclass(frozen=True)
class GroupMetrics:
    r"""The metrics of one sensitive group (NaN where undefined)."""

    size: int
    positive_rate: float
    true_positive_rate: float
    accuracy: float
    auc: float
    mean_probability: float = math.nan


@dataclass(frozen=True)
class FairnessReport:
    r"""What :func:`fairness_report` returns.

    Attributes:
        accuracy (float): Share of correct predictions.
        auc (float): ROC-AUC of the scores.
        delta_sp (float): Statistical-parity gap, max minus min over groups of
            :math:`P(\hat{y} = 1 \mid s = g)`.
        delta_eo (float): Equal-opportunity gap, max minus min over groups of
            :math:`P(\hat{y} = 1 \mid y = 1, s = g)`.
        by_group (Dict[int, GroupMetrics]): The metrics of every group.
        delta_prob (float): The threshold-free gap, max minus min over
            groups of the mean predicted probability of the positive class,
            :math:`\mathbb{E}[p \mid s = g]`.
    """

    accuracy: float
    auc: float
    delta_sp: float
    delta_eo: float
    by_group: dict[int, GroupMetrics]
    delta_prob: float = math.nan

    def to_dict(self) -> dict[str, object]:
        r"""The report as plain Python values, the groups' metrics nested
        under :obj:`'by_group'` (JSON-ready: an undefined value, NaN here,
        is :obj:`None`)."""
        return nan_as_none(
            {
                'accuracy': self.accuracy,
                'auc': self.auc,
                'delta_sp': self.delta_sp,
                'delta_eo': self.delta_eo,
                'delta_prob': self.delta_prob,
                'by_group': {g: asdict(m) for g, m in self.by_group.items()},
            }
        )

    def _rows(self) -> list[tuple[str, ...]]:
        def fmt(value: float) -> str:
            return 'nan' if math.isnan(value) else f'{value:.4f}'

        rows: list[tuple[str, ...]] = [
            ('group', 'size', 'pos. rate', 'TPR', 'mean p', 'accuracy', 'AUC')
        ]
        for group, m in self.by_group.items():
            rows.append(
                (
                    str(group),
                    str(m.size),
                    fmt(m.positive_rate),
                    fmt(m.true_positive_rate),
                    fmt(m.mean_probability),
                    fmt(m.accuracy),
                    fmt(m.auc),
                )
            )
        size = sum(m.size for m in self.by_group.values())
        rows.append(
            (
                'overall',
                str(size),
                '',
                '',
                '',
                fmt(self.accuracy),
                fmt(self.auc),
            )
        )
        return rows

    def __str__(self) -> str:
        rows = self._rows()
        widths = [
            max(len(row[i]) for row in rows) for i in range(len(rows[0]))
        ]
        lines = [
            '  '.join(cell.rjust(w) for cell, w in zip(row, widths))
            for row in rows
        ]
        lines.insert(1, '-' * len(lines[0]))
        lines.insert(-1, '-' * len(lines[0]))
        lines.append(
            f'delta_sp = {self.delta_sp:.4f}   delta_eo = {self.delta_eo:.4f}'
            f'   delta_prob = {self.delta_prob:.4f}'
        )
        return '\n'.join(lines)

    def _repr_html_(self) -> str:
        rows = self._rows()
        head = ''.join(f'<th>{cell}</th>' for cell in rows[0])
        body = ''.join(
            '<tr>' + ''.join(f'<td>{cell}</td>' for cell in row) + '</tr>'
            for row in rows[1:]
        )
        return (
            f'<table><thead><tr>{head}</tr></thead><tbody>{body}'
            f'</tbody></table><p>delta_sp = {self.delta_sp:.4f}, '
            f'delta_eo = {self.delta_eo:.4f}, '
            f'delta_prob = {self.delta_prob:.4f}</p>'
        )


def roc_auc(score: Tensor, label: Tensor) -> float:
    r"""ROC-AUC by the Mann-Whitney statistic with average ranks for ties;
    NaN when :obj:`label` holds a single class.

    Args:
        score (torch.Tensor): Finite scores, one per node, :obj:`[N]`.
        label (torch.Tensor): The labels 0 and 1, :obj:`[N]`.
    """
    _check_auc_inputs(score, label)
    num_pos = int(label.sum())
    num_neg = label.numel() - num_pos
    if num_pos == 0 or num_neg == 0:
        return float('nan')
    score = score.double()
    _, inverse, counts = torch.unique(
        score, return_inverse=True, return_counts=True
    )
    last_rank = counts.cumsum(0).double()
    average_rank = last_rank - (counts.double() - 1) / 2
    rank_sum = average_rank[inverse][label.bool()].sum().item()
    return (rank_sum - num_pos * (num_pos + 1) / 2) / (num_pos * num_neg)


def _check_auc_inputs(score: Tensor, label: Tensor) -> None:
    if not isinstance(score, Tensor) or not isinstance(label, Tensor):
        raise ValueError("'score' and 'label' must be torch.Tensors")
    if score.dim() != 1 or label.shape != score.shape:
        raise ValueError(
            f"'score' and 'label' must be 1-D of one size (got shapes "
            f'{list(score.shape)} and {list(label.shape)})'
        )
    check_same_device(score=score, label=label)
    if score.is_complex() or not bool(torch.isfinite(score).all()):
        raise ValueError("'score' holds NaN, infinite or complex values")
    if not bool(((label == 0) | (label == 1)).all()):
        raise ValueError(
            f"'label' must hold the labels 0 and 1 (got "
            f'{torch.unique(label)[:6].tolist()})'
        )


def fairness_report(
    pred: Tensor,
    y: Tensor,
    sens: Tensor,
    *,
    mask: Tensor | None = None,
    threshold: float | None = None,
    num_groups: int | None = None,
) -> FairnessReport:
    r"""Reports how accurate and how fair a binary node classifier is, in the
    terms of the fairness-on-graphs literature (BeMap, FairGNN, NIFTY, EDITS):

    .. math::
        \begin{aligned}
        \Delta_{SP} &= \max_g P(\hat{y} = 1 \mid s = g) -
                       \min_g P(\hat{y} = 1 \mid s = g),\\
        \Delta_{EO} &= \max_g P(\hat{y} = 1 \mid y = 1, s = g) -
                       \min_g P(\hat{y} = 1 \mid y = 1, s = g),
        \end{aligned}

    which for two groups are :math:`|P(\hat{y}=1|s=1) - P(\hat{y}=1|s=0)|`
    and the same gap in true-positive rate, and the threshold-free gap

    .. math::
        \Delta_{p} = \max_g \mathbb{E}[p \mid s = g] -
                     \min_g \mathbb{E}[p \mid s = g]

    of the predicted probability :math:`p` of the positive class (the
    sigmoid of logits, class 1's softmax probability of two-class outputs,
    the scores themselves when a threshold in :math:`(0, 1)` says they are
    probabilities), which a threshold on miscalibrated scores cannot move:
    :math:`\Delta_{SP}` at a threshold most scores clear says little. AUC
    is computed from the scores.

    A group with no evaluated member, or no positive label, gets NaN for what
    cannot be computed (with a warning naming it) and is left out of the gaps;
    a gap needs two groups where its rate is defined, and is NaN (with a
    warning) otherwise, never an invented 0. A single-class :obj:`y` gives
    NaN AUC with a warning. Scores that all lie in :math:`[0, 1]` under the
    default threshold (probabilities, which it would call positive) give a
    warning, unless they are hard 0/1 predictions or :obj:`threshold=0` is
    passed, which says they are logits. Predictions of one class for every
    evaluated node give a warning too: their gaps of 0 say nothing of
    fairness.

    Args:
        pred (torch.Tensor): Scores for the positive class, :obj:`[N]` or
            :obj:`[N, 1]` logits (positive iff :obj:`score > threshold`), or
            two-class outputs :obj:`[N, 2]` (positive iff class 1 is the
            argmax; the AUC ranks nodes by :obj:`pred[:, 1] - pred[:, 0]`,
            the order of class 1's softmax probability).
        y (torch.Tensor): Labels in :math:`\{0, 1\}`; nodes with a negative
            label are never evaluated.
        sens (torch.Tensor): The sensitive group of every node, the
            integers :math:`0, \ldots, G - 1`, :obj:`[N]`.
        mask (torch.Tensor, optional): A boolean mask or an index tensor of the
            nodes to evaluate, each once. (default: :obj:`None`, all nodes)
        threshold (float, optional): The decision threshold of one-column
            scores (an error with :obj:`[N, 2]` outputs). (default:
            :obj:`None`, the logits' threshold 0)
        num_groups (int, optional): The number of groups (so that absent
            groups are reported). (default: :obj:`None`, inferred)

    Returns:
        A :class:`FairnessReport`.
    """
    score, positive, probability = scores_and_predictions(pred, threshold)
    num_nodes = score.numel()
    if num_nodes == 0:
        raise ValueError("'pred' holds no node: there is nothing to evaluate")
    y = binary_labels(y, num_nodes)
    sens, num_groups = sensitive_groups(sens, num_nodes, num_groups)
    check_same_device(
        pred=pred,
        y=y,
        sens=sens,
        mask=mask if isinstance(mask, Tensor) else None,
    )
    keep = selected_nodes(mask, num_nodes, y.device) & (y >= 0)
    score, positive, y, sens = score[keep], positive[keep], y[keep], sens[keep]
    probability = probability[keep]
    if y.numel() > 0 and bool((y > 1).any()):
        raise ValueError(
            f"'y' must hold the labels 0 and 1 (or a negative "
            f'value for unlabelled nodes); got '
            f'{torch.unique(y).tolist()}'
        )

    _warn_on_one_predicted_class(positive)
    auc = roc_auc(score, y)
    if math.isnan(auc):
        warnings.warn(
            'The evaluated labels hold a single class: the AUC is '
            'undefined (NaN)',
            stacklevel=2,
        )
    by_group = {}
    for g in range(num_groups):  # a loop: warnings name the caller's line
        by_group[g] = _group_metrics(
            g, score, positive, probability, y, sens == g
        )
    return FairnessReport(
        accuracy=_mean(positive == y),
        auc=auc,
        delta_sp=_gap(
            {g: m.positive_rate for g, m in by_group.items()}, 'delta_sp'
        ),
        delta_eo=_gap(
            {g: m.true_positive_rate for g, m in by_group.items()},
            'delta_eo',
        ),
        by_group=by_group,
        delta_prob=_gap(
            {g: m.mean_probability for g, m in by_group.items()},
            'delta_prob',
        ),
    )


def _warn_on_one_predicted_class(positive: Tensor) -> None:
    if positive.numel() > 1 and bool((positive == positive[0]).all()):
        kind = 'positive' if bool(positive[0]) else 'negative'
        warnings.warn(
            f'Every evaluated node is predicted {kind}: the gaps are 0 (or '
            f'NaN) because the classifier predicts one class, which says '
            f'nothing of its fairness (check the threshold, and that '
            f"'pred' holds logits or probabilities, not log-probabilities)",
            OnePredictedClassWarning,
            stacklevel=3,
        )


def _group_metrics(
    group: int,
    score: Tensor,
    positive: Tensor,
    probability: Tensor,
    y: Tensor,
    member: Tensor,
) -> GroupMetrics:
    size = int(member.sum())
    if size == 0:
        warnings.warn(
            f'Group {group} has no evaluated member: its metrics are NaN',
            stacklevel=3,
        )
    has_positive = member & (y == 1)
    if size > 0 and not bool(has_positive.any()):
        warnings.warn(
            f'Group {group} has no positive label: its '
            f'true-positive rate is NaN',
            stacklevel=3,
        )
    auc = roc_auc(score[member], y[member]) if size > 0 else float('nan')
    if size > 0 and math.isnan(auc):
        warnings.warn(
            f'Group {group} holds a single class: its AUC is NaN', stacklevel=3
        )
    return GroupMetrics(
        size=size,
        positive_rate=_mean(positive[member]),
        true_positive_rate=_mean(positive[has_positive]),
        accuracy=_mean(positive[member] == y[member]),
        auc=auc,
        mean_probability=_mean(probability[member]),
    )


def _mean(values: Tensor) -> float:
    return values.double().mean().item() if values.numel() else float('nan')


def _gap(values: dict[int, float], name: str) -> float:
    defined = [v for v in values.values() if not math.isnan(v)]
    if len(defined) < 2:
        undefined = [g for g, v in values.items() if math.isnan(v)]
        warnings.warn(
            f'{name} is NaN: it needs two groups where its rate is defined, '
            f'and the rate of group(s) {undefined} is undefined here',
            stacklevel=3,
        )
        return float('nan')
    return max(defined) - min(defined)
