r"""A built-in synthetic fairness graph: two sensitive groups, homophilous
edges, and labels and features that leak the group.
"""

import torch
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from pyg_bemap.infra.checks import (
    check_integer,
    check_number,
    check_seed,
    check_share,
)


def biased_sbm(
    num_nodes: int = 2000,
    avg_degree: float = 20.0,
    homophily: float = 0.8,
    minority_share: float = 0.3,
    num_features: int = 32,
    label_bias: float = 0.2,
    signal: float = 1.0,
    group_trace: float = 0.5,
    seed: int = 0,
    device: torch.device | None = None,
) -> Data:
    r"""Builds a homophilous two-group graph in which message passing
    amplifies the sensitive attribute: a stochastic block model over the
    sensitive groups, labels whose positive rate differs between the groups,
    and node features that carry the label and a faint trace of the group.

    Each undirected edge joins a uniformly drawn node to a node of its own
    group with probability :obj:`homophily` and of the other group otherwise.
    The graph is undirected (both directions), without duplicates or
    self-loops. Labelled nodes are split 50% / 25% / 25% into training,
    validation and test nodes.

    Args:
        num_nodes (int, optional): The number of nodes. (default: :obj:`2000`)
        avg_degree (float, optional): The mean number of neighbours drawn
            per node; self-loops and repeated pairs among the draws are
            dropped, so the graph's mean degree is lower on dense or small
            graphs (and where an empty group turns cross-group draws into
            self-loops). (default: :obj:`20.0`)
        homophily (float, optional): Probability that an edge stays inside a
            group. (default: :obj:`0.8`)
        minority_share (float, optional): Share of nodes in group 1.
            (default: :obj:`0.3`)
        num_features (int, optional): Feature dimension.
            (default: :obj:`32`)
        label_bias (float, optional): Gap between the groups' positive
            rates, :math:`P(y=1 \mid s=1) - P(y=1 \mid s=0)`.
            (default: :obj:`0.2`)
        signal (float, optional): Shift of the features along a label
            direction. (default: :obj:`1.0`)
        group_trace (float, optional): Shift of the features along a group
            direction. (default: :obj:`0.5`)
        seed (int, optional): The random seed. (default: :obj:`0`)
        device (torch.device, optional): Where to build the graph.
            (default: :obj:`None`, the CPU)

    Raises:
        ValueError: For an argument out of its range: shares and
            :obj:`homophily` in :math:`[0, 1]`, :obj:`label_bias` in
            :math:`[-1, 1]`, :obj:`avg_degree` in :math:`[0, N - 1]`, at
            least one node and one feature.

    Returns:
        A :class:`~torch_geometric.data.Data` with :obj:`x`,
        :obj:`edge_index`, :obj:`y`, :obj:`s`, :obj:`train_mask`,
        :obj:`val_mask` and :obj:`test_mask`.
    """
    num_nodes = check_integer('num_nodes', num_nodes, minimum=1)
    avg_degree = check_share('avg_degree', avg_degree, num_nodes - 1)
    homophily = check_share('homophily', homophily)
    minority_share = check_share('minority_share', minority_share)
    num_features = check_integer('num_features', num_features, minimum=1)
    # positive rates 0.5 -+ label_bias / 2 lie in [0, 1]
    label_bias = check_number('label_bias', label_bias, -1, 1)
    signal = check_number('signal', signal)
    group_trace = check_number('group_trace', group_trace)
    gen = torch.Generator(device=device or 'cpu').manual_seed(
        check_seed('seed', seed)
    )

    def rand(*size: int) -> torch.Tensor:
        return torch.rand(*size, generator=gen, device=device)

    s = (rand(num_nodes) < minority_share).long()
    members = [torch.nonzero(s == g).view(-1) for g in (0, 1)]
    num_pairs = int(num_nodes * avg_degree / 2)
    src = (rand(num_pairs) * num_nodes).long()
    same = rand(num_pairs) < homophily
    target_group = torch.where(same, s[src], 1 - s[src])
    pick = rand(num_pairs)
    dst = torch.empty_like(src)
    for g, group in enumerate(members):
        chosen = target_group == g
        if group.numel() == 0:
            chosen_idx = torch.nonzero(chosen).view(-1)
            dst[chosen_idx] = src[chosen_idx]
            continue
        dst[chosen] = group[(pick[chosen] * group.numel()).long()]
    edge_index = torch.stack([src, dst])
    edge_index, _ = remove_self_loops(edge_index)
    edge_index = coalesce(
        to_undirected(edge_index, num_nodes=num_nodes), num_nodes=num_nodes
    )

    # Labels lean on the group (P(y=1) is 0.5 +- label_bias / 2); features
    # carry the label and a faint trace of the group, which averaging over
    # group-homophilous neighbourhoods amplifies.
    p_pos = 0.5 + label_bias * (s.float() - 0.5)
    y = (rand(num_nodes) < p_pos).long()
    direction = torch.randn(2, num_features, generator=gen, device=device)
    direction = direction / direction.norm(dim=1, keepdim=True)
    x = torch.randn(num_nodes, num_features, generator=gen, device=device)
    x = x + signal * (2 * y.float() - 1).view(-1, 1) * direction[0]
    x = x + group_trace * (2 * s.float() - 1).view(-1, 1) * direction[1]

    order = torch.randperm(num_nodes, generator=gen, device=device)
    masks = [
        torch.zeros(num_nodes, dtype=torch.bool, device=device)
        for _ in range(3)
    ]
    bounds = [0, num_nodes // 2, (3 * num_nodes) // 4, num_nodes]
    for mask, lo, hi in zip(masks, bounds[:-1], bounds[1:]):
        mask[order[lo:hi]] = True
    return Data(
        x=x,
        edge_index=edge_index,
        y=y,
        s=s,
        train_mask=masks[0],
        val_mask=masks[1],
        test_mask=masks[2],
    )
