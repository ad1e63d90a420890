r"""Rules 2 and 3: group counts within :math:`L` hops and balance scores."""
from typing import Iterator, Optional, Tuple

import torch
from torch import Tensor

from pyg_bemap.utils.groups import (
    check_edge_index,
    check_same_device,
    sensitive_groups,
)

DEFAULT_MEMORY_BUDGET = 256 * 2**20  # bytes
COUNTING_MODES = ('exact', 'walks')

# Bytes of working memory per expanded (row, node) pair: the row, the node and
# the key as int64, the node's group, the id and two masks.
_BYTES_PER_PAIR = 48
# Bytes per (row, node) cell: the int32 owner buffer and, at most, every cell
# once more in the int32 frontiers kept to reset that buffer.
_BYTES_PER_CELL = 8


def in_neighbour_csr(edge_index: Tensor, num_nodes: int) -> Tuple[Tensor, Tensor]:
    r"""Returns :obj:`(ptr, col)` such that the in-neighbours (sources) of node
    :obj:`i` are :obj:`col[ptr[i]:ptr[i + 1]]`, with self-loops removed.
    """
    src, dst = edge_index[0].long(), edge_index[1].long()
    not_loop = src != dst
    src, dst = src[not_loop], dst[not_loop]
    dst, perm = torch.sort(dst, stable=True)
    ptr = torch.zeros(num_nodes + 1, dtype=torch.long, device=dst.device)
    ptr[1:] = torch.bincount(dst, minlength=num_nodes).cumsum(0)
    return ptr, src[perm]


def hop_group_counts(
    edge_index: Tensor,
    sens: Tensor,
    num_groups: Optional[int] = None,
    num_hops: int = 2,
    num_nodes: Optional[int] = None,
    counting: str = 'exact',
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
) -> Tensor:
    r"""Counts, for every node :math:`i` and group :math:`g`, the nodes of
    group :math:`g` within :math:`L` hops of :math:`i` (rule 2 of BeMap,
    `"BeMap: Balanced Message Passing for Fair Graph Neural Network"
    <https://arxiv.org/abs/2306.04107>`_).

    With :obj:`counting='exact'`,

    .. math::
        \mathrm{count}_{i,g} = \left| \{ j : s_j = g,\ j \in
        \mathcal{N}^{\leq L}(i) \} \right|,

    where :math:`\mathcal{N}^{\leq L}(i)` holds :math:`i` itself and every
    distinct node from which a path of at most :math:`L` edges leads to
    :math:`i` (messages flow from :obj:`edge_index[0]` to
    :obj:`edge_index[1]`). Target nodes are processed in chunks with a dense
    "seen" buffer, so no intermediate exceeds :obj:`memory_budget` bytes
    (besides the graph's CSR and the output); a single node whose in-degree
    exceeds the per-piece pair budget is expanded on its own.

    With :obj:`counting='walks'` (a cheaper approximation for huge graphs) the
    count is the number of walks of length at most :math:`L` that end in
    :math:`i` and start in group :math:`g`,
    :math:`\sum_{h=0}^{L} (\mathbf{A}^h \mathbf{S})_{i,g}`, an upper bound of
    the exact count that equals it when no two walks share a start node.

    Args:
        edge_index (torch.Tensor): The edges, shape :obj:`[2, E]`.
        sens (torch.Tensor): The sensitive group of every node, shape
            :obj:`[N]`.
        num_groups (int, optional): The number of groups :math:`G`.
            (default: :obj:`None`, inferred)
        num_hops (int, optional): The number of hops :math:`L`, usually the
            number of message-passing layers. (default: :obj:`2`)
        num_nodes (int, optional): The number of nodes. (default: :obj:`None`,
            the length of :obj:`sens`)
        counting (str, optional): :obj:`'exact'` or :obj:`'walks'`.
            (default: :obj:`'exact'`)
        memory_budget (int, optional): The working-memory budget of exact
            counting, in bytes. (default: :obj:`268435456`, 256 MiB)

    Returns:
        A :obj:`torch.long` tensor of shape :obj:`[N, G]`.
    """
    if num_nodes is None:
        num_nodes = sens.numel() if isinstance(sens, Tensor) else None
    num_nodes = check_edge_index(edge_index, num_nodes)
    sens, num_groups = sensitive_groups(sens, num_nodes, num_groups)
    check_same_device(edge_index=edge_index, sens=sens)
    if not isinstance(num_hops, int) or num_hops < 0:
        raise ValueError(f"'num_hops' must be a non-negative integer "
                         f"(got {num_hops})")
    if counting not in COUNTING_MODES:
        raise ValueError(f"'counting' must be one of {COUNTING_MODES} "
                         f"(got '{counting}')")
    ptr, col = in_neighbour_csr(edge_index, num_nodes)
    if counting == 'walks':
        return _walk_counts(ptr, col, sens, num_groups, num_hops)
    return _exact_counts(ptr, col, sens, num_groups, num_hops, memory_budget)


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
    if not isinstance(count, Tensor) or count.dim() != 2:
        raise ValueError("'count' must be a 2-D tensor of shape "
                         "[num_nodes, num_groups]")
    if not delta > 0:
        raise ValueError(f"'delta' must be positive (got {delta})")
    num_groups = count.size(1)
    count = count.to(torch.float64)
    if num_groups < 2:
        spread = count.new_zeros(count.size(0))
    else:
        # sum_{g<h} (c_g - c_h)^2 = G * sum_g c_g^2 - (sum_g c_g)^2
        pair_sq = num_groups * count.pow(2).sum(1) - count.sum(1).pow(2)
        scale = 2.0 / (num_groups * (num_groups - 1))
        spread = (scale * pair_sq.clamp(min=0)).sqrt()
    return (1.0 / (spread + delta)).to(torch.get_default_dtype())


def _walk_counts(ptr: Tensor, col: Tensor, sens: Tensor, num_groups: int,
                 num_hops: int) -> Tensor:
    num_nodes = ptr.numel() - 1
    dst = torch.repeat_interleave(
        torch.arange(num_nodes, device=ptr.device), ptr.diff())
    walks = torch.nn.functional.one_hot(sens, num_groups)
    total = walks.clone()
    for _ in range(num_hops):
        walks = torch.zeros_like(walks).index_add_(0, dst, walks[col])
        total += walks
    return total


def _exact_counts(ptr: Tensor, col: Tensor, sens: Tensor, num_groups: int,
                  num_hops: int, memory_budget: int) -> Tensor:
    num_nodes = ptr.numel() - 1
    device = ptr.device
    count = torch.zeros(num_nodes * num_groups, dtype=torch.long,
                        device=device)
    if num_nodes == 0:
        return count.view(0, num_groups)
    rows_per_chunk = memory_budget // (2 * _BYTES_PER_CELL * num_nodes)
    if rows_per_chunk < 1:
        raise ValueError(
            f"'memory_budget' of {memory_budget} bytes is too small for "
            f"exact counting on {num_nodes} nodes: it needs at least "
            f"{2 * _BYTES_PER_CELL * num_nodes} bytes. Raise "
            f"'memory_budget' or use counting='walks'")
    pairs_per_piece = max(1, memory_budget // (2 * _BYTES_PER_PAIR))
    owner = torch.full((rows_per_chunk * num_nodes, ), -1, dtype=torch.int32,
                       device=device)
    in_degree = ptr.diff()
    for start in range(0, num_nodes, rows_per_chunk):
        rows = torch.arange(start, min(start + rows_per_chunk, num_nodes),
                            device=device)
        _count_chunk(rows, ptr, col, in_degree, sens, num_groups, num_hops,
                     owner, pairs_per_piece, count)
    return count.view(num_nodes, num_groups)


def _count_chunk(rows: Tensor, ptr: Tensor, col: Tensor, in_degree: Tensor,
                 sens: Tensor, num_groups: int, num_hops: int, owner: Tensor,
                 pairs_per_piece: int, count: Tensor) -> None:
    r"""Breadth-first search from every node of :obj:`rows` at once. A pair
    :math:`(r, v)` is stored as the key :math:`r N + v` (:math:`r` local to
    the chunk); :obj:`owner[key] >= 0` marks a pair seen in this chunk.
    """
    num_nodes = ptr.numel() - 1
    local = torch.arange(rows.numel(), device=rows.device)
    frontier = (local * num_nodes + rows).to(torch.int32)
    owner[frontier.long()] = 0
    _add_counts(rows, rows, sens, num_groups, count)
    reached = [frontier]
    for _ in range(num_hops):
        new_pairs = []
        for piece in _pieces(frontier, in_degree, num_nodes, pairs_per_piece):
            new_pairs.append(_expand(piece, ptr, col, in_degree, owner,
                                     rows[0], sens, num_groups, count))
        frontier = torch.cat(new_pairs) if new_pairs else frontier[:0]
        reached.append(frontier)
        if frontier.numel() == 0:
            break
    for keys in reached:  # reset the buffer for the next chunk
        owner[keys.long()] = -1


def _pieces(frontier: Tensor, in_degree: Tensor, num_nodes: int,
            pairs_per_piece: int) -> Iterator[Tensor]:
    r"""Splits a frontier into consecutive pieces whose expansion yields at
    most :obj:`pairs_per_piece` pairs plus one node's in-degree.
    """
    fanout = in_degree[frontier.long() % num_nodes]
    piece_id = (fanout.cumsum(0) - fanout) // pairs_per_piece
    sizes = torch.unique_consecutive(piece_id, return_counts=True)[1]
    yield from frontier.split(sizes.tolist())


def _expand(piece: Tensor, ptr: Tensor, col: Tensor, in_degree: Tensor,
            owner: Tensor, row_offset: Tensor, sens: Tensor, num_groups: int,
            count: Tensor) -> Tensor:
    r"""Expands the pairs of :obj:`piece` by one hop, counts the pairs never
    seen before and returns them as the next frontier.
    """
    num_nodes = ptr.numel() - 1
    piece = piece.long()
    row, node = piece // num_nodes, piece % num_nodes
    fanout = in_degree[node]
    total = int(fanout.sum())
    if total == 0:
        return piece[:0].to(torch.int32)
    first = torch.repeat_interleave(ptr[:-1][node] - (fanout.cumsum(0) -
                                                      fanout), fanout)
    nbr = col[first + torch.arange(total, device=piece.device)]
    row = torch.repeat_interleave(row, fanout)
    key = row * num_nodes + nbr
    unseen = owner[key] < 0
    key, row, nbr = key[unseen], row[unseen], nbr[unseen]
    # Deduplicate without sorting: every pair writes its position, and only
    # the one position that survives the write counts the pair.
    position = torch.arange(key.numel(), dtype=torch.int32,
                            device=key.device) + 1
    owner[key] = position
    fresh = owner[key] == position
    key, row, nbr = key[fresh], row[fresh], nbr[fresh]
    _add_counts(row + row_offset, nbr, sens, num_groups, count)
    return key.to(torch.int32)


def _add_counts(target: Tensor, member: Tensor, sens: Tensor, num_groups: int,
                count: Tensor) -> None:
    count.index_add_(0, target * num_groups + sens[member],
                     torch.ones_like(target))
