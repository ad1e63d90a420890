r"""Rule 4's quotas: how many neighbours of every group each node keeps,
and the weight of every node as a neighbour inside its group."""

import torch
from torch import Tensor

from pyg_bemap.infra.checks import check_choice, check_integer, check_share
from pyg_bemap.rules.counts import check_counts
from pyg_bemap.rules.groups import sensitive_groups

#: The weights inside a group: the balance score, uniform, or a degree power.
STRATEGIES = ('balance', 'uniform', 'degree')
DEGREE_EXPONENT = 0.75


def check_strategy(strategy: str) -> str:
    r"""Raises a :class:`ValueError` unless :obj:`strategy` is one of
    :obj:`STRATEGIES`."""
    return check_choice('strategy', strategy, STRATEGIES)


def fair_quotas(
    neighbour_count: Tensor,
    sens: Tensor,
    beta: float = 0.25,
    min_keep: int = 4,
) -> Tensor:
    r"""Computes how many neighbours of every group each node keeps (rule 4).

    Let :math:`c_g` count the members of group :math:`g` in
    :math:`\mathcal{N}(i) \cup \{i\}` and :math:`d_i = |\mathcal{N}(i)|`:

    * :math:`d_i = 0`: no neighbour is kept;
    * one group only in :math:`\mathcal{N}(i) \cup \{i\}`: keep
      :math:`\min(d_i, \max(m, \lceil \beta d_i \rceil))` neighbours;
    * otherwise, with :math:`t = \min_{g: c_g > 0} c_g`, keep :math:`t`
      members of every present group, the node itself counting as one kept
      member of its own group (:math:`t - 1` of its neighbours there).

    Args:
        neighbour_count (torch.Tensor): Neighbour entries per group, shape
            :obj:`[N, G]` (self-loops excluded).
        sens (torch.Tensor): The group of every node, shape :obj:`[N]`.
        beta (float, optional): Share :math:`\beta` kept of a one-group
            neighbourhood. (default: :obj:`0.25`)
        min_keep (int, optional): Minimum :math:`m` kept of a one-group
            neighbourhood. (default: :obj:`4`)

    Returns:
        A :obj:`torch.long` tensor of shape :obj:`[N, G]`.
    """
    beta = check_share('beta', beta)
    min_keep = check_integer('min_keep', min_keep)
    neighbour_count = _check_neighbour_count(neighbour_count)
    num_nodes, num_groups = neighbour_count.shape
    sens, _ = sensitive_groups(sens, num_nodes, num_groups)
    own = torch.nn.functional.one_hot(sens, num_groups)
    with_self = neighbour_count + own
    present = with_self > 0
    degree = neighbour_count.sum(1)
    # absent groups above every count: the minimum is that of present ones
    balanced = with_self.masked_fill(~present, torch.iinfo(torch.long).max)
    quota = (balanced.min(1).values.view(-1, 1) * present) - own
    one_group = present.sum(1) == 1
    # ceil in float64, as Python's math.ceil(beta * d) computes it.
    share = torch.ceil(beta * degree.to(torch.float64)).long()
    # an m beyond every degree keeps every neighbour: min(d, m) = d
    kept = torch.minimum(degree, share.clamp(min=min(min_keep, 2**62)))
    return torch.where(one_group.view(-1, 1), own * kept.view(-1, 1), quota)


def _check_neighbour_count(count: Tensor) -> Tensor:
    source = (
        "neighbour entries per group, e.g. 'group_edges(...).neighbour_count'"
    )
    check_counts('neighbour_count', count, source)
    if count.is_floating_point():
        raise ValueError(
            f"'neighbour_count' must hold integer counts (got {count.dtype})"
        )
    return count.long()


def neighbour_weights(
    strategy: str, balance: Tensor, out_degree: Tensor
) -> Tensor | None:
    r"""The weight of every node as a neighbour: its balance score
    (:obj:`'balance'`), :math:`\deg(j)^{3/4}` (:obj:`'degree'`, with
    :math:`\deg(j)` the non-self-loop edges leaving :math:`j`, its degree in
    an undirected graph) or :obj:`None` for uniform weights.
    """
    check_strategy(strategy)
    if strategy == 'balance':
        return balance
    if strategy == 'degree':
        # in float32, the keys' dtype, not that of the scores it ignores
        return out_degree.float().pow(DEGREE_EXPONENT)
    return None  # 'uniform'
