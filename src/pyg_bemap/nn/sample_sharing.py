r"""Which fair neighbourhood a training call of a
:class:`~pyg_bemap.BeMapConv` uses. One rule:

**A pass is one call of a model, and all BeMap layers of a pass share one
sample** (per graph, sampler setting and generator: layers given different
:obj:`generator` objects draw apart, so each generator alone decides the
samples of its layers). The first training call of a pass draws it, from
a seed that its layer's :obj:`generator` gives, or else torch's default
CPU generator.

*The model* is the module that opens passes: the one
:func:`~pyg_bemap.to_bemap` returns, a module given to
:func:`~pyg_bemap.one_sample_per_call`, or, for a model written by hand, the
outermost module that was running when one of its BeMap layers was first
called in training mode with no pass open. That first call looks once
along the calling thread's stack for it and gives it a forward pre-hook
and a forward hook (:obj:`always_call=True`), which open and close its
passes in a context variable (``contextvars``); every later call reads the
variable, whatever the depth of the caller's stack. A pass opened inside
another pass joins it (the outermost call decides), except for modules
given to :func:`~pyg_bemap.one_sample_per_call`, whose every call is a
pass of its own. So every call of a model uses one sample in all its
layers, a layer called twice included; two calls of a model that a
wrapper module makes in one of its own calls share one sample only if the
wrapper is the model (it was the outermost module at the first training
call):
:obj:`one_sample_per_call(model)` makes each of them a pass. A layer
called with no module around it (or through :obj:`model.forward(...)`)
is a pass of its own, and looks along the stack at every such call.

The same global seed gives the same samples whatever ran before (another
model, a training-mode call without a backward pass); each thread has its
own passes. Nothing is process-wide, and a finished pass keeps no model
or input alive: a pass holds the seeds of its samples, and the graph's
sampler the last sample of each setting, which a layer of any later pass
with that seed reuses (the same seed gives the same sample), so all
layers of a pass on one graph use one sample, also when another graph
with the same information (a sparse adjacency given :obj:`bemap=`) came
between them. Threads whose passes interleave on one graph draw their
samples again where another thread's came between (the same masks, from
the same seeds).

**Activation checkpointing.** A training call that may run in a
checkpointed region (autograd records no graph, as in a reentrant
:func:`torch.utils.checkpoint.checkpoint`, or saved-tensor hooks are
active, as in a non-reentrant one) reads a *ticket*: the state of torch's
default CPU generator, which checkpointing (with the default
:obj:`preserve_rng_state=True`) saves before the region and restores to
recompute it. No call draws from that generator but the first of a pass
without a :obj:`generator`, which draws its seed there, so the random
state moves alike with and without checkpointing (dropout masks, and so
results, are the same). The layer remembers the sample behind each ticket
(its last :obj:`REPLAY_LENGTH` such calls); a recomputation, which runs
inside the backward pass, reads the same ticket and uses the same sample.
A recomputation whose ticket is unknown, or whose ticket two calls with
different samples read before either was recomputed (two forwards with
layer generators that share one backward, with no random operation or the
same global seed before each), raises a :class:`RuntimeError` rather than
use another sample.
"""

import threading
import weakref
from collections import OrderedDict
from contextvars import ContextVar
from typing import Any

import torch

from pyg_bemap.infra.private_api import (
    has_forward_pre_hook,
    inside_backward,
    outermost_module_call,
    saved_tensor_hooks_active,
)
from pyg_bemap.rules.draw import draw_seed
from pyg_bemap.sampler import GraphSampler, Sample
from pyg_bemap.settings import SamplerSettings

#: How many recent checkpointed calls a layer can replay.
REPLAY_LENGTH = 4096


class Pass:
    r"""One call of a model, and the seeds of its samples, per setting and
    generator. :obj:`root` is set for a pass its model's hooks did not open
    (the call that installed them), which must be confirmed on the
    stack."""

    __slots__ = ('calls', 'outer', 'root', 'seeds')

    def __init__(self, outer: 'Pass | None' = None, root: Any = None):
        self.calls, self.outer, self.root = 1, outer, root
        self.seeds: dict[Any, int] = {}


_CURRENT: ContextVar[Pass | None] = ContextVar('pyg_bemap_pass', default=None)


def one_sample_per_call(module: torch.nn.Module) -> 'PassHooks':
    r"""Makes every call of :obj:`module` a pass of its own: all BeMap
    layers it calls share one sample, drawn afresh at each of its calls,
    also when another model calls it (for example twice in one call of a
    wrapper module, as Lightning's strategies do).

    .. code-block:: python

        one_sample_per_call(model)  # a new sample for each model(...)

    Args:
        module (torch.nn.Module): The module.

    Returns:
        A handle whose ``remove()`` undoes it.
    """
    return PassHooks(module, _open_own_pass)


def open_passes(module: torch.nn.Module) -> None:
    r"""Makes every call of :obj:`module` a pass, or part of the pass of an
    enclosing call (what :func:`~pyg_bemap.to_bemap` does to its model)."""
    if not has_forward_pre_hook(module, _open_pass):
        PassHooks(module, _open_pass)


class PassHooks:
    r"""The hooks that open and close a module's passes: :obj:`opener`
    before each call of :obj:`module`, and the hook that closes the pass
    after it."""

    def __init__(self, module: torch.nn.Module, opener: Any) -> None:
        self.handles = (
            module.register_forward_pre_hook(opener),
            module.register_forward_hook(_close_pass, always_call=True),
        )

    def remove(self) -> None:
        r"""Removes them."""
        for handle in self.handles:
            handle.remove()


def _open_pass(module: torch.nn.Module, args: Any) -> None:
    current = _CURRENT.get()
    if current is None or current.root is not None:
        _CURRENT.set(Pass())
    else:  # inside an enclosing pass
        current.calls += 1


def _open_own_pass(module: torch.nn.Module, args: Any) -> None:
    current = _CURRENT.get()
    enclosing = current is not None and current.root is None
    _CURRENT.set(Pass(outer=current if enclosing else None))


def _close_pass(module: torch.nn.Module, args: Any, output: Any) -> None:
    current = _CURRENT.get()
    if current is None or current.root is not None:
        return  # opened while the hook was installed: nothing to close
    current.calls -= 1
    if current.calls == 0:
        _CURRENT.set(current.outer)


class CallReplay:
    r"""What a layer's last :obj:`REPLAY_LENGTH` calls in checkpointed
    regions used, by ticket: the seed of the sample, and whether the call
    drew it from the global generator (its recomputation draws too, so
    that the random state moves as it did)."""

    def __init__(self) -> None:
        self._calls: OrderedDict[int, list[Any]] = OrderedDict()
        self._lock = threading.Lock()
        self.forgot = False

    def remember(self, ticket: int, seed: int, drew: bool) -> None:
        with self._lock:
            known = self._calls.pop(ticket, None)
            if known is not None and known[0] != seed and not known[2]:
                seed = _AMBIGUOUS  # two calls awaiting their recomputation
            self._calls[ticket] = [seed, drew, False]
            if len(self._calls) > REPLAY_LENGTH:
                self._calls.popitem(last=False)
                self.forgot = True

    def recall(self, ticket: int) -> tuple[int, bool]:
        r"""The seed and draw of the call behind :obj:`ticket`; raises a
        :class:`RuntimeError` where it is unknown or ambiguous."""
        with self._lock:
            call = self._calls.get(ticket)
            if call is not None:
                call[2] = True  # recomputed
        if call is None or call[0] == _AMBIGUOUS:
            raise RuntimeError(_unknown_ticket(call is None, self.forgot))
        return call[0], call[1]

    def __reduce__(self) -> tuple[type['CallReplay'], tuple[()]]:
        # copies and pickles start empty (a lock cannot be copied)
        return CallReplay, ()


#: The seed of a ticket that two calls with different samples drew.
_AMBIGUOUS = -1


def pass_sample(
    layer: Any, sampler: GraphSampler, replay: CallReplay
) -> Sample:
    r"""The sample a training call of :obj:`layer` uses, by the rule of
    this module.

    Args:
        layer (BeMapConv): The calling layer, whose :obj:`settings` and
            :obj:`generator` decide the sample.
        sampler (GraphSampler): The graph's sampler.
        replay (CallReplay): The layer's memory of checkpointed calls.
    """
    settings, generator = layer.settings, layer.generator
    if inside_backward():  # recomputing a checkpointed call
        replayed, drew = replay.recall(_ticket())
        if drew:  # its draw from the global generator made again
            draw_seed()
        return _drawn(sampler, settings, replayed)
    checkpointed = saved_tensor_hooks_active() or not torch.is_grad_enabled()
    ticket = _ticket() if checkpointed else None
    seeds = _current_pass(layer).seeds
    key = (settings.draw_key, None if generator is None else id(generator))
    seed = seeds.get(key)
    drew = seed is None and generator is None
    if seed is None:
        seed = seeds[key] = draw_seed(generator)
    if ticket is not None:
        replay.remember(ticket, seed, drew)
    return _drawn(sampler, settings, seed)


def _drawn(
    sampler: GraphSampler, settings: SamplerSettings, seed: int
) -> Sample:
    r"""The sample of :obj:`seed`, drawn once while it is the last one of
    its setting on the graph (kept in the sampler's memo): a pass's layers
    use one, routes fill its memo once, and a sampler rebuilt in a pass
    (another graph of the same information, e.g. a sparse adjacency,
    between two layers on the edge list) draws the same mask again."""
    key = ('last', settings.draw_key)
    sample = sampler.memo.get(key)
    if sample is None or sample.seed != seed:
        sample = sampler.memo[key] = sampler.draw(settings, seed)
    return sample


def _ticket() -> int:
    r"""What tells a call from another in a checkpointed region and its
    recomputation alike: the state of torch's default CPU generator, which
    checkpointing restores, read without drawing from it."""
    return hash(torch.get_rng_state().numpy().tobytes())


def _current_pass(layer: torch.nn.Module) -> Pass:
    r"""The pass :obj:`layer`'s call belongs to. Where no model's hooks
    opened one, the outermost module on the stack becomes the model (a
    pass opened here until its next call), or none is there: a pass of
    the layer's own."""
    current = _CURRENT.get()
    if current is not None and current.root is None:
        return current
    root = outermost_module_call()
    if root is None or root is layer:
        _CURRENT.set(None)
        return Pass()
    if current is None or current.root() is not root:
        open_passes(root)
        current = Pass(root=weakref.ref(root))
        _CURRENT.set(current)
    return current


def _unknown_ticket(unknown: bool, forgot: bool) -> str:
    if not unknown:
        return (
            'A BeMapConv recomputed under activation checkpointing cannot '
            'tell which sample its call used: two of its checkpointed calls '
            'that share one backward pass ran at the same random state '
            '(the global seed reset between them, or no random operation '
            "between them) with different samples from the layer's "
            'generator. Call backward after each forward, or do not reset '
            'the global seed between them'
        )
    if forgot:
        return (
            'A BeMapConv recomputed under activation checkpointing cannot '
            f'tell which sample its call used: it remembers its last '
            f'{REPLAY_LENGTH} checkpointed calls, and more of them ran '
            'before this backward pass. Call backward more often (or keep '
            "'preserve_rng_state=True', the default, in "
            "'torch.utils.checkpoint.checkpoint')"
        )
    return (
        'A BeMapConv was called in training mode inside a backward '
        'pass with a random state that none of its recent checkpointed '
        'calls had, so it cannot know the sample of the pass it '
        'recomputes. Activation checkpointing must restore the random '
        "state: keep 'preserve_rng_state=True' (the default) in "
        "'torch.utils.checkpoint.checkpoint'"
    )
