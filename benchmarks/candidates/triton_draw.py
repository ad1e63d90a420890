r"""Rule 4's draw with one Triton kernel per block of a plan.

The library's GPU draw (:func:`pyg_bemap.rules.draw.draw_edge_mask`)
writes a key per slot, sorts every block's rows with :func:`torch.sort`
(values and int64 places), adds the rows' first slots, gathers the kept
slots and their edges and fills the mask: six passes over the slots. Here
one kernel per block reads a row's weights and edge ids and writes the
kept edges into the mask; in between, in registers: the Philox numbers of
its slots (from a seed drawn from the generator, so that a CUDA graph
replays new numbers), the keys :math:`-\log(U_j) / w_j`, a sort of the
64-bit words holding a key's bits above its column (ties: the smaller
column first, as the library's stable sort), and the row's :math:`k`-th
smallest word, at most which an edge is kept. The tail (segments longer
than the widest block) keeps the library's segmented sort.

A plan's per-row quotas are derived once per plan (:func:`_layout`,
kept in this module; adopted, they would be fields of the plan). The
first draw compiles one kernel per row width (a few seconds each, about
20 s for all twelve on a 2-core CPU; Triton keeps them on disk).
Where ``TRITON_INTERPRET=1``, the kernel runs on the CPU, slowly: that is
how the tests check it without a GPU.
"""

import weakref

import torch
import triton
import triton.language as tl
from torch import Tensor

from pyg_bemap.infra.threads import SEED_RANGE, uniform
from pyg_bemap.rules.draw import SamplingPlan, _segmented_argsort

#: The library function this candidate replaces.
REPLACES = 'pyg_bemap.sampler.draw_edge_mask'
# Entries (rows x columns) one program sorts, and the entries per thread
# beyond which a program takes more warps: compiled for an H100/H200
# (sm_90), a program then holds 56-112 registers a thread, none spilled
# (4096 entries in 4 warps took 255 and spilled).
_PROGRAM_ENTRIES = 1024
_ENTRIES_PER_THREAD = 8

# per plan, by the id of its slots' edge ids (a tensor of its own), and
# dropped when that tensor dies
_layouts: dict[int, tuple[list[Tensor], Tensor]] = {}


# offsets and row counts differ between blocks: one compilation serves all
@triton.jit(do_not_specialize=['offset', 'rows'])
def _draw_rows(
    seed_ptr,
    scale_ptr,
    edge_ptr,
    quota_ptr,
    mask_ptr,
    offset,
    rows,
    width,
    COLUMNS: tl.constexpr,
    ROWS: tl.constexpr,
    SCALED: tl.constexpr,
):
    row = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    column = tl.arange(0, COLUMNS)  # a power of two, at least the width
    in_block = (row < rows)[:, None] & (column < width)[None, :]
    slot = offset + row[:, None] * width + column[None, :]
    u = tl.rand(tl.load(seed_ptr), slot)
    if SCALED:  # -log(U) / w; padding's factor -inf makes its key +inf
        scale = tl.load(scale_ptr + slot, mask=in_block, other=-1.0)
        key = tl.log(u) * scale
    else:
        key = u
    key = tl.where(in_block, key, float('inf'))
    # the bits of a non-negative float order as the float
    word = key.to(tl.int32, bitcast=True).to(tl.int64) << 32
    word = word | column[None, :].to(tl.int64)
    quota = tl.load(quota_ptr + row, mask=row < rows, other=1)
    kth = tl.sum(
        tl.where(
            column[None, :] == quota[:, None] - 1, tl.sort(word, dim=1), 0
        ),
        axis=1,
    )
    kept = in_block & (word <= kth[:, None])
    edge = tl.load(edge_ptr + slot, mask=kept, other=0)
    tl.store(mask_ptr + edge, 1, mask=kept)


def draw_edge_mask(
    plan: SamplingPlan, generator: torch.Generator | None = None
) -> Tensor:
    r"""The library's :func:`~pyg_bemap.rules.draw.draw_edge_mask`: the
    mask of kept input edges. A row of a block of exact sizes (a CPU's
    plan) sits in the next power of two of columns, masked."""
    quotas, tail_kept = _layout(plan)
    device = plan.fixed_mask.device
    mask = plan.fixed_mask.clone()
    seed = torch.randint(SEED_RANGE, (1,), generator=generator, device=device)
    scale = plan.key_scale if plan.key_scale is not None else plan.edge_id
    for (offset, rows, width), quota in zip(plan.blocks, quotas):
        columns, per_program, warps = launch_shape(width)
        _draw_rows[(triton.cdiv(rows, per_program),)](
            seed,
            scale,
            plan.edge_id,
            quota,
            mask.view(torch.uint8),
            offset,
            rows,
            width,
            COLUMNS=columns,
            ROWS=per_program,
            SCALED=plan.key_scale is not None,
            num_warps=warps,
        )
    if plan.tail_slot.numel():
        key = uniform(plan.tail_slot.numel(), generator, device)
        if plan.key_scale is not None:
            key = key.log_().mul_(plan.key_scale[plan.tail_slot])
        order = _segmented_argsort(key, plan.tail_segment)
        slot = plan.tail_slot[order.index_select(0, tail_kept)]
        mask.index_fill_(0, plan.edge_id.index_select(0, slot), True)
    return mask


def launch_shape(width: int) -> tuple[int, int, int]:
    r"""The columns (a power of two), rows and warps of a program for rows
    of :obj:`width` entries."""
    columns = triton.next_power_of_2(width)
    rows = max(1, _PROGRAM_ENTRIES // columns)
    warps = max(4, rows * columns // (32 * _ENTRIES_PER_THREAD))
    return columns, rows, warps


def _layout(plan: SamplingPlan) -> tuple[list[Tensor], Tensor]:
    r"""Once per plan: every block's quota per row (int32), and the places
    of the tail's kept ranks (those of :obj:`plan.keep` in the tail)."""
    key = id(plan.edge_id)
    known = _layouts.get(key)
    if known is None:
        quotas = []
        for offset, rows, width in plan.blocks:
            end = offset + rows * width
            inside = (plan.keep >= offset) & (plan.keep < end)
            row = (plan.keep[inside] - offset) // width
            quotas.append(torch.bincount(row, minlength=rows).int())
        kept = torch.isin(plan.tail_slot, plan.keep).nonzero().view(-1)
        known = _layouts[key] = (quotas, kept)
        weakref.finalize(plan.edge_id, _layouts.pop, key, None)
    return known
