r"""Rule 4: fair neighbourhoods, drawn by weighted sampling without
replacement inside every (target node, neighbour group) segment.

The work splits in three stages, so that a resample only does the random part:

1. :func:`group_edges` (once per graph): sorts the non-self-loop edges by
   target node and group of the source node.
2. :func:`sampling_plan` (once per graph and setting): the quota of every
   segment (:func:`fair_quotas`), the edges always kept, and the edges of the
   segments that must be sampled, laid out by segment size. On the CPU,
   segments of equal size form one dense block (no padding); blocks of few
   rows are left to one segmented sort (the "tail"), which costs less than a
   sort call per small block. On other devices every segment is in the
   tail: one segmented sort is one kernel there, where a sort per block
   would be one launch each.
3. :func:`draw_edge_mask` (every training pass): one random key per sampled
   edge, a row-wise sort of every block (of words that pack a key above its
   slot, so no index array is sorted along), one segmented sort of the
   tail, and a mask. Its size is fixed by the plan and nothing reads a
   value of the device's tensors, so a GPU runs it without a host
   synchronisation. On large graphs on the CPU the keys are drawn in
   chunks and the rows sorted in pieces on torch's threads
   (``infra/threads.py``).
   :func:`draw_seeded_edge_mask` draws the keys from a generator seeded
   with one integer, so that a sample can be drawn again from its seed
   alone.
"""

import sys
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor

from pyg_bemap.infra.threads import SEED_RANGE, sort_rows, uniform
from pyg_bemap.rules.quotas import fair_quotas, neighbour_weights

# Blocks with fewer rows go to the tail.
_MIN_BLOCK_ROWS = 16
# A sort word holds a key's bits above a slot of 32 bits; it is built as
# two int32 halves, which memory holds low half first on little-endian
# machines (step 1 of a slice) and high half first on others (step -1).
_SLOT_MASK = 2**32 - 1
_LOW_HALF_FIRST = 1 if sys.byteorder == 'little' else -1
# Slots are int32 there: at most 2**31 - 1 sampled edges.
_MAX_SAMPLED = 2**31 - 1


class EdgeGrouping(NamedTuple):
    r"""Non-self-loop edges sorted by (target node, group of the source)."""

    perm: Tensor  #: [E'] ids of the input edges, in segment order.
    segment: Tensor  #: [E'] segment key `target * G + group` of each.
    neighbour_count: Tensor  #: [N, G] neighbour entries per group.
    out_degree: Tensor  #: [N] non-self-loop edges leaving each node.


class SamplingPlan(NamedTuple):
    r"""Everything a resample needs that does not change between passes."""

    num_edges: int
    num_kept: int  #: edges every sample keeps: its size, fixed by the plan.
    fixed_mask: Tensor  #: [E] edges kept in every sample.
    edge_id: Tensor  #: [S] input-edge ids of the sampled segments' edges.
    key_scale: Tensor | None  #: [S] -1 / weight, None for uniform.
    keep: Tensor  #: [K] the row-wise sorted slots that are kept.
    blocks: list[tuple[int, int, int]]  #: (offset, rows, size) per block.
    tail_slot: Tensor  #: [T] the slots of blocks with few rows.
    tail_segment: Tensor  #: [T] their segments, non-decreasing.


def group_edges(
    edge_index: Tensor, sens: Tensor, num_groups: int
) -> EdgeGrouping:
    r"""Sorts the non-self-loop edges by target node and source group."""
    num_nodes = sens.numel()
    src, dst = edge_index[0].long(), edge_index[1].long()
    edge_id = (src != dst).nonzero().view(-1)
    src, dst = src[edge_id], dst[edge_id]
    segment = dst * num_groups + sens[src]
    segment, order = torch.sort(segment, stable=True)
    neighbour_count = torch.bincount(
        segment, minlength=num_nodes * num_groups
    ).view(num_nodes, num_groups)
    out_degree = torch.bincount(src, minlength=num_nodes)
    return EdgeGrouping(edge_id[order], segment, neighbour_count, out_degree)


def sampling_plan(
    edge_index: Tensor,
    grouping: EdgeGrouping,
    sens: Tensor,
    balance: Tensor,
    beta: float,
    min_keep: int,
    strategy: str,
) -> SamplingPlan:
    r"""Precomputes the fixed part of every resample (see module docs)."""
    quota = fair_quotas(grouping.neighbour_count, sens, beta, min_keep)
    seg_quota = quota.view(-1)[grouping.segment]
    seg_size = grouping.neighbour_count.view(-1)[grouping.segment]
    fixed_mask = torch.zeros(
        edge_index.size(1), dtype=torch.bool, device=edge_index.device
    )
    fixed_mask[grouping.perm[seg_quota == seg_size]] = True

    partial = (seg_quota > 0) & (seg_quota < seg_size)
    segment, edge_id = grouping.segment[partial], grouping.perm[partial]
    if edge_id.numel() > _MAX_SAMPLED:
        raise ValueError(
            f'{edge_id.numel():,} edges lie in neighbourhoods that must be '
            f'sampled; a sampler handles at most {_MAX_SAMPLED:,}: split '
            f'the graph, e.g. with a NeighborLoader'
        )
    size, quota_of = seg_size[partial], seg_quota[partial]
    # Lay segments out by size: segments of one size form a dense block.
    order = torch.sort(
        size * (segment.max() + 1 if segment.numel() else 1) + segment,
        stable=True,
    )[1]
    segment, edge_id = segment[order], edge_id[order]
    size, quota_of = size[order], quota_of[order]
    slot = torch.arange(segment.numel(), device=segment.device)
    is_start = torch.ones_like(segment, dtype=torch.bool)
    is_start[1:] = segment[1:] != segment[:-1]
    start = torch.cummax(torch.where(is_start, slot, 0), 0).values
    keep = ((slot - start) < quota_of).nonzero().view(-1)
    blocks = _blocks(size) if _sorts_in_blocks(segment.device) else []
    in_tail = torch.ones_like(is_start)
    for offset, rows, size_ in blocks:
        in_tail[offset : offset + rows * size_] = False
    tail_slot = in_tail.nonzero().view(-1)
    tail_segment = is_start.cumsum(0).index_select(0, tail_slot)

    weight = neighbour_weights(strategy, balance, grouping.out_degree)
    key_scale = None
    if weight is not None:
        key_scale = -1.0 / weight[edge_index[0, edge_id].long()].float()
    return SamplingPlan(
        edge_index.size(1),
        int(fixed_mask.sum()) + keep.numel(),
        fixed_mask,
        edge_id,
        key_scale,
        keep,
        blocks,
        tail_slot,
        tail_segment,
    )


def _sorts_in_blocks(device: torch.device) -> bool:
    r"""Whether a plan on :obj:`device` sorts segments of equal size as
    blocks: on the CPU, where NumPy's row sorts are faster; not elsewhere,
    where the one segmented sort is one kernel and a sort per block would
    be one launch each."""
    return device.type == 'cpu'


def _blocks(size: Tensor) -> list[tuple[int, int, int]]:
    r"""The (offset, rows, size) of every run of segments of one size
    with at least :obj:`_MIN_BLOCK_ROWS` rows."""
    sizes, counts = torch.unique_consecutive(size, return_counts=True)
    offsets = torch.cumsum(counts, 0) - counts
    return [
        (offset, count // n, n)
        for offset, count, n in zip(
            offsets.tolist(), counts.tolist(), sizes.tolist()
        )
        if count // n >= _MIN_BLOCK_ROWS
    ]


def draw_edge_mask(
    plan: SamplingPlan, generator: torch.Generator | None = None
) -> Tensor:
    r"""Draws one fair neighbourhood for every node and returns the mask of
    kept input edges.

    Inside a segment, the :math:`k` kept edges are those with the smallest
    keys :math:`-\log(U_j) / w_j` (Efraimidis-Spirakis), which is successive
    sampling without replacement with probabilities proportional to
    :math:`w_j`, as :obj:`numpy.random.choice(replace=False, p=w/w.sum())`.
    Keys are float32; ties (probability about :math:`2^{-24}` per pair) fall
    to the order of the input edges. Beyond :math:`2^{22}` keys on the CPU,
    every chunk of :math:`2^{22}` keys comes from its own generator seeded
    from :obj:`generator` (``infra/threads.py``): the same generator state
    gives the same mask whatever the number of threads.
    """
    device = plan.fixed_mask.device
    key = uniform(plan.edge_id.numel(), generator, device)
    if plan.key_scale is not None:
        key = key.log_().mul_(plan.key_scale)
    slot = _order_in_segments(plan, key).index_select(0, plan.keep)
    kept = plan.edge_id.index_select(0, slot.bitwise_and_(_SLOT_MASK))
    return plan.fixed_mask.clone().index_fill_(0, kept, True)


def _order_in_segments(plan: SamplingPlan, key: Tensor) -> Tensor:
    r"""At every slot :math:`p`, the slot of the :math:`r`-th smallest key
    of :math:`p`'s segment, :math:`r` being :math:`p`'s place in its
    segment, in the low 32 bits (ties: the smaller slot first).

    A block is sorted row by row as 64-bit words holding a key's bits (the
    bits of non-negative floats order as the floats) above its slot: the
    words are distinct, so every sort gives the same order, and no index
    array is carried along.
    """
    if not plan.blocks:  # small graphs: every segment in the tail
        return _segmented_argsort(key, plan.tail_segment)
    slot = torch.arange(key.numel(), dtype=torch.int32, device=key.device)
    halves = (slot, key.view(torch.int32))  # (low, high) 32 bits
    words = torch.stack(halves[::_LOW_HALF_FIRST], dim=1).view(torch.long)
    words = words.view(-1)
    sort_rows(
        [
            words[offset : offset + rows * size].view(rows, size)
            for offset, rows, size in plan.blocks
        ]
    )
    if plan.tail_slot.numel():
        order = _segmented_argsort(
            key.index_select(0, plan.tail_slot), plan.tail_segment
        )
        words.index_copy_(0, plan.tail_slot, plan.tail_slot[order])
    return words


def draw_seed(generator: torch.Generator | None = None) -> int:
    r"""Draws one seed in :math:`[0, 2^{62})` from :obj:`generator`
    (default: torch's default CPU generator)."""
    device = generator.device if generator is not None else 'cpu'
    seed = torch.randint(SEED_RANGE, (1,), generator=generator, device=device)
    return int(seed.item())


def draw_seeded_edge_mask(plan: SamplingPlan, seed: int) -> Tensor:
    r""":func:`draw_edge_mask` with keys from a generator seeded with
    :obj:`seed` on the plan's device: the same seed gives the same mask.

    While a CUDA graph is captured, the keys come from the device's default
    generator instead (:obj:`seed` is not used): a replay runs the captured
    kernels without Python, and only that generator, which every replay
    advances, gives each replay new keys (a generator seeded here would give
    every replay the keys of the capture). Replays are then reproducible
    from :func:`torch.cuda.manual_seed`."""
    device = plan.fixed_mask.device
    if device.type == 'cuda' and torch.cuda.is_current_stream_capturing():
        return draw_edge_mask(plan)
    generator = torch.Generator(device=device)
    return draw_edge_mask(plan, generator.manual_seed(seed))


def _segmented_argsort(key: Tensor, segment: Tensor) -> Tensor:
    r"""The order that sorts non-negative float32 :obj:`key` inside every
    run of equal, non-decreasing :obj:`segment`: one sort of
    :math:`2^{32} \cdot \mathrm{segment} + \mathrm{bits}(\mathrm{key})`
    (the bits of non-negative floats order as the floats). On the CPU,
    NumPy's stable sort, which uses the runs the segments already form.
    """
    combined = (segment << 32) | key.view(torch.int32).long()
    if combined.device.type == 'cpu':
        return torch.from_numpy(combined.numpy().argsort(kind='stable'))
    return combined.argsort(stable=True)


def kept_positions(mask: Tensor, num_kept: int) -> Tensor:
    r"""The positions where :obj:`mask` is :obj:`True`, known to be
    :obj:`num_kept`: on the CPU by NumPy, whose compaction is about twice
    as fast as torch's; elsewhere a fixed-size output, so no host
    synchronisation."""
    if mask.device.type == 'cpu':
        return torch.from_numpy(np.flatnonzero(mask.numpy()))
    return torch.nonzero_static(mask, size=num_kept).view(-1)
