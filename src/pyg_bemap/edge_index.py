r"""The carrier that lets BeMap's information travel with the graph."""

import copy
from collections.abc import Callable
from typing import Any

from torch import Tensor

from pyg_bemap.bemap_info import BeMapInfo
from pyg_bemap.utils.groups import SENS_COUNTS_NODES, check_edge_index
from pyg_bemap.utils.private_api import (
    DATA_GETTER,
    without_subclass_dispatch,
)
from pyg_bemap.utils.sampling import EdgeGrouping

# Tensor methods whose result is the same graph: the result keeps the info.
_GRAPH_PRESERVING = {
    Tensor.clone,
    Tensor.to,
    Tensor.cpu,
    Tensor.cuda,
    Tensor.detach,
    Tensor.contiguous,
    Tensor.pin_memory,
    Tensor.share_memory_,
}


#: Tensor methods that hand out the edges' memory in a form whose edits
#: torch does not count in the version counter.
_UNTRACKED_ALIASES = {
    Tensor.numpy,
    Tensor.__array__,
    Tensor.__dlpack__,
    Tensor.untyped_storage,
    Tensor.data_ptr,
    Tensor.share_memory_,
    DATA_GETTER,
}


class BeMapEdgeIndex(Tensor):
    r"""An :obj:`edge_index` tensor (shape :obj:`[2, E]`) that carries a
    :class:`BeMapInfo`, so that :class:`~pyg_bemap.BeMapConv` finds the node
    groups and balance scores without any change to a model's
    :obj:`forward(x, edge_index)`.

    It owns its edges (:func:`attach_bemap` copies them) and notices when
    their memory is handed out in a form whose edits torch does not count
    (:obj:`.data`, :meth:`numpy`, :meth:`as_tensor`, a view by indexing,
    ...): until then, in-place edits are caught by the version counter
    alone; from then on every sample also reads the edges to check their
    content. :func:`torch.utils.dlpack.to_dlpack` and :obj:`as_subclass`
    bypass this notice, so edits through their results go unnoticed: use
    :meth:`as_tensor` for a plain alias.

    It is a plain :class:`torch.Tensor` for every operation; only the results
    of :meth:`clone`, :meth:`to`, :meth:`cpu`, :meth:`cuda`, :meth:`detach`,
    :meth:`contiguous` and :meth:`pin_memory` keep the information (moved
    along), and so do :func:`copy.deepcopy`, :func:`torch.save` and
    :func:`torch.load`. Create one with :func:`attach_bemap` or
    :class:`~pyg_bemap.BalanceAwareSampling`.
    """

    bemap: BeMapInfo

    @classmethod
    def __torch_function__(
        cls,
        func: Callable,
        types: Any,
        args: Any = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        kwargs = kwargs or {}
        with without_subclass_dispatch():
            out = func(*args, **kwargs)
            _notice_aliases(func, args, out)
        if (
            func in _GRAPH_PRESERVING
            and isinstance(out, Tensor)
            and isinstance(args[0], BeMapEdgeIndex)
            and 'bemap' in args[0].__dict__
        ):
            if out is args[0]:
                return args[0]
            return _carry(out, args[0].bemap)
        return out

    def as_tensor(self) -> Tensor:
        r"""Returns the edges as a plain :class:`torch.Tensor` (no copy): an
        alias whose edits every later sample checks for."""
        info = self.__dict__.get('bemap')
        if info is not None:
            info.untracked_aliases = True
        return self.as_subclass(Tensor)

    def __reduce_ex__(self, proto: Any) -> Any:
        # The grouping travels, so that a saved dataset need not regroup.
        return (
            _rebuild,
            (self.as_subclass(Tensor), self.bemap, self.bemap.grouping),
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> 'BeMapEdgeIndex':
        grouping = self.bemap.grouping
        if grouping is not None:
            grouping = EdgeGrouping(*(t.clone() for t in grouping))
        out = _rebuild(
            self.as_subclass(Tensor).clone(),
            copy.deepcopy(self.bemap),
            grouping,
        )
        memo[id(self)] = out
        return out

    def __repr__(  # type: ignore[override]
        self, *, tensor_contents: Any = None
    ) -> str:
        body = repr(self.as_subclass(Tensor)).replace('tensor(', '', 1)[:-1]
        return f'{self.__class__.__name__}({body}, bemap={self.bemap})'


def _notice_aliases(func: Callable, args: Any, out: Any) -> None:
    r"""Marks the carrier's edges as possibly edited behind torch's back
    when :obj:`func` handed out their memory: a method of
    :obj:`_UNTRACKED_ALIASES`, or a result that is not a carrier but shares
    the carrier's storage (a view, whose own :obj:`.data` or
    :meth:`numpy` would escape this notice). Runs without subclass
    dispatch."""
    carrier = args[0] if args else None
    if not isinstance(carrier, BeMapEdgeIndex):
        return
    info = carrier.__dict__.get('bemap')
    if info is None or info.untracked_aliases:
        return
    if func in _UNTRACKED_ALIASES:
        info.untracked_aliases = True
        return
    if func in _GRAPH_PRESERVING:  # its result becomes a carrier
        return
    storage = carrier.untyped_storage().data_ptr()
    results = out if isinstance(out, (tuple, list)) else (out,)
    info.untracked_aliases = any(
        isinstance(t, Tensor)
        and not isinstance(t, BeMapEdgeIndex)
        and t.untyped_storage().data_ptr() == storage
        for t in results
    )


def _carry(out: Tensor, info: BeMapInfo) -> BeMapEdgeIndex:
    r"""The result of a graph-preserving operation as a carrier: with the
    same information (and sampler) when it is the same memory, e.g.
    :meth:`detach`; else with a copy holding the grouping."""
    sampler = info.graph_sampler
    if sampler is not None and sampler.matches(out):
        return _rebuild(out, info)
    device = out.device

    def move(t: Tensor) -> Tensor:
        return t.to(device) if t.device != device else t

    grouping = info.grouping
    if grouping is not None:
        grouping = EdgeGrouping(*(move(t) for t in grouping))
    copy_info = info.apply(move)
    # a copy has no alias of its own yet, but the caller cannot be told
    # apart from a view here when the sampler is gone: stay as cautious
    copy_info.untracked_aliases = info.untracked_aliases
    return _rebuild(out, copy_info, grouping)


def _rebuild(
    edges: Tensor, info: BeMapInfo, grouping: Any = None
) -> BeMapEdgeIndex:
    out = edges.as_subclass(BeMapEdgeIndex)
    out.bemap = info
    if grouping is not None:
        info.sampler(out, out.as_subclass(Tensor), EdgeGrouping(*grouping))
    return out


def attach_bemap(
    edge_index: Tensor,
    sens: Tensor,
    balance: Tensor,
    num_groups: int | None = None,
    name: str = 'sens',
) -> BeMapEdgeIndex:
    r"""Returns a copy of :obj:`edge_index` as a :class:`BeMapEdgeIndex`
    carrying the node groups and balance scores (a copy, so that no alias of
    the input made before escapes the check for stale edges; the input is
    not modified). Edges are grouped for the sampler here, once.

    Args:
        edge_index (torch.Tensor): The edges, shape :obj:`[2, E]`.
        sens (torch.Tensor): The sensitive group of every node, :obj:`[N]`.
        balance (torch.Tensor): The balance score of every node, :obj:`[N]`.
        num_groups (int, optional): The number of groups.
            (default: :obj:`None`, inferred)
        name (str, optional): The name of the sensitive attribute, for
            error messages. (default: :obj:`'sens'`)
    """
    info = BeMapInfo(sens, balance, num_groups, name)
    check_edge_index(edge_index, info.num_nodes, SENS_COUNTS_NODES)
    return carrier_of(edge_index, info)


def carrier_of(edge_index: Tensor, info: BeMapInfo) -> BeMapEdgeIndex:
    r""":func:`attach_bemap` for an :obj:`edge_index` and :obj:`info` that
    were checked already (by :func:`attach_bemap` or
    :class:`~pyg_bemap.BalanceAwareSampling`)."""
    plain = edge_index.as_subclass(Tensor).clone()
    out = _rebuild(plain, info)
    info.untracked_aliases = False  # it owns its edges
    info.sampler(out, plain, checked=True)  # groups the edges
    return out


def get_bemap(edge_index: Any) -> BeMapInfo | None:
    r"""Returns the :class:`BeMapInfo` an :obj:`edge_index` carries, if any."""
    if isinstance(edge_index, BeMapEdgeIndex):
        return edge_index.__dict__.get('bemap')
    return None
