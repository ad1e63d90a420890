r"""The serial parts of a resample of a large graph on the CPU, spread
over torch's intra-op threads: uniform random numbers drawn chunk by
chunk (a GPU draws them in parallel on its own, through the same
function), and row sorts.

torch's CPU generator draws one number after the other, and NumPy sorts on
one core, so a resample of a large graph would wait for one core. Beyond
:obj:`CHUNK` numbers, every chunk of :obj:`CHUNK` numbers comes from its
own generator, seeded by a draw from the caller's generator: the numbers
depend on that generator alone, never on the number of threads. Work runs
on :func:`torch.get_num_threads` threads (one: none started), so a
program that limits torch's threads limits these too.
"""

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
import torch
from torch import Tensor

#: Random numbers per generator beyond the first :obj:`CHUNK`.
CHUNK = 2**22
#: Seeds of the chunks' generators are drawn from [0, SEED_RANGE).
SEED_RANGE = 2**62

Item = TypeVar('Item')


def uniform(
    size: int,
    generator: torch.Generator | None = None,
    device: torch.device | str = 'cpu',
) -> Tensor:
    r""":obj:`size` float32 numbers uniform on :math:`[0, 1)`: those of
    :func:`torch.rand` up to :obj:`CHUNK` numbers or on a device other
    than the CPU, else one chunk of :obj:`CHUNK` numbers per generator
    seeded from :obj:`generator`, the chunks drawn in parallel."""
    if size <= CHUNK or torch.device(device).type != 'cpu':
        return torch.rand(
            size, generator=generator, device=device, dtype=torch.float32
        )
    num_chunks = -(-size // CHUNK)
    seeds = torch.randint(
        SEED_RANGE, (num_chunks,), generator=generator, device=device
    ).tolist()
    out = torch.empty(size, device=device, dtype=torch.float32)

    def draw(chunk: int) -> None:
        own = torch.Generator(device=out.device).manual_seed(seeds[chunk])
        out[chunk * CHUNK : (chunk + 1) * CHUNK].uniform_(generator=own)

    in_threads(draw, range(num_chunks))
    return out


def sort_rows(blocks: Sequence[Tensor]) -> None:
    r"""Sorts every row of every 2-D CPU tensor of :obj:`blocks` in place
    with NumPy (several times faster than torch on short rows), in pieces
    of about :obj:`CHUNK` entries spread over the threads."""
    if sum(block.numel() for block in blocks) <= CHUNK:  # no thread's worth
        for block in blocks:
            block.numpy().sort(axis=1)
        return
    pieces: list[np.ndarray] = []
    for block in blocks:  # row blocks of about CHUNK entries
        count = max(1, -(-block.numel() // CHUNK))
        pieces += np.array_split(block.numpy(), count)
    in_threads(lambda piece: piece.sort(axis=1), pieces)


def in_threads(
    function: Callable[[Item], None], items: Sequence[Item]
) -> None:
    r"""Calls :obj:`function` on every item, on up to
    :func:`torch.get_num_threads` threads, and re-raises the first
    exception."""
    workers = min(torch.get_num_threads(), len(items))
    if workers <= 1:
        for item in items:
            function(item)
        return
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(function, items))
