r"""BeMap's sampler for one graph: it plans once and draws a sample every
pass.

A :class:`GraphSampler` keeps what it derives from one graph (the edge
grouping and one :class:`~pyg_bemap.rules.draw.SamplingPlan` per setting)
and draws a :class:`Sample` from a seed. Each keeps what is derived from it
in one :attr:`memo`, where the routes of :mod:`pyg_bemap.routes` also keep
the forms of the graph and of the sample that layers take (the sampler
knows nothing of them): one store per graph and one per sample, which go
with them. Which seed a call uses is decided by
:mod:`pyg_bemap.nn.sample_sharing`.
"""

import functools
import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from pyg_bemap.infra.compat import plain_tensor
from pyg_bemap.infra.private_api import version_counter
from pyg_bemap.infra.replay import SeededReplay
from pyg_bemap.rules.draw import (
    EdgeGrouping,
    SamplingPlan,
    draw_edge_mask,
    group_edges,
    kept_positions,
    sampling_plan,
)
from pyg_bemap.settings import SamplerSettings


class Sample:
    r"""One fair neighbourhood of every node: the seed it was drawn from,
    the mask of kept edges, their number (fixed by the plan, so that no
    one counts the mask), and a memo of what is derived from it: the kept
    edges' positions and the forms of the kept edges that routes build
    for layers (each built once per sample, on first use).

    Args:
        seed (int): The seed it was drawn from.
        mask (torch.Tensor): The kept edges, a boolean mask over the edges.
        num_kept (int): The number of kept edges.
    """

    def __init__(self, seed: int, mask: Tensor, num_kept: int):
        self.seed, self.mask, self.num_kept = seed, mask, num_kept
        self.memo: dict[Any, Any] = {}

    @property
    def positions(self) -> Tensor:
        r"""The positions of the kept edges, in the graph's edge order."""
        return remembered(
            self.memo,
            'positions',
            lambda: kept_positions(self.mask, self.num_kept),
        )

    def __repr__(self) -> str:
        return (
            f'{self.__class__.__name__}(seed={self.seed}, '
            f'kept={self.num_kept}/{self.mask.numel()})'
        )


class GraphSampler:
    r"""Draws BeMap's fair neighbourhoods of one graph, from what it
    derives once from the graph and its nodes' groups and balance scores.

    It belongs to the graph it was built for while that graph is unchanged
    (:meth:`matches`): for an edge list, the same memory (a copy sharing
    it, e.g. :meth:`detach`, also matches) and no in-place edit through
    torch since (the tensor's version counter); for a sparse adjacency,
    the same object.

    Args:
        graph: The graph the layers receive (an edge list, a
            :class:`torch_sparse.SparseTensor` or a :obj:`torch.sparse`
            adjacency).
        edge_index (torch.Tensor): Its (source, target) pairs,
            :obj:`[2, E]`, in the order of its edges.
        sens (torch.Tensor): The group of every node.
        balance (torch.Tensor): The balance score of every node.
        num_groups (int): The number of groups.
        grouping (EdgeGrouping, optional): The edge grouping, when known.
            (default: :obj:`None`, computed on the first draw)
    """

    def __init__(
        self,
        graph: Any,
        edge_index: Tensor,
        sens: Tensor,
        balance: Tensor,
        num_groups: int,
        grouping: EdgeGrouping | None = None,
    ):
        self.edge_index = edge_index
        self.sens, self.balance, self.num_groups = sens, balance, num_groups
        self._identity = _identity(graph)
        if is_edge_list(graph):  # its memory is never another tensor's
            self._pinned = plain_tensor(graph)
        #: What is derived from the whole graph: the grouping (:obj:`None`
        #: until computed), each setting's plan, draw and last sample, and
        #: the routes' forms.
        self.memo: dict[Any, Any] = {'grouping': grouping}

    @property
    def num_nodes(self) -> int:
        return self.sens.numel()

    @property
    def grouping(self) -> EdgeGrouping:
        r"""The non-self-loop edges grouped by target and source group."""
        return self.remembered(
            'grouping',
            lambda: group_edges(self.edge_index, self.sens, self.num_groups),
        )

    def matches(self, graph: Any) -> bool:
        r"""Whether the sampler was built for :obj:`graph`, unchanged
        since."""
        if is_edge_list(graph):
            return _identity(graph) == self._identity
        # the referent itself: weak references compare live referents with
        # ==, which a sparse tensor answers with an error
        known = self._identity
        return isinstance(known, weakref.ref) and known() is graph

    def plan(self, settings: SamplerSettings) -> SamplingPlan:
        r"""The sampling plan of :obj:`settings`, computed once per
        :attr:`~pyg_bemap.SamplerSettings.draw_key`."""
        key = settings.draw_key
        return self.remembered(
            ('plan', key),
            lambda: sampling_plan(
                self.edge_index, self.grouping, self.sens, self.balance, *key
            ),
        )

    def draw(self, settings: SamplerSettings, seed: int) -> Sample:
        r"""The sample of :obj:`settings` drawn from :obj:`seed`: the same
        seed gives the same mask. The keys come from a generator seeded
        with :obj:`seed`; on CUDA a plan drawn again replays its draw from
        a CUDA graph (:class:`~pyg_bemap.infra.replay.SeededReplay`)."""
        plan = self.plan(settings)
        draw = self.remembered(
            ('draw', settings.draw_key),
            lambda: SeededReplay(
                functools.partial(draw_edge_mask, plan), self.sens.device
            ),
        )
        return Sample(seed, draw(seed), plan.num_kept)

    def whole(self) -> Sample:
        r"""The full graph as a sample (seed :obj:`-1`) that keeps every
        edge but the self-loops, which no sample keeps: routes build its
        forms in its memo as for a drawn sample, once per graph."""

        def build() -> Sample:
            kept = self.edge_index[0] != self.edge_index[1]
            return Sample(-1, kept, int(kept.sum()))

        return self.remembered('whole', build)

    def remembered(self, key: Any, build: Callable[[], Any]) -> Any:
        r"""What :obj:`build` derives from the whole graph, built once per
        :obj:`key` (see :attr:`memo`)."""
        return remembered(self.memo, key, build)


def remembered(
    memo: dict[Any, Any], key: Any, build: Callable[[], Any]
) -> Any:
    r""":obj:`memo[key]`, built by :obj:`build` on first use, outside
    inference mode (what is kept outlives the call: a later call may save
    it for a backward pass, which no inference tensor can be)."""
    value = memo.get(key)
    if value is None:
        with torch.inference_mode(False):
            value = memo[key] = build()
    return value


def _identity(graph: Any) -> Any:
    r"""What tells one graph from another: an edge list by its memory and
    version counter, anything else by object identity (a weak reference,
    so that a new object never takes a dead one's place)."""
    if is_edge_list(graph):
        plain = plain_tensor(graph)
        return (
            plain.data_ptr(),
            plain.device,
            tuple(plain.shape),
            plain.stride(),
            version_counter(plain),
        )
    return weakref.ref(graph)


def is_edge_list(graph: Any) -> bool:
    r"""Whether :obj:`graph` is an edge list (a dense tensor), not a
    sparse adjacency."""
    return isinstance(graph, Tensor) and graph.layout == torch.strided
