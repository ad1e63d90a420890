r"""Exact group counts within :math:`L` hops: which nodes each node reaches,
by chunked sparse products of the graph's pattern, within a memory budget
(:func:`~pyg_bemap.hop_group_counts` with :obj:`counting='exact'`)."""

import torch
from torch import Tensor

# Working memory per walk of a chunk (its bound on the nodes reached), in
# index elements: the expanded keys, the gathers that build them and their
# distinct values, about 4 (benchmarks/bench_scaling.py); 5 leaves a margin.
_ELEMENTS_PER_WALK = 5
_INT32_MAX = 2**31 - 1


def exact_counts(
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
    count = sens.new_zeros(num_nodes, num_groups, dtype=torch.long)
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


def index_dtype(num_nodes: int, num_entries: int) -> torch.dtype:
    r""":obj:`torch.int32` when every node and every entry of the pattern of
    :math:`\mathbf{A} + \mathbf{I}` has an :obj:`int32` index."""
    fits = max(num_nodes, num_entries) <= _INT32_MAX
    return torch.int32 if fits else torch.long


def _index_max(dtype: torch.dtype) -> int:
    return torch.iinfo(dtype).max


def _reach_csr(edge_index: Tensor, num_nodes: int) -> tuple[Tensor, Tensor]:
    r"""The CSR pattern :obj:`(crow, col)` of :math:`\mathbf{A} + \mathbf{I}`
    without duplicates, row :math:`i` holding the sources of the edges into
    :math:`i` and :math:`i` itself, columns sorted, in the dtype of
    :func:`index_dtype`. Built from one array of :obj:`torch.long` keys
    :math:`N \cdot \mathrm{dst} + \mathrm{src}`, sorted in place on the
    CPU: at most 17 bytes per key at the peak (26 on a GPU).
    """
    num_edges = edge_index.size(1)
    key = edge_index.new_empty(num_edges + num_nodes, dtype=torch.long)
    key[:num_edges].copy_(edge_index[1]).mul_(num_nodes)
    key[:num_edges].add_(edge_index[0])
    torch.arange(num_nodes, out=key[num_edges:]).mul_(num_nodes + 1)
    crow, col = _key_pattern(key, num_nodes, num_nodes)
    dtype = index_dtype(num_nodes, col.numel())
    return crow.to(dtype), col.to(dtype)


def _sorted_unique_(key: Tensor) -> Tensor:
    r"""Sorts :obj:`key` (owned by the caller, overwritten on the CPU) and
    returns its distinct values. On the CPU the sort runs in place through
    NumPy; elsewhere :func:`torch.unique` sorts the keys alone (measured on
    CUDA: 17 bytes per key beside the input, against 40 for
    :func:`torch.sort`, which also sorts a tensor of indices).
    """
    if key.device.type != 'cpu':
        return torch.unique(key, sorted=True)
    key.numpy().sort()
    return torch.unique_consecutive(key)


def _key_pattern(key: Tensor, rows: int, cols: int) -> tuple[Tensor, Tensor]:
    r"""The CSR pattern :obj:`(crow, col)`, in the dtype of :obj:`key`, of
    :obj:`rows` rows of :obj:`cols` columns whose entries are the distinct
    values of the keys :math:`\mathrm{cols} \cdot \mathrm{row} +
    \mathrm{column}` in :obj:`key` (owned by the caller, overwritten).
    """
    key = _sorted_unique_(key)
    bounds = torch.arange(rows + 1, dtype=key.dtype, device=key.device)
    crow = torch.searchsorted(key, bounds.mul_(cols)).to(key.dtype)
    return crow, key.remainder_(cols)


def _reach_bound(crow: Tensor, col: Tensor, num_hops: int) -> Tensor:
    r"""Walks of length :obj:`num_hops` from every row (capped at :math:`N`),
    an upper bound of the nodes reached, as :obj:`torch.float64`.
    """
    num_nodes = crow.numel() - 1
    walks = torch.ones(num_nodes, dtype=torch.float64, device=crow.device)
    for _ in range(num_hops):
        previous = walks
        # index_select takes int32 indices as they are; walks[col] would
        # first copy them to int64 (8 bytes per entry on top of the gather)
        walks = torch.segment_reduce(
            walks.index_select(0, col), 'sum', offsets=crow
        )
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
    first = crow.index_select(0, block_col)
    length = crow.index_select(0, block_col + 1).sub_(first)
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
    return _key_pattern(key, block_crow.numel() - 1, num_nodes)


def _chunk_end(total: Tensor, start: int, max_entries: int) -> int:
    r"""The end of the row range from :obj:`start` whose bounds (cumulated in
    :obj:`total`) sum to at most :obj:`max_entries`, or of one row if that
    row alone exceeds it.
    """
    offset = float(total[start - 1]) if start > 0 else 0.0
    end = int(torch.searchsorted(total, offset + max_entries, right=True))
    return max(end, start + 1)
