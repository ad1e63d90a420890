r"""A CUDA graph captured without emptying the device's caches first.

:class:`torch.cuda.graph` synchronises the device and empties the caching
allocators of the device and the host before it captures, so that the
graph's private pool finds memory free. A sampler captures its draw once,
at its second draw (:class:`~pyg_bemap.infra.replay.SeededReplay`): in a
training run, the emptied blocks are then allocated again from the driver
in the steps that follow. Here the capture begins on the side stream of
the warm-up, which waits for the current stream, with no synchronisation
and the caches kept; what the library's :func:`captured` does otherwise
is unchanged. End to end on NBA (60 epochs, one capture a run) is where it
would show.
"""

from collections.abc import Callable
from typing import Any

import torch

#: The library function this candidate replaces.
REPLACES = 'pyg_bemap.infra.replay.captured'


def captured(
    run: Callable[[], Any], *generators: torch.Generator
) -> tuple[torch.cuda.CUDAGraph, Any]:
    r"""The library's :func:`~pyg_bemap.infra.replay.captured`: a CUDA
    graph of :obj:`run()` with :obj:`generators` registered, captured
    after one call on a side stream, and the captured call's output."""
    current = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    side.wait_stream(current)
    graph = torch.cuda.CUDAGraph()
    for generator in generators:
        graph.register_generator_state(generator)
    with torch.cuda.stream(side):
        run()  # the warm-up that torch.cuda.graphs asks for
        graph.capture_begin(capture_error_mode='thread_local')
        try:
            output = run()
        finally:
            graph.capture_end()
    current.wait_stream(side)
    return graph, output
