r"""Which forward pass is running: one top-level module call is one pass.

BeMap draws one fair neighbourhood per training pass and shares it among all
:class:`~pyg_bemap.BeMapConv` layers of the model. A layer cannot see its
model, so the pass is recognised from the outside: two global module hooks
count the nesting depth of module calls, and each call made at depth zero
(the model's own call) opens a new pass. The hooks are installed when the
first :class:`~pyg_bemap.BeMapConv` is created.
"""

from typing import Any

import torch

_depth = 0
_pass = 0
_installed = False


def _enter(module: torch.nn.Module, args: Any) -> None:
    global _depth, _pass
    if _depth == 0:
        _pass += 1
    _depth += 1


def _leave(module: torch.nn.Module, args: Any, output: Any) -> None:
    global _depth
    _depth = max(0, _depth - 1)


def install_pass_tracking() -> None:
    r"""Installs the global hooks (once per process)."""
    global _installed
    if not _installed:
        torch.nn.modules.module.register_module_forward_pre_hook(_enter)
        torch.nn.modules.module.register_module_forward_hook(
            _leave, always_call=True
        )
        _installed = True


def current_pass() -> int | None:
    r"""The id of the running pass when called from inside a module that was
    itself called by another module; :obj:`None` for a module called on its
    own (then every layer call is its own pass).
    """
    return _pass if _depth > 1 else None
