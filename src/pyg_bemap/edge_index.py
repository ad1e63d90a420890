r"""The carrier that lets BeMap's information travel with the graph."""

import copy
import weakref
from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch import Tensor

from pyg_bemap.utils.groups import check_edge_index, sensitive_groups
from pyg_bemap.utils.layout import MaskedAdjacency
from pyg_bemap.utils.sampling import (
    EdgeGrouping,
    SamplingPlan,
    check_balance,
    draw_edge_mask,
    group_edges,
    sampling_plan,
)

SamplerKey = tuple[float, int, str]


class _Sample(NamedTuple):
    mask: Tensor
    forward_pass: int | None
    consumers: set[int]
    adjacency: dict[str, Any]  # the sample in other layouts, built once


class BeMapInfo:
    r"""What BeMap's sampler needs about a graph: the sensitive group and the
    balance score of every node, and caches derived from them for one edge
    structure.

    The caches (the edge grouping, one
    :class:`~pyg_bemap.utils.sampling.SamplingPlan` per sampler setting and
    the current pass's sample) are valid for the graph object named by
    :meth:`bind`; they are rebuilt when another graph comes.

    Args:
        sens (torch.Tensor): The sensitive group of every node, :obj:`[N]`.
        balance (torch.Tensor): The balance score of every node, :obj:`[N]`.
        num_groups (int, optional): The number of groups.
            (default: :obj:`None`, inferred)
    """

    def __init__(
        self, sens: Tensor, balance: Tensor, num_groups: int | None = None
    ):
        num_nodes = sens.numel() if isinstance(sens, Tensor) else 0
        self.sens, self.num_groups = sensitive_groups(
            sens, num_nodes, num_groups
        )
        self.balance = check_balance(balance, self.sens)
        self.grouping: EdgeGrouping | None = None
        self._masked_adjacency: MaskedAdjacency | None = None
        self._graph: weakref.ref | None = None
        self._plans: dict[SamplerKey, SamplingPlan] = {}
        self._samples: dict[SamplerKey, _Sample] = {}

    @property
    def num_nodes(self) -> int:
        return self.sens.numel()

    def bind(self, graph: Any, edge_index: Tensor) -> None:
        r"""Makes the caches belong to :obj:`graph` (whose edges are
        :obj:`edge_index`), rebuilding them if they belonged to another one.
        """
        if self._graph is not None and self._graph() is graph:
            return
        check_edge_index(edge_index, self.num_nodes)
        if edge_index.device != self.sens.device:
            raise ValueError(
                f'The graph is on {edge_index.device} but its '
                f'BeMap information is on {self.sens.device}'
            )
        grouping = self.grouping
        if grouping is None or self._graph is not None:
            grouping = group_edges(edge_index, self.sens, self.num_groups)
        self.grouping = grouping
        self._masked_adjacency = None
        self._graph = weakref.ref(graph)
        self._plans, self._samples = {}, {}

    def plan(self, edge_index: Tensor, key: SamplerKey) -> SamplingPlan:
        r"""Returns the cached
        :class:`~pyg_bemap.utils.sampling.SamplingPlan` of a sampler
        setting."""
        if key not in self._plans:
            assert self.grouping is not None, 'call bind() first'
            beta, min_keep, strategy = key
            self._plans[key] = sampling_plan(
                edge_index,
                self.grouping,
                self.sens,
                self.balance,
                beta,
                min_keep,
                strategy,
            )
        return self._plans[key]

    def shared_sample(
        self,
        graph: Any,
        edge_index: Tensor,
        key: SamplerKey,
        consumer: int,
        forward_pass: int | None = None,
        generator: torch.Generator | None = None,
    ) -> Tensor:
        r"""Returns the edge mask of the current training pass.

        A new sample is drawn when :obj:`forward_pass` (the id of the model
        call, see :mod:`pyg_bemap.nn.forward_pass`) changes. Without a pass
        id (layers called on their own), every layer (:obj:`consumer`) gets
        the same sample until a layer asks a second time.
        """
        self.bind(graph, edge_index)
        current = self._samples.get(key)
        if forward_pass is not None:
            fresh = current is None or current.forward_pass != forward_pass
        else:
            fresh = (
                current is None
                or current.forward_pass is not None
                or consumer in current.consumers
            )
        if fresh:
            mask = draw_edge_mask(self.plan(edge_index, key), generator)
            current = _Sample(mask, forward_pass, set(), {})
            self._samples[key] = current
        assert current is not None
        current.consumers.add(consumer)
        return current.mask

    def sampled_adjacency(self, edge_index: Tensor, key: SamplerKey) -> Any:
        r"""The current sample of a sampler setting as a transposed sparse
        adjacency sorted by target and source, with its transpose (see
        :class:`~pyg_bemap.utils.layout.MaskedAdjacency`), built once per
        sample and shared by the layers of a pass.
        """
        current = self._samples[key]
        if 'sparse' in current.adjacency:
            return current.adjacency['sparse']
        if self._masked_adjacency is None:
            self._masked_adjacency = MaskedAdjacency(
                edge_index, self.num_nodes
            )
        adjacency = self._masked_adjacency(current.mask)
        current.adjacency['sparse'] = adjacency
        return adjacency

    def apply(self, fn: Callable[[Tensor], Tensor]) -> 'BeMapInfo':
        r"""Returns a copy with :obj:`fn` applied to every tensor (e.g. a
        device move); the grouping is carried over, the other caches are
        rebuilt on demand.
        """
        out = BeMapInfo.__new__(BeMapInfo)
        out.sens, out.num_groups = fn(self.sens), self.num_groups
        out.balance = fn(self.balance)
        out.grouping, out._masked_adjacency = None, None
        if self.grouping is not None:
            out.grouping = EdgeGrouping(*(fn(t) for t in self.grouping))
        out._graph, out._plans, out._samples = None, {}, {}
        return out

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state.update(
            _graph=None, _plans={}, _samples={}, _masked_adjacency=None
        )
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        if self.grouping is not None:
            self.grouping = EdgeGrouping(*self.grouping)

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


class BeMapEdgeIndex(Tensor):
    r"""An :obj:`edge_index` tensor (shape :obj:`[2, E]`) that carries a
    :class:`BeMapInfo`, so that :class:`~pyg_bemap.BeMapConv` finds the node
    groups and balance scores without any change to a model's
    :obj:`forward(x, edge_index)`.

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
        with torch._C.DisableTorchFunctionSubclass():
            out = func(*args, **kwargs)
        if (
            func in _GRAPH_PRESERVING
            and isinstance(out, Tensor)
            and isinstance(args[0], BeMapEdgeIndex)
            and 'bemap' in args[0].__dict__
        ):
            if out is args[0]:
                return args[0]
            return _carry(out, args[0].bemap, out.device)
        return out

    def as_tensor(self) -> Tensor:
        r"""Returns the edges as a plain :class:`torch.Tensor` (no copy)."""
        return self.as_subclass(Tensor)

    def __reduce_ex__(self, proto: Any) -> Any:
        return (_rebuild, (self.as_tensor(), self.bemap))

    def __deepcopy__(self, memo: dict[int, Any]) -> 'BeMapEdgeIndex':
        out = _rebuild(self.as_tensor().clone(), copy.deepcopy(self.bemap))
        memo[id(self)] = out
        return out

    def __repr__(  # type: ignore[override]
        self, *, tensor_contents: Any = None
    ) -> str:
        body = repr(self.as_tensor()).replace('tensor(', '', 1)[:-1]
        return f'{self.__class__.__name__}({body}, bemap={self.bemap})'


def _carry(
    edges: Tensor, info: BeMapInfo, device: torch.device
) -> BeMapEdgeIndex:
    out = edges.as_subclass(BeMapEdgeIndex)
    if info.sens.device != device:
        info = info.apply(lambda t: t.to(device))
    else:
        info = info.apply(lambda t: t)
    out.bemap = info
    return out


def _rebuild(edges: Tensor, info: BeMapInfo) -> BeMapEdgeIndex:
    out = edges.as_subclass(BeMapEdgeIndex)
    out.bemap = info
    return out


def attach_bemap(
    edge_index: Tensor,
    sens: Tensor,
    balance: Tensor,
    num_groups: int | None = None,
) -> BeMapEdgeIndex:
    r"""Returns :obj:`edge_index` as a :class:`BeMapEdgeIndex` carrying the
    node groups and balance scores (sharing memory with the input, which is
    not modified). Edges are grouped for the sampler here, once.

    Args:
        edge_index (torch.Tensor): The edges, shape :obj:`[2, E]`.
        sens (torch.Tensor): The sensitive group of every node, :obj:`[N]`.
        balance (torch.Tensor): The balance score of every node, :obj:`[N]`.
        num_groups (int, optional): The number of groups.
            (default: :obj:`None`, inferred)
    """
    info = BeMapInfo(sens, balance, num_groups)
    plain = (
        edge_index.as_subclass(Tensor)
        if isinstance(edge_index, Tensor)
        else edge_index
    )
    check_edge_index(plain, info.num_nodes)
    out = _rebuild(plain, info)
    info.bind(out, plain)
    return out


def get_bemap(edge_index: Any) -> BeMapInfo | None:
    r"""Returns the :class:`BeMapInfo` an :obj:`edge_index` carries, if any."""
    if isinstance(edge_index, BeMapEdgeIndex):
        return edge_index.__dict__.get('bemap')
    return None
