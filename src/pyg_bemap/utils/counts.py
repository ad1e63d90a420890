r"""Rules 2 and 3: group counts within :math:`L` hops and balance scores."""

import warnings

import torch
from torch import Tensor

from pyg_bemap.utils.groups import (
    check_edge_index,
    check_same_device,
    sensitive_groups,
)

DEFAULT_MEMORY_BUDGET = 256 * 2**20  # bytes
COUNTING_MODES = ('exact', 'walks')

# Bytes of working memory per reached (node, node) pair of a chunk, counted by
# its walk bound: the product (int64 indices, float32 values, and the sort of
# the COO product), the int64 row ids and group keys of the count. Measured at
# most 48 (benchmarks/bench_scaling.py); 64 leaves a margin.
_BYTES_PER_ENTRY = 64
# torch's MKL-based CSR @ CSR product on the CPU (torch 2.13) never frees about
# 8 bytes per output entry. That memory counts against the budget: the fast
# CSR product runs while the budget has room for it, the COO product after.
_CSR_UNFREED_BYTES = 8
# Tests switch this off to exercise the portable COO product.
_USE_CSR_PRODUCT = True


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
    over chunks of target nodes. A chunk's rows are chosen so that their
    walk counts (an upper bound of the nodes they reach) times 64 bytes, the
    working memory per reached pair with a margin, stay within
    :obj:`memory_budget`; a single node whose bound alone exceeds the budget
    forms a chunk of its own. On the CPU, torch's MKL-based CSR product never
    frees about 8 bytes per entry it outputs (torch 2.13); that memory is
    counted against the budget, and once it fills three quarters of it, the
    remaining chunks use the slower portable COO product, which frees
    everything. The budget leaves out the graph's CSRs, the walk bounds and
    the output, which live for the whole call, and the sort that builds the
    CSRs (about 56 bytes per edge). Measured peaks above the starting
    resident memory (:obj:`benchmarks/bench_scaling.py`, default 256 MiB
    budget): 247 MiB for 1M edges, 384 MiB for 4M edges and 910 MiB for 16M
    edges.

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
        raise ValueError(
            f"'num_hops' must be a non-negative integer (got {num_hops})"
        )
    if counting not in COUNTING_MODES:
        raise ValueError(
            f"'counting' must be one of {COUNTING_MODES} (got '{counting}')"
        )
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
        raise ValueError(
            "'count' must be a 2-D tensor of shape [num_nodes, num_groups]"
        )
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


def _walk_counts(
    ptr: Tensor, col: Tensor, sens: Tensor, num_groups: int, num_hops: int
) -> Tensor:
    num_nodes = ptr.numel() - 1
    dst = torch.repeat_interleave(
        torch.arange(num_nodes, device=ptr.device), ptr.diff()
    )
    walks = torch.nn.functional.one_hot(sens, num_groups)
    total = walks.clone()
    for _ in range(num_hops):
        walks = torch.zeros_like(walks).index_add_(0, dst, walks[col])
        total += walks
    return total


def _exact_counts(
    ptr: Tensor,
    col: Tensor,
    sens: Tensor,
    num_groups: int,
    num_hops: int,
    memory_budget: int,
) -> Tensor:
    r"""Reachability by sparse products: the non-zero pattern of row
    :math:`i` of :math:`(\mathbf{A} + \mathbf{I})^L` (with
    :math:`A_{ij} = 1` for every edge :math:`j \to i`) is exactly the set of
    nodes within :math:`L` hops of :math:`i`. Rows are processed in chunks
    whose product is bounded by walk counts, which bound the distinct nodes
    reached from above.
    """
    num_nodes = ptr.numel() - 1
    count = torch.zeros(
        num_nodes, num_groups, dtype=torch.long, device=ptr.device
    )
    if num_hops == 0 or num_nodes == 0:
        return count + torch.nn.functional.one_hot(sens, num_groups)
    with warnings.catch_warnings():  # "sparse CSR support is in beta"
        warnings.simplefilter('ignore', UserWarning)
        return _chunked_reach_counts(
            ptr, col, sens, num_groups, num_hops, memory_budget, count
        )


def _chunked_reach_counts(
    ptr: Tensor,
    col: Tensor,
    sens: Tensor,
    num_groups: int,
    num_hops: int,
    memory_budget: int,
    count: Tensor,
) -> Tensor:
    reach = _reach_matrix(ptr, col)
    bound = _reach_bound(reach, num_hops)
    total = bound.cumsum(0)
    leaks = _csr_product_leaks(reach)
    unfreed, start = 0, 0
    while start < bound.numel():
        # (a row bigger than the budget may overdraw it: keep working)
        room = max(memory_budget - unfreed, memory_budget // 8)
        csr = _csr_product_available(reach) and (
            not leaks or room >= memory_budget // 4
        )
        per_entry = _BYTES_PER_ENTRY + (
            _CSR_UNFREED_BYTES if csr and leaks else 0
        )
        end = _chunk_end(total, start, max(1, room // per_entry))
        block = _row_block(reach, start, end)
        for _ in range(num_hops - 1):
            block = _product(block, reach, csr)
            if csr and leaks:
                unfreed += _CSR_UNFREED_BYTES * block.values().numel()
        row = torch.repeat_interleave(
            torch.arange(end - start, device=ptr.device),
            block.crow_indices().diff(),
        )
        member = sens[block.col_indices()]
        count[start:end] = torch.bincount(
            row * num_groups + member, minlength=(end - start) * num_groups
        ).view(-1, num_groups)
        start = end
    return count


def _csr_product_available(reach: Tensor) -> bool:
    return _USE_CSR_PRODUCT and (
        reach.device.type != 'cpu' or torch.backends.mkl.is_available()
    )


def _csr_product_leaks(reach: Tensor) -> bool:
    return reach.device.type == 'cpu'


def _product(block: Tensor, reach: Tensor, csr: bool) -> Tensor:
    r"""The non-zero pattern of :obj:`block @ reach` as a CSR matrix of
    ones, by the CSR product (MKL on the CPU) or the portable COO product.
    """
    if csr:
        out = block @ reach
    else:
        out = torch.sparse.mm(block.to_sparse_coo(), reach.to_sparse_coo())
        out = out.coalesce().to_sparse_csr()
    return torch.sparse_csr_tensor(
        out.crow_indices(),
        out.col_indices(),
        torch.ones_like(out.values()),
        out.shape,
    )


def _reach_matrix(ptr: Tensor, col: Tensor) -> Tensor:
    r"""The CSR matrix :math:`\mathbf{A} + \mathbf{I}` without duplicates."""
    num_nodes = ptr.numel() - 1
    row = torch.repeat_interleave(
        torch.arange(num_nodes, device=ptr.device), ptr.diff()
    )
    loop = torch.arange(num_nodes, device=ptr.device)
    key = torch.cat([row, loop]) * num_nodes + torch.cat([col, loop])
    key = torch.unique(key)  # sorted by row, then column
    row, col = key // num_nodes, key % num_nodes
    crow = torch.zeros(num_nodes + 1, dtype=torch.long, device=ptr.device)
    crow[1:] = torch.bincount(row, minlength=num_nodes).cumsum(0)
    return torch.sparse_csr_tensor(
        crow,
        col,
        torch.ones(col.numel(), device=ptr.device),
        (num_nodes, num_nodes),
    )


def _reach_bound(reach: Tensor, num_hops: int) -> Tensor:
    r"""Walks of length :obj:`num_hops` from every row (capped at :math:`N`),
    an upper bound of the nodes reached.
    """
    num_nodes = reach.size(0)
    walks = torch.ones(num_nodes, 1, dtype=torch.float64, device=reach.device)
    reach64 = torch.sparse_csr_tensor(
        reach.crow_indices(),
        reach.col_indices(),
        reach.values().double(),
        reach.shape,
    )
    for _ in range(num_hops):
        walks = (reach64 @ walks).clamp(max=num_nodes)
    return walks.view(-1)


def _chunk_end(total: Tensor, start: int, max_entries: int) -> int:
    r"""The end of the row range from :obj:`start` whose bounds (cumulated in
    :obj:`total`) sum to at most :obj:`max_entries`, or of one row if that
    row alone exceeds it.
    """
    offset = float(total[start - 1]) if start > 0 else 0.0
    end = int(torch.searchsorted(total, offset + max_entries, right=True))
    return max(end, start + 1)


def _row_block(matrix: Tensor, start: int, end: int) -> Tensor:
    crow = matrix.crow_indices()
    lo, hi = int(crow[start]), int(crow[end])
    return torch.sparse_csr_tensor(
        crow[start : end + 1] - lo,
        matrix.col_indices()[lo:hi],
        matrix.values()[lo:hi],
        (end - start, matrix.size(1)),
    )
