r"""The carrier that lets BeMap's information travel with the graph."""

import copy
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from pyg_bemap.sampler_cache import EDITED_EDGES, SamplerCache
from pyg_bemap.utils.groups import check_edge_index, sensitive_groups
from pyg_bemap.utils.private_api import (
    DATA_GETTER,
    without_subclass_dispatch,
)
from pyg_bemap.utils.sampling import EdgeGrouping, check_balance


class BeMapInfo:
    r"""What BeMap's sampler needs to know about the nodes of a graph: the
    sensitive group and the balance score of every node.

    It also caches what the sampler derives from the graph it was last used
    with (the edges grouped per target and group, each setting's quotas),
    rebuilt when the graph changes; the samples themselves are shared as
    :mod:`pyg_bemap.nn.sample_sharing` describes.

    The groups are a copy of :obj:`sens`; every sample drawn compares them
    with :obj:`sens` and raises if :obj:`sens` was edited in place since
    (by indexing, through :obj:`.data` or a NumPy view): the balance
    scores describe the old groups.

    Args:
        sens (torch.Tensor): The sensitive group of every node, :obj:`[N]`.
        balance (torch.Tensor): The balance score of every node, :obj:`[N]`.
        num_groups (int, optional): The number of groups.
            (default: :obj:`None`, inferred)
        name (str, optional): The name of the sensitive attribute, for
            error messages. (default: :obj:`'sens'`)
    """

    def __init__(
        self,
        sens: Tensor,
        balance: Tensor,
        num_groups: int | None = None,
        name: str = 'sens',
    ):
        num_nodes = sens.numel() if isinstance(sens, Tensor) else 0
        groups, self.num_groups = sensitive_groups(
            sens, num_nodes, num_groups, name
        )
        if groups.data_ptr() == sens.data_ptr():
            groups = groups.clone()  # never the caller's memory
        self.sens = groups
        self.balance = check_balance(balance, self.sens)
        self.cache: SamplerCache | None = None
        self._source: Tensor | None = sens
        self._name = name
        #: Whether the edges may have been edited without torch counting it
        #: (see :class:`BeMapEdgeIndex`): then every sample reads them to
        #: check. True unless a carrier that owns its edges says otherwise.
        self.untracked_aliases = True

    @property
    def num_nodes(self) -> int:
        return self.sens.numel()

    @property
    def grouping(self) -> EdgeGrouping | None:
        r"""The edge grouping of the cached graph, if any."""
        return self.cache.grouping if self.cache is not None else None

    def sampler(
        self,
        graph: Any,
        edge_index: Tensor,
        grouping: EdgeGrouping | None = None,
    ) -> SamplerCache:
        r"""Returns the sampler cache of :obj:`graph` (whose (source,
        target) pairs are :obj:`edge_index`), building it when the cached
        one belongs to another graph or the graph was modified in place.

        Args:
            graph: The graph as the layers receive it.
            edge_index (torch.Tensor): Its edges, :obj:`[2, E]`.
            grouping (EdgeGrouping, optional): Its edge grouping, if known.
                (default: :obj:`None`)

        Raises:
            ValueError: If :obj:`graph` is a :class:`BeMapEdgeIndex` whose
                edges were modified in place since the information was
                attached, or the sensitive attribute was: the balance scores
                describe the old graph. (A plain edge list edited in place
                gets a new cache.)
        """
        cache = self.cache
        if cache is not None and cache.matches(graph):
            return cache
        if (
            cache is not None
            and isinstance(graph, BeMapEdgeIndex)
            and cache.edited(graph)
        ):
            raise ValueError(EDITED_EDGES)
        check_edge_index(edge_index, self.num_nodes)
        if edge_index.device != self.sens.device:
            raise ValueError(
                f'The graph is on {edge_index.device} but its '
                f'BeMap information is on {self.sens.device}'
            )
        cache = SamplerCache(
            graph,
            edge_index,
            self.sens,
            self.balance,
            self.num_groups,
            grouping,
            self.check_groups_unchanged,
            lambda: self.untracked_aliases,
        )
        self.cache = cache
        return cache

    def check_groups_unchanged(self) -> None:
        r"""Raises a :class:`ValueError` if the sensitive attribute the
        groups were copied from was edited in place since."""
        source = self._source
        if source is not None and not torch.equal(
            source.to(self.sens.dtype), self.sens
        ):
            raise ValueError(
                f"The sensitive attribute '{self._name}' was modified in "
                f'place after BalanceAwareSampling (or AttachBeMap) computed '
                f'the balance scores from it, which describe the old groups. '
                f'Edit it before applying BalanceAwareSampling, or apply it '
                f'again to the edited graph'
            )

    def apply(self, fn: Callable[[Tensor], Tensor]) -> 'BeMapInfo':
        r"""Returns a copy with :obj:`fn` applied to every tensor (e.g. a
        device move), without the sampler's cache (rebuilt on first use)."""
        out = BeMapInfo.__new__(BeMapInfo)
        out.sens, out.num_groups = fn(self.sens), self.num_groups
        out.balance = fn(self.balance)
        out.cache, out._source, out._name = None, None, self._name
        out.untracked_aliases = True  # until a carrier owns the result
        return out

    def __getstate__(self) -> dict[str, Any]:
        return {  # the cache is rebuilt on demand
            'sens': self.sens,
            'balance': self.balance,
            'num_groups': self.num_groups,
            'name': self._name,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Only the node data: states saved by earlier versions also hold
        # caches, which are rebuilt on demand.
        self.sens, self.balance = state['sens'], state['balance']
        self.num_groups, self.cache = state['num_groups'], None
        self._source, self._name = None, state.get('name', 'sens')
        self.untracked_aliases = True

    def __deepcopy__(self, memo: dict[int, Any]) -> 'BeMapInfo':
        return self.apply(lambda t: t.clone())

    def __repr__(self) -> str:
        return (
            f'{self.__class__.__name__}(num_nodes={self.num_nodes}, '
            f'num_groups={self.num_groups})'
        )


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
    same information (and caches) when it is the same memory, e.g.
    :meth:`detach`; else with a copy holding the grouping."""
    if info.cache is not None and info.cache.matches(out):
        return _rebuild(out, info)
    device = out.device

    def move(t: Tensor) -> Tensor:
        return t.to(device) if t.device != device else t

    grouping = info.grouping
    if grouping is not None:
        grouping = EdgeGrouping(*(move(t) for t in grouping))
    copy_info = info.apply(move)
    # a copy has no alias of its own yet, but the caller cannot be told
    # apart from a view here when the cache is gone: stay as cautious
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
    check_edge_index(edge_index, info.num_nodes)
    plain = edge_index.as_subclass(Tensor).clone()
    out = _rebuild(plain, info)
    info.untracked_aliases = False  # it owns its edges
    info.sampler(out, plain)  # groups the edges
    return out


def get_bemap(edge_index: Any) -> BeMapInfo | None:
    r"""Returns the :class:`BeMapInfo` an :obj:`edge_index` carries, if any."""
    if isinstance(edge_index, BeMapEdgeIndex):
        return edge_index.__dict__.get('bemap')
    return None
