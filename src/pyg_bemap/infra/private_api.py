r"""Every private API of torch and PyG that the library relies on, in one
place: ``tests/infra/test_private_api.py`` fails loudly when one of them
changes or disappears in a new release."""

import contextlib
import operator
import sys
from contextlib import AbstractContextManager
from typing import Any, TypeVar, cast

import torch
import torch.nn.modules.module as modules
from torch import Tensor
from torch._functorch.pyfunctorch import temporarily_clear_interpreter_stack

#: PyG's hooks on the steps of message passing (registered with the public
#: ``register_*_forward_*hook`` methods, kept in private dictionaries).
PROPAGATION_HOOKS = tuple(
    f'_{step}_forward_{kind}hooks'
    for step in ('propagate', 'message', 'aggregate', 'message_and_aggregate')
    for kind in ('pre_', '')
)


def has_propagation_hooks(conv: Any) -> bool:
    r"""Whether a PyG layer explains its messages or has a hook on a step
    of its message passing, which a fused sparse path would skip."""
    return bool(getattr(conv, 'explain', False)) or any(
        getattr(conv, name, None) for name in PROPAGATION_HOOKS
    )


#: Hooks on a module's calls, per module and for every module (registered
#: with ``register_forward_hook`` and the like, or the global
#: ``torch.nn.modules.module.register_module_*`` functions).
MODULE_HOOKS = tuple(
    f'_{call}_{kind}hooks'
    for call in ('forward', 'backward')
    for kind in ('pre_', '')
)


_hooks_of = operator.attrgetter(*MODULE_HOOKS)
_global_hooks = operator.attrgetter(*('_global' + n for n in MODULE_HOOKS))


def has_module_hooks(module: torch.nn.Module) -> bool:
    r"""Whether a hook would see a call of :obj:`module` or of one of its
    submodules, which code that computes their function without calling
    them would skip. (Asked at every call of a layer: a walk over the
    modules' own dictionaries, several times faster than
    :meth:`~torch.nn.Module.modules`.)"""
    if any(_global_hooks(modules)):
        return True
    todo = [module]
    while todo:
        current = todo.pop()
        if any(_hooks_of(current)):
            return True
        todo.extend(m for m in current._modules.values() if m is not None)
    return False


def registered_children(
    module: torch.nn.Module,
) -> list[tuple[str, torch.nn.Module]]:
    r""":obj:`module`'s children under every name they are registered by,
    a module registered twice at both (where
    :meth:`~torch.nn.Module.named_children` gives it once), and none
    registered as :obj:`None`."""
    items = module._modules.items()
    return [(name, child) for name, child in items if child is not None]


def registered_child(module: torch.nn.Module, name: str) -> Any:
    r"""The child registered as :obj:`name`, or :obj:`None`, read without
    :meth:`~torch.nn.Module.__getattr__` (for use inside one)."""
    return module.__dict__.get('_modules', {}).get(name)


def registered_parameter(module: torch.nn.Module, name: str) -> Any:
    r"""The parameter registered as :obj:`name`, or :obj:`None` (also when
    registered as :obj:`None`), read without
    :meth:`~torch.nn.Module.__getattr__`."""
    return module.__dict__.get('_parameters', {}).get(name)


def state_dict_metadata(state_dict: Any) -> dict[str, Any] | None:
    r"""The per-module metadata (versions) torch keeps on a state dict."""
    return getattr(state_dict, '_metadata', None)


def is_view(tensor: Tensor) -> bool:
    r"""Whether :obj:`tensor` is a view of another tensor's memory."""
    return tensor._base is not None


def stored_coo_entries(adj: Tensor) -> tuple[Tensor, Tensor]:
    r"""A COO tensor's indices and values as stored, coalesced or not
    (where :meth:`~torch.Tensor.indices` needs a coalesced one); the
    values carry no gradient."""
    return adj._indices(), adj._values()


def has_forward_pre_hook(module: torch.nn.Module, hook: Any) -> bool:
    r"""Whether :obj:`hook` is among :obj:`module`'s forward pre-hooks."""
    return any(h is hook for h in module._forward_pre_hooks.values())


#: The code of a module's call (:meth:`torch.nn.Module.__call__` and what
#: it calls), as it appears on the stack.
MODULE_CALLS = (
    torch.nn.Module._wrapped_call_impl.__code__,
    torch.nn.Module._call_impl.__code__,
)


def outermost_module_call() -> torch.nn.Module | None:
    r"""The module of the outermost module call on this thread's stack, or
    :obj:`None`: a walk of the whole stack, for calls that are rare."""
    outermost = None
    frame: Any = sys._getframe(1)
    while frame is not None:
        if frame.f_code in MODULE_CALLS:
            outermost = frame
        frame = frame.f_back
    return None if outermost is None else outermost.f_locals['self']


def saved_tensor_hooks_active() -> bool:
    r"""Whether saved-tensor hooks (:class:`torch.autograd.graph.
    saved_tensors_hooks`: a non-reentrant activation checkpoint,
    :func:`~torch.autograd.graph.save_on_cpu`) take what autograd saves
    on this thread."""
    hooks = torch._C._autograd._top_saved_tensors_default_hooks(False)
    return hooks is not None


def inside_backward() -> bool:
    r"""Whether autograd's engine is running a backward pass on this thread
    (where activation checkpointing recomputes forward calls)."""
    return torch._C._current_graph_task_id() != -1


def outside_functorch_transforms() -> AbstractContextManager[Any]:
    r"""A block that runs as if no :mod:`torch.func` transform ran: its
    operations take and give plain tensors (for what does not depend on
    the transformed inputs, such as a sample of the edges). Where no
    transform runs, or while :func:`torch.compile` traces (the block would
    break its graph), it changes nothing."""
    if torch.compiler.is_compiling() or not functorch_transforms_active():
        return contextlib.nullcontext()
    return temporarily_clear_interpreter_stack()


def functorch_transforms_active() -> bool:
    r"""Whether a :mod:`torch.func` transform (:func:`~torch.func.grad`,
    :func:`~torch.func.vmap`, ...) runs on this thread, whose wrapped
    tensors sparse products and raw memory access cannot take."""
    return bool(torch._C._are_functorch_transforms_active())


def version_counter(tensor: Tensor) -> int:
    r"""The tensor's version counter, which every in-place operation through
    torch raises (0 for inference tensors, which keep none)."""
    try:
        return tensor._version
    except RuntimeError:
        return 0


#: The :meth:`__torch_function__` of a tensor subclass whose operations
#: run as on plain tensors, with plain results and no Python call.
DISABLED_TORCH_FUNCTION = torch._C._disabled_torch_function_impl


_T = TypeVar('_T', bound=Tensor)


def as_subclass_no_view(tensor: Tensor, cls: type[_T]) -> _T:
    r""":obj:`tensor`'s memory, shape and version counter as an instance of
    :obj:`cls` that is no view in autograd's sense (:meth:`_is_view` is
    :obj:`False`), where :meth:`~torch.Tensor.as_subclass` gives an alias,
    which is one.

    torch 2.13's compiled training detaches every saved tensor that is a
    view, a graph input too, on the first call of the compiled function,
    under :obj:`_AnalyzeCustomOpInputOutputMode`; that mode hands every
    tensor of a type other than :class:`torch.Tensor` (a subclass without
    ``__torch_dispatch__`` too) back with ``NotImplemented``, and the
    :meth:`detach` of a subclass that is a view then fails with "Multiple
    dispatch failed" (pytorch/pytorch#193932). ``_make_subclass`` (what
    :class:`torch.nn.Parameter` uses) wraps a :meth:`detach` of
    :obj:`tensor`, which shares its memory and version counter but is no
    view. :obj:`tensor` must need no gradient (the result needs none)."""
    return cast(_T, Tensor._make_subclass(cls, tensor, False))
