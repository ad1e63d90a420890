r"""How many threads one training run uses inside torch: one.

Runs go in parallel as processes (``--jobs``), each with one intra-op
thread, so that ``jobs`` processes use ``jobs`` cores. torch's own default
(one thread per core) in every process would ask for ``jobs x cores``
threads, and even alone it gains little on these graphs while it loses
much as soon as other work holds a core: ``pyg-bemap train --dataset
credit`` took 23.5 s with two threads against 27.9 s with one on two quiet
cores, but 82.4 s against 44.3 s on two busy ones. One thread per run also
makes a run's floating-point sums, and so its result, the same whatever
``--jobs`` is.
"""

import contextlib
from collections.abc import Iterator

import torch

#: Intra-op threads of one training run.
RUN_THREADS = 1


@contextlib.contextmanager
def run_threads() -> Iterator[None]:
    r"""Trains in this process with :obj:`RUN_THREADS` intra-op threads, and
    gives torch back its previous number afterwards."""
    previous = torch.get_num_threads()
    torch.set_num_threads(RUN_THREADS)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
