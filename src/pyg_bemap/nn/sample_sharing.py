r"""Which fair neighbourhood a training call of a
:class:`~pyg_bemap.BeMapConv` uses. One rule:

**A pass is one call of the outermost** :class:`torch.nn.Module` **on the
calling thread's stack, and all BeMap layers of a pass share one sample**
(per graph, sampler setting and generator: layers given different
:obj:`generator` objects draw apart, so each generator alone decides the
samples of its layers). The first training call of a pass draws it, from
a seed that its layer's :obj:`generator` gives, or else torch's default
CPU generator. A layer called on its own is a pass of its own.

So every call of a model, written by hand or prepared by
:func:`~pyg_bemap.to_bemap`, uses one sample in all its layers, a layer
called twice included; the same global seed gives the same samples
whatever ran before (another model, a training-mode call without a
backward pass); a layer's generator alone decides its samples; and each
thread has its own passes. Calling :obj:`model.forward(...)` instead of
:obj:`model(...)` is no call of the model: each layer is then a pass of
its own. Nothing is process-wide, and a finished pass keeps no model or
input alive: the outermost call's frame keeps a token of its pass as a
local of its own, which dies with the call, and the graph's sampler keeps
the last sample of each thread, setting and generator (its mask and the
layouts routes built from it, until that thread's next pass) beside a
weak reference to that token (holding the frame kept its model and
inputs alive after the pass).

**Activation checkpointing.** Every training call also draws a *ticket*
from torch's default CPU generator, whose state
:func:`torch.utils.checkpoint.checkpoint` (with the default
:obj:`preserve_rng_state=True`) saves before a checkpointed region and
restores to recompute it. A call inside a checkpointed region remembers
the seed behind its ticket (the layer's last :obj:`REPLAY_LENGTH` such
calls); its recomputation, which runs inside the backward pass, draws the
same ticket and uses the same sample. A recomputation with an unknown
ticket raises a :class:`RuntimeError` rather than use another sample.
Layers never called in a checkpointed region remember nothing.
"""

import sys
import threading
import weakref
from collections import OrderedDict
from typing import Any

import torch
import torch.utils.checkpoint

from pyg_bemap.infra.private_api import inside_backward
from pyg_bemap.rules.draw import draw_seed
from pyg_bemap.sampler import GraphSampler, Sample
from pyg_bemap.settings import SamplerSettings

#: How many recent checkpointed calls a layer can replay.
REPLAY_LENGTH = 4096

# The code of a module's call (torch.nn.Module.__call__ and what it calls)
# and the file of torch's activation checkpointing, found on the stack.
_MODULE_CALLS = {
    torch.nn.Module._wrapped_call_impl.__code__,
    torch.nn.Module._call_impl.__code__,
}
_CHECKPOINTING = torch.utils.checkpoint.__file__


class CallReplay:
    r"""The seeds of the samples behind a layer's last
    :obj:`REPLAY_LENGTH` calls in checkpointed regions, by ticket."""

    def __init__(self) -> None:
        self._seeds: OrderedDict[int, int] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, ticket: int, seed: int) -> None:
        with self._lock:
            self._seeds[ticket] = seed
            if len(self._seeds) > REPLAY_LENGTH:
                self._seeds.popitem(last=False)

    def seed_of(self, ticket: int) -> int | None:
        with self._lock:
            return self._seeds.get(ticket)

    def __getstate__(self) -> dict[str, Any]:
        return {}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]

    def __deepcopy__(self, memo: dict[int, Any]) -> 'CallReplay':
        return CallReplay()


def pass_sample(
    sampler: GraphSampler,
    settings: SamplerSettings,
    generator: torch.Generator | None,
    replay: CallReplay,
) -> Sample:
    r"""The sample a training call uses, by the rule of this module.

    Args:
        sampler (GraphSampler): The graph's sampler.
        settings (SamplerSettings): The layer's settings.
        generator (torch.Generator, optional): The layer's generator.
        replay (CallReplay): The layer's memory of checkpointed calls.
    """
    ticket = draw_seed()
    passes = sampler.per_thread.__dict__.setdefault('passes', {})
    key = (settings.draw_key, None if generator is None else id(generator))
    current = passes.get(key)
    if inside_backward():  # recomputing a checkpointed call
        seed = _replayed_seed(replay, ticket)
        if current is not None and current[1].seed == seed:
            return current[1]
        return sampler.draw(settings, seed)
    outermost, checkpointed = _stack()
    token = _PassToken() if outermost is None else _token_of(outermost)
    if current is None or current[0]() is not token:
        seed = ticket if generator is None else draw_seed(generator)
        sample = sampler.draw(settings, seed)
        current = passes[key] = (weakref.ref(token), sample)
    if checkpointed:
        replay.remember(ticket, current[1].seed)
    return current[1]


class _PassToken:
    r"""What tells one pass from another, owned by its outermost frame."""

    __slots__ = ('__weakref__',)


#: The name of the token among the outermost frame's locals.
_TOKEN = '__pyg_bemap_pass__'


def _token_of(frame: Any) -> _PassToken:
    r"""The token of the pass whose outermost call runs in :obj:`frame`:
    one of its locals (set on first use), so that it lives exactly as long
    as the call, on every Python the library supports."""
    frame_locals = frame.f_locals
    token = frame_locals.get(_TOKEN)
    if token is None:
        token = frame_locals[_TOKEN] = _PassToken()
    return token


def _stack() -> tuple[Any, bool]:
    r"""The frame of the outermost module call on this thread's stack (the
    pass), and whether a checkpointed region is on it."""
    outermost, checkpointed = None, False
    frame: Any = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code in _MODULE_CALLS:
            outermost = frame
        elif code.co_filename == _CHECKPOINTING:
            checkpointed = True
        frame = frame.f_back
    return outermost, checkpointed


def _replayed_seed(replay: CallReplay, ticket: int) -> int:
    seed = replay.seed_of(ticket)
    if seed is None:
        raise RuntimeError(
            'A BeMapConv was called in training mode inside a backward '
            'pass with a random state that none of its recent checkpointed '
            'calls had, so it cannot know the sample of the pass it '
            'recomputes. Activation checkpointing must restore the random '
            "state: keep 'preserve_rng_state=True' (the default) in "
            "'torch.utils.checkpoint.checkpoint'"
        )
    return seed
