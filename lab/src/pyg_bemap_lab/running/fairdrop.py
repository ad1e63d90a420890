r"""FairDrop, a fairness-aware edge dropout used as a comparison method."""

import torch
from torch import Tensor

from pyg_bemap.rules import check_edge_index, sensitive_groups


def fairdrop_edge(
    edge_index: Tensor,
    sens: Tensor,
    delta: float = 0.16,
    *,
    training: bool = True,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Drops edges with a bias towards the ones that join a group to itself,
    as in the `"FairDrop: Biased Edge Dropout for Enhancing Fairness in Graph
    Representation Learning" <https://arxiv.org/abs/2104.14210>`_ paper,
    shaped like :func:`torch_geometric.utils.dropout_edge`.

    Every edge :math:`(j, i)` is kept independently, with probability

    .. math::
        P(\text{keep}) = \begin{cases}
            \frac{1}{2} + \delta & s_j \neq s_i \\
            \frac{1}{2} - \delta & s_j = s_i,
        \end{cases}

    so that a graph whose edges mostly join nodes of one group becomes more
    balanced on average. Self-loops are always kept (a node's own message
    is no bias). A new mask is drawn on every call; call it once per
    training epoch.

    Args:
        edge_index (torch.Tensor): The edges, shape :obj:`[2, E]`.
        sens (torch.Tensor): The sensitive group of every node, :obj:`[N]`.
        delta (float, optional): The bias :math:`\delta \in [0, 1/2]`.
            (default: :obj:`0.16`, the FairDrop paper's)
        training (bool, optional): If set to :obj:`False`, returns the input
            unchanged and an all-true mask. (default: :obj:`True`)
        generator (torch.Generator, optional): The random generator.
            (default: :obj:`None`, the global one)

    Returns:
        :obj:`(edge_index, edge_mask)`: the kept edges and the boolean mask
        over the input edges.
    """
    if isinstance(delta, bool) or not (
        isinstance(delta, (int, float)) and 0.0 <= delta <= 0.5
    ):
        raise ValueError(
            f"'delta' must be a number in [0, 0.5] (got {delta!r})"
        )
    if generator is not None and not isinstance(generator, torch.Generator):
        raise ValueError(
            f"'generator' must be a torch.Generator or None "
            f'(got {type(generator).__name__})'
        )
    num_nodes = check_edge_index(edge_index, sens.numel())
    sens, _ = sensitive_groups(sens, num_nodes)
    if not training:
        mask = edge_index.new_ones(edge_index.size(1), dtype=torch.bool)
        return edge_index, mask
    src, dst = edge_index[0], edge_index[1]
    keep = torch.where(sens[src] != sens[dst], 0.5 + delta, 0.5 - delta)
    draw = torch.rand(
        edge_index.size(1), generator=generator, device=edge_index.device
    )
    mask = (draw < keep) | (src == dst)
    return edge_index[:, mask], mask
