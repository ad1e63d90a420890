r"""Slow, obviously correct per-node implementations of BeMap's rules 2-4,
used as oracles by the tests and as the baseline of the benchmarks.
"""

import itertools
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor


def in_neighbours(edge_index: Tensor, num_nodes: int) -> list[list[int]]:
    r"""One list per node of its in-neighbour entries (self-loops dropped)."""
    nbrs: list[list[int]] = [[] for _ in range(num_nodes)]
    for j, i in edge_index.t().tolist():
        if j != i:
            nbrs[i].append(j)
    return nbrs


def reference_counts(
    edge_index: Tensor, sens: Sequence[int], num_groups: int, num_hops: int
) -> Tensor:
    r"""Rule 2 by breadth-first search, one node at a time."""
    num_nodes = len(sens)
    nbrs = in_neighbours(edge_index, num_nodes)
    count = torch.zeros(num_nodes, num_groups, dtype=torch.long)
    for i in range(num_nodes):
        seen, frontier = {i}, {i}
        for _ in range(num_hops):
            frontier = {j for v in frontier for j in nbrs[v]} - seen
            seen |= frontier
        for j in seen:
            count[i, sens[j]] += 1
    return count


def reference_walk_counts(
    edge_index: Tensor, sens: Sequence[int], num_groups: int, num_hops: int
) -> Tensor:
    r"""Walks of length at most :obj:`num_hops` ending at each node."""
    num_nodes = len(sens)
    nbrs = in_neighbours(edge_index, num_nodes)
    count = torch.zeros(num_nodes, num_groups, dtype=torch.long)
    for i in range(num_nodes):
        ends = [i]
        for _ in range(num_hops + 1):
            for j in ends:
                count[i, sens[j]] += 1
            ends = [u for v in ends for u in nbrs[v]]
    return count


def reference_balance(count: Tensor, delta: float) -> Tensor:
    r"""Rule 3 with an explicit loop over group pairs."""
    out = []
    for row in count.tolist():
        pairs = list(itertools.combinations(row, 2))
        if pairs:
            spread = math.sqrt(
                sum((a - b) ** 2 for a, b in pairs) / len(pairs)
            )
        else:
            spread = 0.0
        out.append(1.0 / (spread + delta))
    return torch.tensor(out, dtype=torch.float64)


def reference_quota(
    nbr_groups: Sequence[int], own: int, beta: float, min_keep: int
) -> dict[int, int]:
    r"""Rule 4's quotas of one node: neighbours to keep per group."""
    degree = len(nbr_groups)
    if degree == 0:
        return {}
    with_self = Counter(nbr_groups)
    with_self[own] += 1
    if len(with_self) == 1:
        return {own: min(degree, max(min_keep, math.ceil(beta * degree)))}
    t = min(with_self.values())
    return {g: t - (g == own) for g in with_self}


def reference_sample(
    edge_index: Tensor,
    sens: Sequence[int],
    weight: Sequence[float],
    beta: float = 0.25,
    min_keep: int = 4,
    rng: np.random.Generator | None = None,
) -> Tensor:
    r"""Rule 4 node by node with :obj:`numpy` choice; returns the edge mask."""
    rng = rng or np.random.default_rng(0)
    num_nodes = len(sens)
    incoming: list[list[int]] = [[] for _ in range(num_nodes)]
    for e, (j, i) in enumerate(edge_index.t().tolist()):
        if j != i:
            incoming[i].append(e)
    src = edge_index[0].tolist()
    mask = np.zeros(edge_index.size(1), dtype=bool)
    for i in range(num_nodes):
        edges = incoming[i]
        quota = reference_quota(
            [sens[src[e]] for e in edges], sens[i], beta, min_keep
        )
        for group, k in quota.items():
            if k == 0:
                continue
            members = [e for e in edges if sens[src[e]] == group]
            w = np.array([weight[src[e]] for e in members], dtype=np.float64)
            mask[rng.choice(members, k, replace=False, p=w / w.sum())] = True
    return torch.from_numpy(mask)


def inclusion_probabilities(
    weight: Sequence[float], k: int
) -> dict[tuple, float]:
    r"""Exact probability of every :obj:`k`-subset under successive sampling
    without replacement proportional to :obj:`weight`.
    """
    total = float(sum(weight))
    probs: dict[tuple, float] = Counter()
    for seq in itertools.permutations(range(len(weight)), k):
        p, left = 1.0, total
        for j in seq:
            p *= weight[j] / left
            left -= weight[j]
        probs[tuple(sorted(seq))] += p
    return dict(probs)


def kept_per_group(edge_index, mask, sens, node):
    src, dst = edge_index
    chosen = mask & (dst == node)
    return Counter(sens[src[chosen]].tolist())


def assert_rule_4(edge_index, mask, sens, beta=0.25, min_keep=4):
    src, dst = edge_index
    assert not bool(mask[src == dst].any()), 'a self-loop was sampled'
    nbrs = in_neighbours(edge_index, sens.numel())
    for i in range(sens.numel()):
        groups = [sens[j].item() for j in nbrs[i]]
        expected = reference_quota(groups, sens[i].item(), beta, min_keep)
        expected = {g: k for g, k in expected.items() if k > 0}
        assert kept_per_group(edge_index, mask, sens, i) == expected, i
