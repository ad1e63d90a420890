r"""Can a probe read the sensitive attribute from node embeddings? A
logistic-regression probe, its accuracy per bin of the share of a node's
neighbours in its own group (the paper's evidence of bias amplification),
and, overall and per bin, the base rate a probe that reads nothing
reaches."""

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from pyg_bemap.infra.checks import check_seed, is_integer
from pyg_bemap.metrics.bias import check_embeddings, majority_ratio
from pyg_bemap.rules.groups import check_same_device, sensitive_groups

#: The marker, line style and colour of each curve of a plot, in turn. The
#: colours are Paul Tol's high-contrast scheme and black, of distinct
#: lightness, so curves stay apart in greyscale and for colour-blind
#: readers.
LINE_STYLES = [
    ('o', '-', '#004488'),
    ('s', '--', '#DDAA33'),
    ('^', ':', '#BB5566'),
    ('D', '-.', '#000000'),
]


@dataclass(frozen=True)
class ProbeBin:
    r"""Probe accuracy on nodes whose majority-neighbour ratio lies in
    :obj:`[lower, upper)` (the last bin includes 1), and the bin's base
    rate: the accuracy there of a probe that reads nothing (the share of
    the bin's nodes in the largest group of the probe's training nodes).
    The groups' shares differ from bin to bin, so the base rate does too:
    read the accuracy against it.
    """

    lower: float
    upper: float
    count: int
    accuracy: float
    base_rate: float = math.nan


@dataclass(frozen=True)
class ProbeResult:
    r"""What :func:`sensitive_attribute_probe` returns: the probe's
    accuracy on the held-out nodes, per bin of the majority-neighbour ratio,
    and the base rate, the accuracy of always guessing the largest group of
    the training nodes (what a probe that reads nothing reaches)."""

    accuracy: float
    bins: list[ProbeBin]
    base_rate: float = math.nan

    def __str__(self) -> str:
        lines = [
            f'probe accuracy (held-out nodes): {self.accuracy:.4f} '
            f'(base rate {self.base_rate:.4f})',
            'majority ratio     nodes  accuracy  base rate',
        ]
        for b in self.bins:
            acc, base = (
                'nan' if math.isnan(v) else f'{v:.4f}'
                for v in (b.accuracy, b.base_rate)
            )
            end = ']' if b.upper == 1.0 else ')'
            span = f'[{b.lower:.3g}, {b.upper:.3g}{end}'
            lines.append(f'{span:<15}{b.count:>9}  {acc:>8}  {base:>9}')
        return '\n'.join(lines)

    def plot(self, ax: Any = None, label: str | None = None) -> Any:
        r"""Draws accuracy against the majority-neighbour ratio (needs
        matplotlib, in the :obj:`examples` extra) and returns the axes.
        Each probe drawn on the same axes gets the next marker, line style
        and colour (distinct in greyscale); labels go in a legend beside
        the axes. The first probe drawn writes each bin's node count along
        the bottom (the bins hold the same nodes for every probe of one
        graph) and draws the bins' base rates as a dotted grey line.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as error:  # pragma: no cover
            raise ImportError(
                "Plotting needs matplotlib: pip install 'pyg-bemap[examples]'"
            ) from error
        ax = ax if ax is not None else plt.gca()
        centres = [(b.lower + b.upper) / 2 for b in self.bins]
        marker, line, colour = LINE_STYLES[len(ax.lines) % len(LINE_STYLES)]
        ax.plot(
            centres,
            [b.accuracy for b in self.bins],
            marker=marker,
            linestyle=line,
            color=colour,
            label=label,
        )
        first = not ax.get_lines()[:-1]
        for centre, b in zip(centres, self.bins):
            if first and b.count:  # the same nodes for every probe drawn
                ax.text(
                    centre,
                    0.02,
                    f'n={b.count}',
                    transform=ax.get_xaxis_transform(),
                    ha='center',
                    fontsize=7,
                    color='dimgrey',
                )
        if first:
            ax.plot(
                centres,
                [b.base_rate for b in self.bins],
                color='grey',
                linestyle=':',
                linewidth=1,
                label='base rate (a probe that reads nothing)',
            )
        ax.set_xlabel('share of neighbours in the own group')
        ax.set_ylabel('sensitive-attribute probe accuracy')
        ax.set_ylim(0, 1.05)
        ax.legend(loc='upper left', bbox_to_anchor=(1.02, 1))
        return ax


def sensitive_attribute_probe(
    h: Tensor,
    edge_index: Tensor,
    sens: Tensor,
    *,
    train_ratio: float = 0.5,
    num_bins: int = 10,
    epochs: int = 300,
    lr: float = 0.05,
    seed: int = 0,
) -> ProbeResult:
    r"""Trains a logistic-regression probe that predicts the sensitive group
    from embeddings :math:`\mathbf{H}` and reports its accuracy on held-out
    nodes, overall and binned by each node's majority-neighbour ratio (equal
    width bins of the share of neighbours in the node's own group), as in the
    paper's evidence that message passing leaks the sensitive attribute.
    Each accuracy comes with its base rate, that of a probe that reads
    nothing (always the largest group of its training nodes): the groups'
    shares differ between bins, so a curve that rises with the ratio shows
    leakage only where it stands above its bins' base rates.

    Args:
        h (torch.Tensor): Node embeddings, shape :obj:`[N, d]`.
        edge_index (torch.Tensor): The graph, shape :obj:`[2, E]`.
        sens (torch.Tensor): The sensitive group of every node.
        train_ratio (float, optional): Share of nodes the probe trains on.
            (default: :obj:`0.5`)
        num_bins (int, optional): Number of equal-width bins, a positive
            integer. (default: :obj:`10`)
        epochs (int, optional): Full-batch Adam steps. (default: :obj:`300`)
        lr (float, optional): Learning rate. (default: :obj:`0.05`)
        seed (int, optional): Seed of the split and the probe.
            (default: :obj:`0`)
    """
    check_embeddings(h)
    check_same_device(h=h, sens=sens)
    if not is_integer(num_bins) or num_bins < 1:
        raise ValueError(
            f"'num_bins' must be a positive integer (got {num_bins!r})"
        )
    if not 0.0 < train_ratio < 1.0:
        raise ValueError(
            f"'train_ratio' must be in (0, 1) (got {train_ratio})"
        )
    sens, num_groups = sensitive_groups(sens, h.size(0))
    ratio = majority_ratio(edge_index, sens, h.size(0))
    gen = torch.Generator().manual_seed(check_seed('seed', seed))
    order = torch.randperm(h.size(0), generator=gen).to(h.device)
    cut = int(train_ratio * h.size(0))
    train, test = order[:cut], order[cut:]
    pred = _fit_logistic(
        h.detach().float(), sens, num_groups, train, epochs, lr, gen
    )[test]
    largest = torch.bincount(sens[train], minlength=num_groups).argmax()
    guessed = (sens[test] == largest).double()  # a probe that reads nothing
    correct, ratio = (pred == sens[test]).double(), ratio[test]
    return ProbeResult(
        accuracy=correct.mean().item(),
        bins=_binned_accuracy(correct, guessed, ratio, num_bins),
        base_rate=guessed.mean().item(),
    )


def _binned_accuracy(
    correct: Tensor, guessed: Tensor, ratio: Tensor, num_bins: int
) -> list[ProbeBin]:
    r"""The accuracy of the probe (:obj:`correct`) and of the guess of the
    largest group (:obj:`guessed`) over the nodes of every bin
    :math:`[k/B, (k+1)/B)` of the ratio (the last one including 1; nodes
    without neighbours, whose ratio is NaN, in none). The edges are the
    float64 values of :math:`k/B`, so a ratio equal to an edge, such as
    3/10, lies in the bin that starts there."""
    edges = [k / num_bins for k in range(num_bins + 1)]
    has_ratio = ~ratio.isnan()
    index = torch.bucketize(
        ratio[has_ratio],
        torch.tensor(edges[1:-1], dtype=torch.float64, device=ratio.device),
        right=True,
    )
    count = torch.bincount(index, minlength=num_bins)
    accuracy, base_rate = (
        torch.bincount(index, hit[has_ratio], minlength=num_bins) / count
        for hit in (correct, guessed)
    )  # NaN for an empty bin
    return [
        ProbeBin(lower, upper, int(n), float(acc), float(base))
        for lower, upper, n, acc, base in zip(
            edges[:-1],
            edges[1:],
            count.tolist(),
            accuracy.tolist(),
            base_rate.tolist(),
        )
    ]


def _fit_logistic(
    h: Tensor,
    sens: Tensor,
    num_groups: int,
    train: Tensor,
    epochs: int,
    lr: float,
    gen: torch.Generator,
) -> Tensor:
    mean, std = h[train].mean(0), h[train].std(0).clamp(min=1e-8)
    h = (h - mean) / std
    weight = (
        (torch.randn(h.size(1), num_groups, generator=gen) * 0.01)
        .to(h.device)
        .requires_grad_()
    )
    bias = torch.zeros(num_groups, device=h.device, requires_grad=True)
    optimizer = torch.optim.Adam([weight, bias], lr=lr)
    with torch.enable_grad():
        for _ in range(epochs):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(
                h[train] @ weight + bias, sens[train]
            )
            loss.backward()
            optimizer.step()
    return (h @ weight + bias).argmax(-1).detach()
