r"""Rules 2 and 3: group counts within :math:`L` hops and balance scores."""

import torch
from torch import Tensor
from torch_geometric.utils import remove_self_loops

from pyg_bemap.infra.checks import (
    check_choice,
    check_integer,
    check_memory_budget,
)
from pyg_bemap.infra.compat import plain_tensor
from pyg_bemap.rules.groups import graph_groups
from pyg_bemap.rules.reachability import exact_counts, index_dtype

DEFAULT_MEMORY_BUDGET = 256 * 2**20  # bytes
COUNTING_MODES = ('exact', 'walks')

_WALKS_MAX = 2**62


def check_counts(name: str, count: Tensor, source: str) -> None:
    r"""Raises a :class:`ValueError` unless :obj:`count` is a tensor of
    shape :obj:`[N, G]` holding non-negative, finite, real counts;
    :obj:`name` calls it in the message, which ends with :obj:`source`,
    where such counts come from."""
    if not isinstance(count, Tensor) or count.dim() != 2:
        raise ValueError(
            f"'{name}' must be a 2-D tensor of shape [num_nodes, num_groups] "
            f'({source})'
        )
    if count.is_complex() or (
        count.is_floating_point() and not bool(count.isfinite().all())
    ):
        raise ValueError(f"'{name}' must hold finite real counts ({source})")
    if count.numel() and bool((count < 0).any()):
        raise ValueError(f"'{name}' holds negative counts ({source})")


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
    on the CPU: :func:`~pyg_bemap.exact_counting_memory` bounds the peak on
    each device.

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
    sens, num_groups = graph_groups(edge_index, sens, num_nodes, num_groups)
    num_hops = check_integer('num_hops', num_hops)
    memory_budget = check_memory_budget(memory_budget)
    check_counting(counting)
    edge_index = plain_tensor(edge_index)
    return checked_hop_group_counts(
        edge_index, sens, num_groups, num_hops, counting, memory_budget
    )


def check_counting(counting: str) -> str:
    r"""Raises a :class:`ValueError` unless :obj:`counting` is one of
    :obj:`COUNTING_MODES`."""
    return check_choice('counting', counting, COUNTING_MODES)


def checked_hop_group_counts(
    edge_index: Tensor,
    sens: Tensor,
    num_groups: int,
    num_hops: int,
    counting: str,
    memory_budget: int,
) -> Tensor:
    r""":func:`hop_group_counts` of arguments checked already: group ids
    :obj:`sens` as :func:`~pyg_bemap.rules.groups.sensitive_groups` returns
    them, on the device of a valid :obj:`edge_index`."""
    if counting == 'walks':
        return _walk_counts(edge_index, sens, num_groups, num_hops)
    return exact_counts(edge_index, sens, num_groups, num_hops, memory_budget)


def exact_counting_memory(
    num_nodes: int,
    num_edges: int,
    num_groups: int = 2,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
    device: torch.device | str = 'cpu',
) -> int:
    r"""The most memory, in bytes, that
    :func:`~pyg_bemap.hop_group_counts` with :obj:`counting='exact'`
    allocates for a graph of :math:`N` nodes, :math:`E` edges and :math:`G`
    groups on :obj:`device`:

    .. math::
        \max\bigl(k (E + N),\ \mathrm{budget} + b (E + N)\bigr)
        + 8 N (G + 2) + 2 b (N + 1),

    with :math:`b = 4` bytes per index (:obj:`torch.int32`) when
    :math:`E + N < 2^{31}`, else :math:`b = 8`. Building the pattern of
    :math:`\mathbf{A} + \mathbf{I}` takes up to :math:`k = 17` bytes per
    entry on the CPU (the :obj:`torch.long` keys, sorted in place, and their
    distinct values) and :math:`k = 26` on a GPU (the keys, their sorted
    copy, the sort's buffer and the distinct values: 25.0 bytes measured on
    an H200); the chunked products then work within :obj:`memory_budget`
    next to that pattern. The walk bounds, their running sum and the output
    take :math:`8 N (G + 2)` bytes, the row pointers and the groups
    :math:`2 b (N + 1)`. Input conversions (an :obj:`edge_index` that is not
    :obj:`torch.long`) come on top. :obj:`benchmarks/bench_scaling.py`
    checks the bound against the measured peak: the resident set on the
    CPU, :func:`torch.cuda.max_memory_allocated` on a GPU.

    Args:
        num_nodes (int): The number of nodes :math:`N`.
        num_edges (int): The number of edges :math:`E`.
        num_groups (int, optional): The number of groups :math:`G`.
            (default: :obj:`2`)
        memory_budget (int, optional): The working-memory budget given to
            :func:`~pyg_bemap.hop_group_counts`, in bytes.
            (default: 256 MiB)
        device (torch.device or str, optional): Where the counting runs.
            (default: :obj:`'cpu'`)
    """
    entries = num_edges + num_nodes
    index_bytes = index_dtype(num_nodes, entries).itemsize
    build = (17 if torch.device(device).type == 'cpu' else 26) * entries
    products = memory_budget + index_bytes * entries
    per_node = 8 * num_nodes * (num_groups + 2)
    return max(build, products) + per_node + 2 * index_bytes * (num_nodes + 1)


def _walk_counts(
    edge_index: Tensor, sens: Tensor, num_groups: int, num_hops: int
) -> Tensor:
    src, dst = remove_self_loops(edge_index)[0].long()
    walks = torch.nn.functional.one_hot(sens, num_groups)
    total = walks.clone()
    max_in_degree = int(torch.bincount(dst).max()) if dst.numel() else 0
    for _ in range(num_hops):
        if int(total.max()) > _WALKS_MAX // (max_in_degree + 1):
            raise ValueError(
                f'Walk counts over {num_hops} hops exceed what torch.long '
                f"holds on this graph; use counting='exact' (which stops "
                f'once no new node is reached) or fewer hops'
            )
        walks = torch.zeros_like(walks).index_add_(0, dst, walks[src])
        total += walks
    return total
