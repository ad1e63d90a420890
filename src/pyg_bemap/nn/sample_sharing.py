r"""Which fair neighbourhood a :class:`~pyg_bemap.BeMapConv` call uses: the
rules here choose the seed, the graph's
:class:`~pyg_bemap.sampler.GraphSampler` draws the sample from it.

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
else the ticket. The sampler hands the same sample back for the same seed, so
the layers of a pass share one mask and one adjacency.
"""

import threading
import weakref
from collections import OrderedDict
from typing import Any

import torch

from pyg_bemap.sampler import GraphSampler
from pyg_bemap.settings import SamplerSettings
from pyg_bemap.utils.private_api import inside_backward
from pyg_bemap.utils.sampling import draw_seed

#: How many recent training calls a layer can replay.
REPLAY_LENGTH = 4096

#: What a pass's seed is shared by: the graph's sampler and a draw key.
SeedKey = tuple[GraphSampler, tuple[float, int, str]]


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

    def seeds(self) -> dict[SeedKey, int] | None:
        r"""The seeds of the running pass of this thread, by graph sampler
        and draw key, or :obj:`None` outside a pass."""
        return getattr(self._local, 'seeds', None)

    @torch.compiler.disable
    def _open(self, module: torch.nn.Module, args: Any) -> None:
        depth = getattr(self._local, 'depth', 0)
        if depth == 0:
            self._local.seeds = {}
        self._local.depth = depth + 1

    @torch.compiler.disable
    def _close(self, module: torch.nn.Module, args: Any, output: Any) -> None:
        self._local.depth = max(getattr(self._local, 'depth', 1) - 1, 0)
        if self._local.depth == 0:
            self._local.seeds = None

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


class SharedSeed:
    r"""The current seed of unscoped layers (rule 3): the layers that used
    it and whether a backward pass has gone through one of their
    outputs."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        # Weak references, not ids: a new layer may reuse the id of a dead
        # one and must not count as having used the seed.
        self.users: weakref.WeakSet = weakref.WeakSet()
        self.expired = False

    def expire_on_backward(self, output: Any) -> None:
        r"""Ends the seed's pass when a backward pass reaches :obj:`output`
        (the first tensor in it that needs a gradient)."""
        tensors = output if isinstance(output, (tuple, list)) else (output,)
        for tensor in tensors:
            if isinstance(tensor, torch.Tensor) and tensor.requires_grad:
                tensor.register_hook(self._expire)
                return

    def _expire(self, grad: torch.Tensor) -> None:
        self.expired = True


def layer_seed(
    sampler: GraphSampler,
    settings: SamplerSettings,
    layer: Any,
    scope: PassScope | None,
    replay: CallReplay,
    generator: torch.Generator | None,
) -> tuple[int, SharedSeed | None]:
    r"""The seed of the sample a training call of :obj:`layer` uses, by the
    rules of this module, and, for an unscoped layer, the shared seed whose
    pass the layer's output ends on backward
    (:meth:`SharedSeed.expire_on_backward`).

    Args:
        sampler (GraphSampler): The graph's sampler.
        settings (SamplerSettings): The layer's settings.
        layer: The calling layer (its identity tells repeated calls apart).
        scope (PassScope, optional): The scope of the layer's model.
        replay (CallReplay): The layer's replay memory.
        generator (torch.Generator, optional): The layer's generator; the
            ticket doubles as the seed without one.
    """
    ticket = draw_seed()
    key = settings.draw_key
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
        _expire_unscoped(sampler, key)  # a backward pass: the pass is over
        return seed, None

    def new_seed() -> int:
        return ticket if generator is None else draw_seed(generator)

    shared = None
    seeds = scope.seeds() if scope is not None else None
    if seeds is not None:
        seed = seeds.get((sampler, key))
        if seed is None:
            seed = seeds[(sampler, key)] = new_seed()
    else:
        shared = _unscoped_seed(sampler, key, layer, new_seed)
        seed = shared.seed
    replay.remember(ticket, seed)
    return seed, shared


def _unscoped_seed(
    sampler: GraphSampler, key: Any, layer: Any, new_seed: Any
) -> SharedSeed:
    current = _unscoped(sampler)
    shared = current.get(key)
    if shared is None or shared.expired or layer in shared.users:
        shared = current[key] = SharedSeed(new_seed())
    shared.users.add(layer)
    return shared


def _unscoped(sampler: GraphSampler) -> dict[Any, SharedSeed]:
    return sampler.per_thread.__dict__.setdefault('unscoped_seeds', {})


def _expire_unscoped(sampler: GraphSampler, key: Any) -> None:
    shared = _unscoped(sampler).get(key)
    if shared is not None:
        shared.expired = True
