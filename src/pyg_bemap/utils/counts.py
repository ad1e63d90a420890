r"""Rules 2 and 3: group counts within :math:`L` hops and balance scores."""

import torch
from torch import Tensor

from pyg_bemap.utils.checks import (
    check_integer,
    check_memory_budget,
)
from pyg_bemap.utils.groups import (
    check_edge_index,
    check_same_device,
    sensitive_groups,
)

DEFAULT_MEMORY_BUDGET = 256 * 2**20  # bytes
COUNTING_MODES = ('exact', 'walks')

# Working memory per walk of a chunk (its bound on the nodes reached), in
# index elements: the expanded keys, the gathers that build them and their
# distinct values, about 4 (benchmarks/bench_scaling.py); 5 leaves a margin.
_ELEMENTS_PER_WALK = 5
_INT32_MAX = 2**31 - 1
_WALKS_MAX = 2**62


def in_neighbour_csr(
    edge_index: Tensor, num_nodes: int
) -> tuple[Tensor, Tensor]:
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
    num_groups: int | None = None,
    num_hops: int = 2,
    num_nodes: int | None = None,
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
    :obj:`edge_index[1]`). The reached sets are the non-zero patterns of the
    rows of :math:`(\mathbf{A} + \mathbf{I})^L`, formed by sparse products
    over chunks of target nodes: each entry of a chunk's rows expands into a
    row of :math:`\mathbf{A} + \mathbf{I}` and one sort makes the walks of a
    row distinct. A chunk's rows are chosen so that their walk counts (an
    upper bound of the nodes they reach) times 20 bytes (40 on graphs with
    :math:`2^{31}` entries or more), the working memory per walk with a
    margin, stay within :obj:`memory_budget`; a single node whose bound
    alone exceeds the budget forms a chunk of its own. Beyond the budget,
    the call holds the pattern of :math:`\mathbf{A} + \mathbf{I}`, the walk
    bounds and the output, and builds that pattern with one sort, in place
    on the CPU: :func:`~pyg_bemap.exact_counting_memory` bounds the peak.

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
            counting, in bytes. (default: 256 MiB)

    Returns:
        A :obj:`torch.long` tensor of shape :obj:`[N, G]`.
    """
    if num_nodes is None:
        num_nodes = sens.numel() if isinstance(sens, Tensor) else None
    num_nodes = check_edge_index(edge_index, num_nodes)
    sens, num_groups = sensitive_groups(sens, num_nodes, num_groups)
    check_same_device(edge_index=edge_index, sens=sens)
    check_integer('num_hops', num_hops)
    check_memory_budget(memory_budget)
    check_counting(counting)
    return checked_hop_group_counts(
        edge_index, sens, num_groups, num_hops, counting, memory_budget
    )


def check_counting(counting: str) -> str:
    r"""Raises a :class:`ValueError` unless :obj:`counting` is one of
    :obj:`COUNTING_MODES`."""
    if counting not in COUNTING_MODES:
        raise ValueError(
            f"'counting' must be one of {COUNTING_MODES} (got '{counting}')"
        )
    return counting


def checked_hop_group_counts(
    edge_index: Tensor,
    sens: Tensor,
    num_groups: int,
    num_hops: int,
    counting: str,
    memory_budget: int,
) -> Tensor:
    r""":func:`hop_group_counts` of arguments checked already: group ids
    :obj:`sens` as :func:`~pyg_bemap.utils.groups.sensitive_groups` returns
    them, on the device of a valid :obj:`edge_index`."""
    num_nodes = sens.numel()
    if counting == 'walks':
        ptr, col = in_neighbour_csr(edge_index, num_nodes)
        return _walk_counts(ptr, col, sens, num_groups, num_hops)
    return _exact_counts(edge_index, sens, num_groups, num_hops, memory_budget)


def exact_counting_memory(
    num_nodes: int,
    num_edges: int,
    num_groups: int = 2,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
) -> int:
    r"""The most memory, in bytes, that
    :func:`~pyg_bemap.hop_group_counts` with :obj:`counting='exact'`
    allocates for a graph of :math:`N` nodes, :math:`E` edges and :math:`G`
    groups:

    .. math::
        \max\bigl(17 (E + N),\ \mathrm{budget} + b (E + N)\bigr)
        + 8 N (G + 2) + 2 b (N + 1),

    with :math:`b = 4` bytes per index (:obj:`torch.int32`) when
    :math:`E + N < 2^{31}`, else :math:`b = 8`. Building the pattern of
    :math:`\mathbf{A} + \mathbf{I}` takes up to 17 bytes per entry (the
    sorted :obj:`torch.long` keys and their distinct values); the chunked
    products then work within :obj:`memory_budget` next to that pattern.
    The walk bounds, their running sum and the output take
    :math:`8 N (G + 2)` bytes, the row pointers and the groups
    :math:`2 b (N + 1)`. Input conversions (an :obj:`edge_index` that is not
    :obj:`torch.long`) come on top. :obj:`benchmarks/bench_scaling.py`
    checks the bound against the measured peak.

    Args:
        num_nodes (int): The number of nodes :math:`N`.
        num_edges (int): The number of edges :math:`E`.
        num_groups (int, optional): The number of groups :math:`G`.
            (default: :obj:`2`)
        memory_budget (int, optional): The working-memory budget given to
            :func:`~pyg_bemap.hop_group_counts`, in bytes.
            (default: 256 MiB)
    """
    entries = num_edges + num_nodes
    index_bytes = 4 if _index_dtype(num_nodes, entries) == torch.int32 else 8
    build = 17 * entries
    products = memory_budget + index_bytes * entries
    per_node = 8 * num_nodes * (num_groups + 2) + 2 * index_bytes * (
        num_nodes + 1
    )
    return max(build, products) + per_node


def _walk_counts(
    ptr: Tensor, col: Tensor, sens: Tensor, num_groups: int, num_hops: int
) -> Tensor:
    num_nodes = ptr.numel() - 1
    dst = torch.repeat_interleave(
        torch.arange(num_nodes, device=ptr.device), ptr.diff()
    )
    walks = torch.nn.functional.one_hot(sens, num_groups)
    total = walks.clone()
    max_in_degree = int(ptr.diff().max()) if num_nodes else 0
    for _ in range(num_hops):
        if int(total.max()) > _WALKS_MAX // max(max_in_degree + 1, 1):
            raise ValueError(
                f'Walk counts over {num_hops} hops exceed what torch.long '
                f"holds on this graph; use counting='exact' (which stops "
                f'once no new node is reached) or fewer hops'
            )
        walks = torch.zeros_like(walks).index_add_(0, dst, walks[col])
        total += walks
    return total


def _exact_counts(
    edge_index: Tensor,
    sens: Tensor,
    num_groups: int,
    num_hops: int,
    memory_budget: int,
) -> Tensor:
    r"""Reachability by sparse products: the non-zero pattern of row
    :math:`i` of :math:`(\mathbf{A} + \mathbf{I})^L` (with
    :math:`A_{ij} = 1` for every edge :math:`j \to i`) is exactly the set of
    nodes within :math:`L` hops of :math:`i`. Rows are processed in chunks
    whose products are bounded by walk counts, which bound the distinct nodes
    reached from above. Indices are :obj:`torch.int32` when the graph allows
    it (half the memory traffic of :obj:`torch.long`), with chunks of rows
    small enough for their keys to fit.
    """
    num_nodes = sens.numel()
    if num_hops == 0 or num_nodes == 0:
        return torch.nn.functional.one_hot(sens, num_groups)
    crow, col = _reach_csr(edge_index, num_nodes)
    total = _reach_bound(crow, col, num_hops).cumsum(0)
    walk_bytes = _ELEMENTS_PER_WALK * col.element_size()
    max_walks = max(1, memory_budget // walk_bytes)
    # keys N * row + column of a chunk's rows must fit the index dtype
    max_rows = _index_max(col.dtype) // num_nodes
    group = sens.to(col.dtype)
    count = torch.zeros(
        num_nodes, num_groups, dtype=torch.long, device=sens.device
    )
    start = 0
    while start < num_nodes:
        end = min(_chunk_end(total, start, max_walks), start + max_rows)
        lo, hi = int(crow[start]), int(crow[end])
        block_crow, block_col = crow[start : end + 1] - lo, col[lo:hi]
        for _ in range(num_hops - 1):
            reached = block_col.numel()
            block_crow, block_col = _product_pattern(
                block_crow, block_col, crow, col
            )
            if block_col.numel() == reached:
                break  # no new node: more hops reach nothing more
        row = torch.repeat_interleave(block_crow.diff())
        key = row.mul_(num_groups).add_(group.index_select(0, block_col))
        count[start:end] = torch.bincount(
            key, minlength=(end - start) * num_groups
        ).view(-1, num_groups)
        start = end
    return count


def _index_dtype(num_nodes: int, num_entries: int) -> torch.dtype:
    r""":obj:`torch.int32` when every node and every entry of the pattern of
    :math:`\mathbf{A} + \mathbf{I}` has an :obj:`int32` index."""
    if max(num_nodes, num_entries) <= _INT32_MAX:
        return torch.int32
    return torch.long


def _index_max(dtype: torch.dtype) -> int:
    return torch.iinfo(dtype).max


def _reach_csr(edge_index: Tensor, num_nodes: int) -> tuple[Tensor, Tensor]:
    r"""The CSR pattern :obj:`(crow, col)` of :math:`\mathbf{A} + \mathbf{I}`
    without duplicates, row :math:`i` holding the sources of the edges into
    :math:`i` and :math:`i` itself, columns sorted, in the dtype of
    :func:`_index_dtype`. Built from one array of :obj:`torch.long` keys
    :math:`N \cdot \mathrm{dst} + \mathrm{src}`, sorted in place: at most
    17 bytes per key at the peak.
    """
    num_edges = edge_index.size(1)
    key = edge_index.new_empty(num_edges + num_nodes, dtype=torch.long)
    key[:num_edges].copy_(edge_index[1]).mul_(num_nodes)
    key[:num_edges].add_(edge_index[0])
    torch.arange(num_nodes, out=key[num_edges:]).mul_(num_nodes + 1)
    key = _sorted_unique_(key)
    dtype = _index_dtype(num_nodes, key.numel())
    bounds = torch.arange(num_nodes + 1, device=key.device) * num_nodes
    crow = torch.searchsorted(key, bounds).to(dtype)
    return crow, key.remainder_(num_nodes).to(dtype)


def _sorted_unique_(key: Tensor) -> Tensor:
    r"""Sorts :obj:`key` (owned by the caller, overwritten) and returns its
    distinct values. On the CPU the sort runs in place through NumPy, since
    :func:`torch.sort` always allocates a tensor of indices besides the
    values.
    """
    if key.device.type == 'cpu':
        key.numpy().sort()
    else:
        key = torch.sort(key).values
    return torch.unique_consecutive(key)


def _reach_bound(crow: Tensor, col: Tensor, num_hops: int) -> Tensor:
    r"""Walks of length :obj:`num_hops` from every row (capped at :math:`N`),
    an upper bound of the nodes reached, as :obj:`torch.float64`.
    """
    num_nodes = crow.numel() - 1
    walks = torch.ones(num_nodes, dtype=torch.float64, device=crow.device)
    for _ in range(num_hops):
        previous = walks
        walks = torch.segment_reduce(walks[col], 'sum', offsets=crow)
        walks = walks.clamp_(max=num_nodes)
        if torch.equal(walks, previous):
            break  # every node's bound is final
    return walks


def _product_pattern(
    block_crow: Tensor, block_col: Tensor, crow: Tensor, col: Tensor
) -> tuple[Tensor, Tensor]:
    r"""The CSR pattern of the product of two patterns, :obj:`block` times
    the :math:`N \times N` matrix :obj:`(crow, col)`: every entry
    :math:`(r, k)` of the block expands into row :math:`k` of the matrix
    (one walk step), and the walks of each row are made distinct by one
    sort of the keys :math:`N r + j` (in the dtype of :obj:`col`, which the
    caller keeps large enough for them). About 4 index elements per walk at
    the peak.
    """
    num_nodes = crow.numel() - 1
    first = crow[block_col]
    length = crow[block_col + 1] - first
    entry = torch.repeat_interleave(length)  # the block entry of each walk
    # position of each walk within its matrix row, then its column
    index = torch.arange(entry.numel(), dtype=col.dtype, device=col.device)
    offset = first - (length.cumsum(0, dtype=col.dtype) - length)
    index.add_(offset.index_select(0, entry))
    key = col.index_select(0, index)
    del index
    row = torch.repeat_interleave(block_crow.diff())
    key.add_((row * num_nodes).index_select(0, entry))
    del entry
    key = _sorted_unique_(key)
    bounds = torch.arange(
        block_crow.numel(), dtype=key.dtype, device=key.device
    )
    crow_out = torch.searchsorted(key, bounds * num_nodes)
    return crow_out.to(key.dtype), key.remainder_(num_nodes)


def _chunk_end(total: Tensor, start: int, max_entries: int) -> int:
    r"""The end of the row range from :obj:`start` whose bounds (cumulated in
    :obj:`total`) sum to at most :obj:`max_entries`, or of one row if that
    row alone exceeds it.
    """
    offset = float(total[start - 1]) if start > 0 else 0.0
    end = int(torch.searchsorted(total, offset + max_entries, right=True))
    return max(end, start + 1)
