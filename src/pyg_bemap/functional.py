r"""The functional API: a fair neighbourhood sampled in one call, shaped
like :func:`torch_geometric.utils.dropout_edge`."""

import torch
from torch import Tensor

from pyg_bemap.edge_index import get_bemap
from pyg_bemap.infra.checks import check_generator
from pyg_bemap.infra.compat import plain_tensor
from pyg_bemap.infra.sparse import masked_columns
from pyg_bemap.rules.balance import check_balance
from pyg_bemap.rules.draw import draw_seed
from pyg_bemap.rules.groups import graph_groups
from pyg_bemap.sampler import GraphSampler
from pyg_bemap.settings import SamplerSettings


def balanced_edge_sample(
    edge_index: Tensor,
    sens: Tensor,
    balance: Tensor,
    *,
    num_nodes: int | None = None,
    num_groups: int | None = None,
    beta: float | None = None,
    min_keep: int | None = None,
    strategy: str | None = None,
    settings: SamplerSettings | None = None,
    training: bool = True,
    generator: torch.Generator | None = None,
) -> tuple[Tensor, Tensor]:
    r"""Samples a fair neighbourhood for every node, as in the `"BeMap:
    Balanced Message Passing for Fair Graph Neural Network"
    <https://arxiv.org/abs/2306.04107>`_ paper, shaped like
    :func:`torch_geometric.utils.dropout_edge`.

    Every node :math:`i` keeps, of the edges :math:`(j, i)` that point to it,
    the same number of members of every group present in
    :math:`\mathcal{N}(i) \cup \{i\}` (see :func:`fair_quotas`). Inside a
    group, neighbours are drawn without replacement with probability
    proportional to their weight :math:`w_j`: the balance score
    :math:`b_j = 1 / (D_j + \delta)` (:obj:`strategy='balance'`), :math:`1`
    (:obj:`'uniform'`) or :math:`\deg(j)^{3/4}` (:obj:`'degree'`).
    Self-loops are never sampled.

    On a plain tensor the call is stateless: it checks its arguments and
    groups the edges every time, a sort of all :math:`E` edges. On the
    carrier :class:`~pyg_bemap.BalanceAwareSampling` returns, with the
    attribute and scores it computed (:obj:`data.s`,
    :obj:`data.bemap_balance`), a call costs one resample.

    Args:
        edge_index (torch.Tensor): The edges, shape :obj:`[2, E]`.
        sens (torch.Tensor): The sensitive group of every node, :obj:`[N]`.
        balance (torch.Tensor): The balance score of every node, :obj:`[N]`.
        num_nodes (int, optional): The number of nodes.
            (default: :obj:`None`, the length of :obj:`sens`)
        num_groups (int, optional): The number of groups.
            (default: :obj:`None`, inferred)
        beta (float, optional): Share kept of a one-group neighbourhood.
            (default: :obj:`0.25`)
        min_keep (int, optional): Minimum kept of a one-group neighbourhood.
            (default: :obj:`4`)
        strategy (str, optional): :obj:`'balance'`, :obj:`'uniform'` or
            :obj:`'degree'`. (default: :obj:`'balance'`)
        settings (SamplerSettings, optional): The three above as one value.
            (default: :obj:`None`)
        training (bool, optional): If set to :obj:`False`, returns the input
            unchanged and an all-true mask. (default: :obj:`True`)
        generator (torch.Generator, optional): The random generator, from
            which one seed is drawn; the keys come from a generator seeded
            with it, as in :class:`~pyg_bemap.BeMapConv`.
            (default: :obj:`None`, the global one)

    Returns:
        :obj:`(edge_index, edge_mask)`: the kept edges
        :obj:`edge_index[:, edge_mask]` and the boolean mask over the input
        edges.
    """
    settings = SamplerSettings.resolve(
        settings, beta=beta, min_keep=min_keep, strategy=strategy
    )
    check_generator(generator)
    info = get_bemap(edge_index)
    if (  # a carrier whose information was computed from these very tensors
        info is not None
        and info.describes(sens, balance)
        and num_nodes in (None, info.num_nodes)
        and num_groups in (None, info.num_groups)
    ):  # then checked already, and no pass reads them again
        info.check_unedited(edge_index)
        sampler = info.sampler(edge_index, plain_tensor(edge_index))
    else:  # a sampler of the checked inputs, for this call only
        sens, num_groups = graph_groups(
            edge_index, sens, num_nodes, num_groups
        )
        balance = check_balance(balance, sens)
        plain = plain_tensor(edge_index)  # planned at the first draw
        sampler = GraphSampler(plain, plain, sens, balance, num_groups)
    if not training:
        return edge_index, edge_index.new_ones(
            edge_index.size(1), dtype=torch.bool
        )
    sample = sampler.draw(settings, draw_seed(generator))
    edges = plain_tensor(edge_index) if info is not None else edge_index
    return masked_columns(edges, sample.mask, sample.positions), sample.mask
