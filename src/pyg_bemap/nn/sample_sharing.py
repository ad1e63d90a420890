r"""Which fair neighbourhood a :class:`~pyg_bemap.BeMapConv` call uses.

BeMap draws one fair neighbourhood per training pass of a model (one call of
the model) and every :class:`~pyg_bemap.BeMapConv` layer of that pass uses
it. Nothing here is process-wide: what marks a pass lives with the model (a
``PassScope``), the fallback for layers outside a scoped model lives
with the graph (per thread), and what replays a call lives with the layer
(a ``CallReplay``). A training call finds its sample by three rules,
in this order:

1. **Replay.** Every training call draws one *ticket* from torch's default
   CPU generator, whose state activation checkpointing
   (:func:`torch.utils.checkpoint.checkpoint`, reentrant or not, with the
   default :obj:`preserve_rng_state=True`) saves before a checkpointed
   region and restores to recompute it. A recomputation, which runs inside
   the backward pass, therefore draws the ticket of the call it recomputes,
   and the layer, which remembers the seed of the sample behind each of its
   recent tickets, draws that very sample again. A call inside a backward
   pass with an unknown ticket (the random state was not restored) raises a
   :class:`RuntimeError`: it never uses another sample silently. Outside a
   backward pass tickets are never looked up, so a reset of the global
   seed never makes a layer with its own generator repeat a sample.
2. **Scoped model.** Inside a call of a model that
   :func:`~pyg_bemap.to_bemap` (or :class:`~pyg_bemap.BeMapGCN`) gave a
   ``PassScope``, the sample of that call (per graph and sampler
   setting): drawn by the first layer that asks and used by every later
   call in the pass, also by a layer called twice (weight sharing). Each
   thread has its own passes.
3. **Unscoped layers** (called on their own, or in a model that was not
   passed to :func:`~pyg_bemap.to_bemap`): per thread, graph and setting,
   the current sample is shared until a layer that already used it asks
   again, or a backward pass has gone through the output of a layer that
   used it or recomputed a layer (the pass is over). For a model that
   calls each layer once per pass and trains with
   :meth:`~torch.Tensor.backward` this is one sample per pass, drawn at the
   first layer's call, so the same seed gives the same samples whatever
   ran before. A layer called twice in one pass starts a new sample at its
   second call, and two unscoped models that take turns on the same graph
   object in one thread without a backward pass in between draw their
   samples in turn from one sequence.
   :func:`~pyg_bemap.to_bemap` makes either case exact.

Each sample is drawn from a seed: the layer's generator's, if it has one,
else the ticket.
"""

import threading
import weakref
from collections import OrderedDict
from typing import Any

import torch

from pyg_bemap.sampler_cache import Sample, SamplerCache, SamplerKey
from pyg_bemap.utils.private_api import inside_backward
from pyg_bemap.utils.sampling import draw_seed

#: How many recent training calls a layer can replay.
REPLAY_LENGTH = 4096


class PassScope:
    r"""Marks the passes of one model: registered as the model's forward
    pre-hook and forward hook (:meth:`register`), it opens a pass when the
    model is called and closes it when the call returns or raises. Passes
    are per thread; a nested call of the model belongs to the open pass.
    """

    def __init__(self) -> None:
        self._local = threading.local()

    def register(self, model: torch.nn.Module) -> None:
        r"""Registers the scope's hooks on :obj:`model` (only there)."""
        model.register_forward_pre_hook(self._open)
        model.register_forward_hook(self._close, always_call=True)

    def samples(self) -> dict[Any, Sample] | None:
        r"""The samples of the running pass of this thread, by graph and
        setting, or :obj:`None` outside a pass."""
        return getattr(self._local, 'samples', None)

    @torch.compiler.disable
    def _open(self, module: torch.nn.Module, args: Any) -> None:
        depth = getattr(self._local, 'depth', 0)
        if depth == 0:
            self._local.samples = {}
        self._local.depth = depth + 1

    @torch.compiler.disable
    def _close(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        self._local.depth = max(getattr(self._local, 'depth', 1) - 1, 0)
        if self._local.depth == 0:
            self._local.samples = None

    def __getstate__(self) -> dict[str, Any]:
        return {}  # passes do not outlive the process

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._local = threading.local()

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}()'


class CallReplay:
    r"""The seeds of the samples behind a layer's last
    :obj:`REPLAY_LENGTH` training calls, by ticket."""

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


class SharedSample:
    r"""The current sample of unscoped layers (rule 3): the layers that used
    it and whether a backward pass has gone through one of their
    outputs."""

    def __init__(self, sample: Sample) -> None:
        self.sample = sample
        # Weak references, not ids: a new layer may reuse the id of a dead
        # one and must not count as having used the sample.
        self.users: weakref.WeakSet = weakref.WeakSet()
        self.expired = False

    def expire_on_backward(self, output: Any) -> None:
        r"""Ends the sample's pass when a backward pass reaches
        :obj:`output` (the first tensor in it that needs a gradient)."""
        tensors = output if isinstance(output, (tuple, list)) else (output,)
        for tensor in tensors:
            if isinstance(tensor, torch.Tensor) and tensor.requires_grad:
                tensor.register_hook(self._expire)
                return

    def _expire(self, grad: torch.Tensor) -> None:
        self.expired = True


def layer_sample(
    cache: SamplerCache,
    key: SamplerKey,
    layer: Any,
    scope: PassScope | None,
    replay: CallReplay,
    generator: torch.Generator | None,
) -> tuple[Sample, SharedSample | None]:
    r"""The sample a training call of :obj:`layer` uses, by the rules of
    this module, and, for an unscoped layer, the shared sample whose pass
    the layer's output ends on backward
    (:meth:`SharedSample.expire_on_backward`).

    Args:
        cache (SamplerCache): The graph's sampler cache.
        key (SamplerKey): The layer's setting
            :obj:`(beta, min_keep, strategy)`.
        layer: The calling layer (its identity tells repeated calls apart).
        scope (PassScope, optional): The scope of the layer's model.
        replay (CallReplay): The layer's replay memory.
        generator (torch.Generator, optional): The layer's generator; the
            ticket doubles as the seed without one.
    """
    ticket = draw_seed()
    if inside_backward():  # recomputing an earlier call
        seed = replay.seed_of(ticket)
        if seed is None:
            raise RuntimeError(
                'A BeMapConv was called in training mode inside a backward '
                'pass with a random state that none of its recent calls '
                'had, so it cannot know the sample of the pass it '
                'recomputes. Activation checkpointing must restore the '
                "random state: keep 'preserve_rng_state=True' (the "
                "default) in 'torch.utils.checkpoint.checkpoint'"
            )
        _expire_unscoped(cache, key)  # a backward pass: the pass is over
        return cache.draw(key, seed), None

    def draw() -> Sample:
        seed = ticket if generator is None else draw_seed(generator)
        return cache.draw(key, seed)

    shared = None
    samples = scope.samples() if scope is not None else None
    if samples is not None:
        sample = samples.get((cache, key))
        if sample is None:
            sample = samples[(cache, key)] = draw()
    else:
        shared = _unscoped_sample(cache, key, layer, draw)
        sample = shared.sample
    replay.remember(ticket, sample.seed)
    return sample, shared


def _unscoped_sample(
    cache: SamplerCache, key: SamplerKey, layer: Any, draw: Any
) -> SharedSample:
    current = _unscoped(cache)
    shared = current.get(key)
    if shared is None or shared.expired or layer in shared.users:
        shared = current[key] = SharedSample(draw())
    shared.users.add(layer)
    return shared


def _unscoped(cache: SamplerCache) -> dict[SamplerKey, SharedSample]:
    return cache.unscoped_samples.__dict__.setdefault('current', {})


def _expire_unscoped(cache: SamplerCache, key: SamplerKey) -> None:
    shared = _unscoped(cache).get(key)
    if shared is not None:
        shared.expired = True
