r"""A random function of a seed, replayed from a CUDA graph on a GPU.

A resample launches some thirty kernels of a few microseconds each, so on
a GPU the host's launch time decides its time, not the device's work.
Captured once in a CUDA graph (:mod:`torch.cuda.graphs`), the kernels run
again as one launch: :class:`SeededReplay` does that for a function of a
:class:`torch.Generator`, re-seeding the generator it registered with the
graph before every replay, so that a seed gives the same output whether
the function runs or is replayed.
"""

import functools
import threading
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor


class SeededReplay:
    r"""Calls :obj:`fn` with a generator seeded with a given seed.

    On the CPU (or any device but CUDA) and at the first call it runs
    :obj:`fn(torch.Generator(device).manual_seed(seed))`. On CUDA, from the
    second call on, it replays a CUDA graph of :obj:`fn` captured at that
    call, with the graph's generator seeded first: the same output, one
    launch. The graph keeps :obj:`fn`'s working memory, and its output is
    copied out, as the next replay overwrites it. While the current stream
    is itself being captured, :obj:`fn` runs with :obj:`None` (the device's
    default generator): a replay of the outer graph runs without Python,
    and only that generator, which every replay advances, gives each of its
    replays new numbers.

    Args:
        fn (callable): A function of a generator (or :obj:`None`) that
            returns one tensor and reads no value of the device's tensors.
        device (torch.device): The device :obj:`fn` runs on.
    """

    def __init__(
        self, fn: Callable[[torch.Generator | None], Tensor], device: Any
    ):
        self._fn = fn
        self._device = torch.device(device)
        self._lock = threading.Lock()
        self._calls = 0
        self._stream: torch.cuda.Stream | None = None

    def __call__(self, seed: int) -> Tensor:
        if self._device.type != 'cuda':
            return self._fn(torch.Generator(self._device).manual_seed(seed))
        with torch.cuda.device(self._device):
            if torch.cuda.is_current_stream_capturing():
                return self._fn(None)
            with self._lock:
                self._calls += 1
                if self._calls == 1:  # a graph pays off from a second call
                    generator = torch.Generator(self._device)
                    return self._fn(generator.manual_seed(seed))
                return self._replay(seed)

    @functools.cached_property
    def _capture(self) -> tuple[torch.Generator, torch.cuda.CUDAGraph, Tensor]:
        r"""The generator registered with the graph, the graph, captured
        at the first replay, and its output."""
        generator = torch.Generator(self._device)
        graph, output = captured(lambda: self._fn(generator), generator)
        return generator, graph, output

    def _replay(self, seed: int) -> Tensor:
        generator, graph, output = self._capture
        stream = torch.cuda.current_stream()
        if self._stream is not None and self._stream != stream:
            # the last copy of the output, on its stream, comes first
            stream.wait_stream(self._stream)
        self._stream = stream
        generator.manual_seed(seed)
        graph.replay()
        return output.clone()


def captured(
    run: Callable[[], Any], *generators: torch.Generator
) -> tuple[torch.cuda.CUDAGraph, Any]:
    r"""A CUDA graph of :obj:`run()`, captured after one call on a side
    stream (the warm-up that :mod:`torch.cuda.graphs` asks for) with
    :obj:`generators` registered, and the captured call's output, which
    every replay overwrites."""
    current = torch.cuda.current_stream()
    side = torch.cuda.Stream()
    side.wait_stream(current)
    with torch.cuda.stream(side):
        run()
    current.wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    for generator in generators:
        graph.register_generator_state(generator)
    with torch.cuda.graph(graph, capture_error_mode='thread_local'):
        output = run()
    return graph, output
