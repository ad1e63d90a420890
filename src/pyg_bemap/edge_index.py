r"""The carrier that lets BeMap's information travel with the graph."""

import copy
import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import Tensor

from pyg_bemap.bemap_info import BeMapInfo, edges_checksum
from pyg_bemap.infra.compat import plain_tensor
from pyg_bemap.infra.private_api import (
    DISABLED_TORCH_FUNCTION,
    as_subclass_no_view,
    version_counter,
)
from pyg_bemap.rules.draw import EdgeGrouping
from pyg_bemap.rules.groups import (
    EDGE_DTYPES,
    SENS_COUNTS_NODES,
    check_edge_index,
)

#: Tensor methods whose result is the same graph: the result keeps the info.
GRAPH_PRESERVING = (
    'clone',
    'to',
    'cpu',
    'cuda',
    'detach',
    'contiguous',
    'pin_memory',
    'share_memory_',
)


class BeMapEdgeIndex(Tensor):
    r"""An :obj:`edge_index` tensor (shape :obj:`[2, E]`) that carries a
    :class:`BeMapInfo`, so that :class:`~pyg_bemap.BeMapConv` finds the node
    groups and balance scores without any change to a model's
    :obj:`forward(x, edge_index)`.

    It is read-only by contract, as the graph of PyG's :obj:`cached=True`
    layers is: the balance scores describe its edges. An in-place edit
    through torch, of the carrier or of a view of it, raises at the next
    training pass (the version counter tells of a write at no cost; after
    one, the edges are read, and a write that left them as they were is
    accepted, as for the sensitive attribute); the carrier's
    :meth:`numpy` and :obj:`numpy.asarray` give read-only arrays. Edits
    that bypass torch go unnoticed: through :obj:`.data`,
    :obj:`as_subclass`, DLPack, or the NumPy array of a view
    (:obj:`edge_index[1].numpy()`, :obj:`edge_index.t().numpy()`, which
    are plain tensors and give writable arrays). Edit the graph before
    :class:`~pyg_bemap.BalanceAwareSampling`, or apply it again after.

    It is a plain :class:`torch.Tensor` for every operation, which costs
    nothing extra (no ``__torch_function__``); only the results of
    :meth:`clone`, :meth:`to`, :meth:`cpu`, :meth:`cuda`, :meth:`detach`,
    :meth:`contiguous`, :meth:`pin_memory` and ``share_memory_`` keep
    the information (moved along), and so do :func:`copy.deepcopy`,
    :func:`torch.save` and :func:`torch.load`. Create one with
    :func:`attach_bemap` or :class:`~pyg_bemap.BalanceAwareSampling`.
    """

    bemap: BeMapInfo
    __torch_function__ = DISABLED_TORCH_FUNCTION  # type: ignore[assignment]

    def as_tensor(self) -> Tensor:
        r"""Returns the edges as a plain :class:`torch.Tensor` (no copy),
        read-only by the same contract."""
        return self.as_subclass(Tensor)

    def numpy(self, *, force: bool = False) -> np.ndarray:
        r"""The edges as a read-only NumPy array (no copy)."""
        array = self.as_subclass(Tensor).numpy(force=force)
        array.flags.writeable = False
        return array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        array = self.numpy()
        if copy:  # numpy.array(...): a writable array of its own
            return np.array(array, dtype=dtype, copy=True)
        return array if dtype is None else array.astype(dtype, copy=False)

    def __reduce_ex__(self, proto: Any) -> Any:
        # The grouping travels, so that a saved dataset need not regroup.
        return (
            _rebuild,
            (self.as_subclass(Tensor), self.bemap, _own_grouping(self)),
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> 'BeMapEdgeIndex':
        # copy.deepcopy keeps the result in memo (no copy here reaches self)
        return _rebuild(
            self.as_subclass(Tensor).clone(),
            copy.deepcopy(self.bemap, memo),
            copy.deepcopy(_own_grouping(self), memo),
        )

    def __repr__(  # type: ignore[override]
        self, *, tensor_contents: Any = None
    ) -> str:
        body = repr(self.as_subclass(Tensor)).replace('tensor(', '', 1)[:-1]
        return f'{self.__class__.__name__}({body}, bemap={self.bemap})'


def _keeping_the_information(name: str) -> Callable[..., Any]:
    method = getattr(Tensor, name)

    @functools.wraps(method)
    def keeping(self: BeMapEdgeIndex, *args: Any, **kwargs: Any) -> Any:
        out = method(self, *args, **kwargs)
        info = self.__dict__.get('bemap')
        if (
            out is self
            or info is None
            or not isinstance(out, Tensor)
            or out.dtype not in EDGE_DTYPES  # e.g. .to(torch.float): no graph
        ):
            return out
        # the result as a carrier: with the same information (and sampler)
        # when it is the same memory, e.g. detach(); else with a copy on its
        # device, holding this carrier's grouping, if known
        out = out.as_subclass(Tensor)
        if info.kept_sampler(out) is not None:
            return _rebuild(out, info)
        move = functools.partial(Tensor.to, device=out.device)
        grouping = _own_grouping(self)
        if grouping is not None:
            grouping = EdgeGrouping(*map(move, grouping))
        return _rebuild(out, info.apply(move), grouping)

    return keeping


for _name in GRAPH_PRESERVING:
    setattr(BeMapEdgeIndex, _name, _keeping_the_information(_name))


def _own_grouping(edges: 'BeMapEdgeIndex') -> EdgeGrouping | None:
    r"""The edge grouping of :obj:`edges` where its information's sampler
    is that of these edges (the information may since have served another
    graph, e.g. a sparse adjacency given as :obj:`bemap=`), else
    :obj:`None` (grouped again on first use)."""
    sampler = edges.bemap.kept_sampler(edges)
    return None if sampler is None else sampler.memo['grouping']


def _rebuild(
    edges: Tensor, info: BeMapInfo, grouping: Any = None
) -> BeMapEdgeIndex:
    # no view of 'edges' (an alias from as_subclass would be one), which
    # torch 2.13's compiled training would detach and fail on
    out = as_subclass_no_view(edges, BeMapEdgeIndex)
    out.bemap = info
    if info.edges_version is None:  # a new carrier: its edges as they are
        info.edges_version = version_counter(out)
        info.edges_checksum = edges_checksum(edges)
    if grouping is not None:
        info.sampler(out, out.as_subclass(Tensor), EdgeGrouping(*grouping))
    return out


# Graphs carrying BeMap information load with torch.load(weights_only=True)
# (registered when pyg_bemap is imported, as this module is).
torch.serialization.add_safe_globals(
    [BeMapEdgeIndex, BeMapInfo, EdgeGrouping, _rebuild]
)


def attach_bemap(
    edge_index: Tensor,
    sens: Tensor,
    balance: Tensor,
    num_groups: int | None = None,
    name: str = 'sens',
) -> BeMapEdgeIndex:
    r"""Returns a copy of :obj:`edge_index` as a :class:`BeMapEdgeIndex`
    carrying the node groups and balance scores (a copy: the input is
    neither modified nor tied to the carrier). Edges are grouped for the
    sampler here, once.

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
    plain = plain_tensor(edge_index).clone()
    out = _rebuild(plain, info)
    # the edges are grouped here, once
    _ = info.sampler(out, plain, checked=True).grouping
    return out


def get_bemap(edge_index: Any) -> BeMapInfo | None:
    r"""Returns the :class:`BeMapInfo` an :obj:`edge_index` carries, if any."""
    if isinstance(edge_index, BeMapEdgeIndex):
        return getattr(edge_index, 'bemap', None)
    return None
