r"""Rule 3: how balanced each node's neighbourhood is."""

import torch
from torch import Tensor

from pyg_bemap.infra.checks import check_positive
from pyg_bemap.rules.counts import check_counts
from pyg_bemap.rules.groups import check_same_device, check_tensor

#: What computes balance scores.
_SCORED_BY = 'BalanceAwareSampling or balance_score'


def balance_score(count: Tensor, delta: float = 1.0) -> Tensor:
    r"""Computes the balance score of every node from its group counts
    (rule 3 of BeMap):

    .. math::
        b_i = \frac{1}{D_i + \delta}, \qquad
        D_i = \sqrt{\frac{2}{G (G-1)} \sum_{g < h}
        (\mathrm{count}_{i,g} - \mathrm{count}_{i,h})^2},

    which is :math:`|\mathrm{count}_{i,0} - \mathrm{count}_{i,1}|` for two
    groups. With a single group, :math:`D_i = 0`.

    Args:
        count (torch.Tensor): Group counts, shape :obj:`[N, G]`.
        delta (float, optional): The smoothing term :math:`\delta > 0`.
            (default: :obj:`1.0`)

    Returns:
        A floating tensor of shape :obj:`[N]` (the default dtype).
    """
    check_counts('count', count, "compute them with 'hop_group_counts'")
    delta = check_positive('delta', delta)
    return checked_balance_score(count, delta)


def checked_balance_score(count: Tensor, delta: float) -> Tensor:
    r""":func:`balance_score` of arguments checked already."""
    spread = imbalance(count)
    score = (1.0 / (spread + delta)).to(torch.get_default_dtype())
    if score.numel() and not bool(score.isfinite().all()):
        raise ValueError(
            f"'delta' = {delta:g} gives balance scores up to 1 / delta, "
            f'beyond the range of {score.dtype}; choose a larger delta'
        )
    if score.numel() and not bool((score > 0).all()):  # underflow
        raise ValueError(
            f"'delta' = {delta:g} gives balance scores of about 1 / delta, "
            f'which round to 0 in {score.dtype} (every draw would keep the '
            f'first edges); choose a smaller delta'
        )
    return score


def imbalance(count: Tensor) -> Tensor:
    r"""The imbalance :math:`D_i` of every node's group counts (see
    :func:`balance_score`), as :obj:`torch.float64`, from counts checked
    already."""
    num_groups = count.size(1)
    count = count.to(torch.float64)
    if num_groups < 2:
        return count.new_zeros(count.size(0))
    # sum_{g<h} (c_g - c_h)^2 = G * sum_g (c_g - mean)^2, which does not
    # cancel as G * sum_g c_g^2 - (sum_g c_g)^2 does for large counts
    centred = count - count.mean(1, keepdim=True)
    pair_sq = num_groups * centred.pow(2).sum(1)
    scale = 2.0 / (num_groups * (num_groups - 1))
    return (scale * pair_sq).sqrt()


def check_balance(balance: Tensor, sens: Tensor) -> Tensor:
    r"""Checks the balance scores of the nodes grouped by :obj:`sens` and
    returns them as a floating tensor.
    """
    num_nodes = sens.numel()
    check_tensor(balance, "'balance'")
    check_same_device(balance=balance, sens=sens)
    if balance.dim() != 1 or balance.numel() != num_nodes:
        raise ValueError(
            f"'balance' must have shape [{num_nodes}] (got "
            f'{list(balance.shape)}); compute it with {_SCORED_BY}'
        )
    if not balance.is_floating_point():
        balance = balance.to(torch.get_default_dtype())
    if num_nodes > 0 and not bool(((balance > 0) & balance.isfinite()).all()):
        raise ValueError(
            f"'balance' must hold positive, finite scores; compute them with "
            f'{_SCORED_BY} after every step that adds nodes (VirtualNode and '
            f'Pad give the nodes they add a score of 0)'
        )
    return balance
