r"""Rule 4: fair neighbourhoods, drawn by weighted sampling without
replacement inside every (target node, neighbour group) segment.

The work splits in three stages, so that a resample only does the random part:

1. :func:`group_edges` (once per graph): sorts the non-self-loop edges by
   target node and group of the source node.
2. :func:`sampling_plan` (once per graph and setting): the quota of every
   segment (:func:`fair_quotas`), the edges always kept, and the "slots" of
   the edges of the segments that must be sampled: segments sit in rows of
   blocks, one block per row width, and the rest in one segmented sort (the
   "tail"). On the CPU a block holds segments of one size with at least
   :obj:`_MIN_BLOCK_ROWS` rows (no padding; NumPy sorts the rows); on other
   devices, every segment of up to :obj:`_MAX_ROW_WIDTH` edges sits in the
   block of the next power of two, padded with slots whose keys are
   :math:`+\infty`: at most a dozen blocks, whose rows torch sorts in
   on-chip memory (on an H200 at 16M edges, a pass as fast as with one
   segmented sort of every key, and with a quarter of the kernels of
   blocks of exact sizes).
3. :func:`draw_edge_mask` (every training pass): one random key per slot, a
   row-wise sort of every block (on the CPU of words that pack a key above
   its slot, so no index array is sorted along; elsewhere of the keys
   alone, whose places in a row give the slots), one segmented sort of the
   tail, and a mask. Its size is fixed by the plan and nothing reads a
   value of the device's tensors, so a GPU runs it without a host
   synchronisation (and :class:`~pyg_bemap.sampler.GraphSampler` replays
   it from a CUDA graph). On large graphs on the CPU the keys are drawn in
   chunks and the rows sorted in pieces on torch's threads
   (``infra/threads.py``).
"""

import sys
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor
from torch_geometric.utils import index_to_mask

from pyg_bemap.infra.threads import SEED_RANGE, sort_rows, uniform
from pyg_bemap.rules.quotas import fair_quotas, neighbour_weights

# On the CPU, blocks with fewer rows go to the tail.
_MIN_BLOCK_ROWS = 16
# Elsewhere, longer segments go to the tail: torch sorts rows of up to 4096
# entries in one kernel, in on-chip memory.
_MAX_ROW_WIDTH = 4096
# A sort word holds a key's bits above a slot of 32 bits; it is built as
# two int32 halves, which memory holds low half first on little-endian
# machines (step 1 of a slice) and high half first on others (step -1).
_SLOT_MASK = 2**32 - 1
_LOW_HALF_FIRST = 1 if sys.byteorder == 'little' else -1
# Slots are int32 there: at most 2**31 - 1 slots.
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
    edge_id: Tensor  #: [S] input-edge id of every slot (padding: 0).
    key_scale: Tensor | None  #: [S] -1 / weight, -inf for padding.
    keep: Tensor  #: [K] the slots kept once every segment is sorted.
    blocks: list[tuple[int, int, int]]  #: (offset, rows, width) per block.
    tail_slot: Tensor  #: [T] the slots of the segments in no block.
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
    fixed = grouping.perm[seg_quota == seg_size]
    fixed_mask = index_to_mask(fixed, size=edge_index.size(1))

    # The edges of the segments to sample, segments by size (so that
    # segments of one row width lie together), the edges of a segment in
    # input order: the segments are already in order, edges in input order
    # inside each, so a stable sort by size keeps both.
    picked = ((seg_quota > 0) & (seg_quota < seg_size)).nonzero().view(-1)
    picked = picked[torch.sort(seg_size[picked], stable=True)[1]]
    segment, edge_id = grouping.segment[picked], grouping.perm[picked]
    size, quota_of = seg_size[picked], seg_quota[picked]
    width = _row_width(size)
    # A segment spans a row of its block (its edges, then padding) or, in
    # the tail, its edges alone.
    place = torch.arange(segment.numel(), device=segment.device)
    is_start = segment.diff(prepend=segment.new_tensor([-1])) != 0
    rank = place - torch.cummax(torch.where(is_start, place, 0), 0).values
    span = torch.where(width > 0, width, size)[is_start]
    first_slot = torch.cumsum(span, 0) - span
    seg_index = is_start.cumsum(0) - 1
    slot = first_slot[seg_index] + rank
    num_slots = int(span.sum())
    if num_slots > _MAX_SAMPLED:
        raise ValueError(
            f'{segment.numel():,} edges lie in neighbourhoods that must be '
            f'sampled ({num_slots:,} sort slots); a sampler handles at most '
            f'{_MAX_SAMPLED:,}: split the graph, e.g. with a NeighborLoader'
        )
    in_tail, kept = width == 0, rank < quota_of

    weight = neighbour_weights(strategy, balance, grouping.out_degree)
    return SamplingPlan(
        edge_index.size(1),
        int(fixed_mask.sum()) + int(kept.sum()),
        fixed_mask,
        _in_slots(edge_id, slot, num_slots, 0),
        _key_scale(weight, edge_index[0, edge_id], slot, num_slots),
        slot[kept],
        _blocks(width[is_start], first_slot),
        slot[in_tail],
        seg_index[in_tail],
    )


def _row_width(size: Tensor) -> Tensor:
    r"""For every edge of the segments to sample (:obj:`size`: the size of
    its segment), the width of the block rows its segment sorts in; 0 for
    the tail.

    On the CPU a segment's own size, where at least :obj:`_MIN_BLOCK_ROWS`
    segments have it (NumPy sorts a block of equal rows fastest); on other
    devices the next power of two up to :obj:`_MAX_ROW_WIDTH` (a dozen
    blocks, a sort kernel each: at most twice the entries, sorted in
    on-chip memory)."""
    if not _pads_rows(size.device):
        rows = torch.bincount(size)[size] // size
        return torch.where(rows >= _MIN_BLOCK_ROWS, size, 0)
    # 2**e >= size > 2**(e - 1), from size - 1 = m * 2**e, m in [1/2, 1)
    # (exact in float32 for every size up to 2**24, far above the widths)
    width = 2 ** torch.frexp((size - 1).float()).exponent.long()
    return torch.where(size <= _MAX_ROW_WIDTH, width, 0)


def _pads_rows(device: torch.device) -> bool:
    r"""Whether a plan on :obj:`device` pads segments to rows of powers of
    two: everywhere but on the CPU."""
    return device.type != 'cpu'


def _in_slots(
    value: Tensor, slot: Tensor, num_slots: int, padding: float
) -> Tensor:
    r""":obj:`value` laid out at :obj:`slot`, :obj:`padding` elsewhere."""
    if num_slots == slot.numel():  # no padding: the slots are in order
        return value
    return value.new_full((num_slots,), padding).index_copy_(0, slot, value)


def _key_scale(
    weight: Tensor | None, source: Tensor, slot: Tensor, num_slots: int
) -> Tensor | None:
    r"""Every slot's factor of :math:`\log U` in its key: :math:`-1/w` of
    its edge's source, :math:`-\infty` for padding (a key of
    :math:`+\infty`, sorted last); :obj:`None` for uniform keys with no
    padding (the key is :math:`U`)."""
    if weight is not None:
        scale = -1.0 / _near_one(weight[source.long()]).float()
    elif num_slots > slot.numel():
        scale = torch.full_like(slot, -1.0, dtype=torch.float32)
    else:
        return None
    return _in_slots(scale, slot, num_slots, -torch.inf)


def _near_one(weight: Tensor) -> Tensor:
    r""":obj:`weight` times the power of two that brings its largest entry
    into :math:`[1/2, 1)`: a segment's draw depends on ratios of weights
    only, and float32 keys then neither overflow nor underflow for weights
    of any scale (e.g. balance scores of a tiny or huge :math:`\delta`).
    Scaling by a power of two is exact, so the keys' order, and every
    sample, is that of the weights as given wherever those fit float32."""
    if weight.numel() == 0:
        return weight
    exponent = torch.frexp(weight.max()).exponent
    # in two steps: torch's ldexp (2.8's, at least) multiplies by
    # 2**-exponent in the weight's dtype, which float32 cannot hold for
    # subnormal weights (inf: every key tied); each half it can
    half = exponent // 2
    return torch.ldexp(torch.ldexp(weight, -half), half - exponent)


def _blocks(width: Tensor, first_slot: Tensor) -> list[tuple[int, int, int]]:
    r"""The (first slot, rows, width) of every block, from the row width
    (0: none) and first slot of every segment, in order of size."""
    widths, rows = torch.unique_consecutive(width, return_counts=True)
    offsets = first_slot[torch.cumsum(rows, 0) - rows]
    blocks = zip(offsets.tolist(), rows.tolist(), widths.tolist())
    return [block for block in blocks if block[2] > 0]  # width 0: the tail


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
    segment, in the low 32 bits (ties: the smaller slot first)."""
    if not plan.blocks:  # every segment in the tail
        return _segmented_argsort(key, plan.tail_segment)
    if _pads_rows(key.device):
        order = _sorted_padded_rows(plan, key)
    else:
        order = _sorted_words(plan, key)
    if plan.tail_slot.numel():
        tail = _segmented_argsort(
            key.index_select(0, plan.tail_slot), plan.tail_segment
        )
        order.index_copy_(0, plan.tail_slot, plan.tail_slot[tail])
    return order


def _sorted_words(plan: SamplingPlan, key: Tensor) -> Tensor:
    r"""The blocks of exact sizes (the CPU's), sorted row by row as 64-bit
    words holding a key's bits (the bits of non-negative floats order as
    the floats) above its slot: the words are distinct, so every sort
    gives the same order, and NumPy sorts them in place, with no index
    array carried along."""
    slot = torch.arange(key.numel(), dtype=torch.int32, device=key.device)
    halves = (slot, key.view(torch.int32))  # (low, high) 32 bits
    words = torch.stack(halves[::_LOW_HALF_FIRST], dim=1).view(torch.long)
    words = words.view(-1)
    sort_rows(
        [
            words[offset : offset + rows * width].view(rows, width)
            for offset, rows, width in plan.blocks
        ]
    )
    return words


def _sorted_padded_rows(plan: SamplingPlan, key: Tensor) -> Tensor:
    r"""The padded blocks (a GPU's), sorted row by row as the float32 keys
    alone: a stable sort's places in a row plus the row's first slot are
    the slots (half the bytes of the words, sorted on-chip)."""
    order = torch.empty_like(key, dtype=torch.long)
    for offset, rows, width in plan.blocks:
        end = offset + rows * width
        place = torch.sort(
            key[offset:end].view(rows, width), dim=1, stable=True
        ).indices
        row_start = torch.arange(offset, end, width, device=key.device)
        torch.add(
            place,
            row_start.unsqueeze(1),
            out=order[offset:end].view(rows, width),
        )
    return order


def draw_seed(generator: torch.Generator | None = None) -> int:
    r"""Draws one seed in :math:`[0, 2^{62})` from :obj:`generator`
    (default: torch's default CPU generator)."""
    device = generator.device if generator is not None else 'cpu'
    seed = torch.randint(SEED_RANGE, (1,), generator=generator, device=device)
    return int(seed.item())


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
