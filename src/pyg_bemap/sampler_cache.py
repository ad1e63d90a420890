r"""Where BeMap's sampler keeps what it derives from one graph, so that a
training pass only does the random part: the edge grouping, one
``SamplingPlan`` per sampler setting, the
builder of sampled sparse adjacencies, the full graph as a sparse adjacency
(for evaluation), and the per-thread samples of layers outside a scoped
model (see :mod:`pyg_bemap.nn.sample_sharing`).
"""

import threading
import weakref
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from pyg_bemap.utils.layout import MaskedAdjacency, transposed_adjacency
from pyg_bemap.utils.sampling import (
    EdgeGrouping,
    SamplingPlan,
    draw_seeded_edge_mask,
    group_edges,
    sampling_plan,
)

#: (beta, min_keep, strategy)
SamplerKey = tuple[float, int, str]


@dataclass(eq=False)
class Sample:
    r"""One fair neighbourhood of every node: the seed it was drawn from,
    the mask of kept edges and, built once on demand, the kept edges as a
    sparse adjacency."""

    seed: int
    mask: Tensor
    adjacency: Any = field(default=None, repr=False)


class SamplerCache:
    r"""What the sampler derives from one graph and its nodes' groups and
    balance scores.

    It stays valid while the graph it was built for is unchanged: for an
    edge list, the same memory (a copy sharing it, e.g. :meth:`detach`,
    also matches) and no in-place edit since (the tensor's version
    counter); for a sparse adjacency, the same object.

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
            (default: :obj:`None`, computed here)
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
        self.sens, self.balance = sens, balance
        if grouping is None:
            grouping = group_edges(edge_index, sens, num_groups)
        self.grouping = grouping
        self._identity = _GraphIdentity(graph)
        self._plans: dict[SamplerKey, SamplingPlan] = {}
        self._masked_adjacency: MaskedAdjacency | None = None
        self._full_adjacency: Any = None
        #: The samples of layers outside a scoped model, per thread.
        self.unscoped_samples = threading.local()

    def matches(self, graph: Any) -> bool:
        r"""Whether the cache was built for :obj:`graph`, unchanged since."""
        return self._identity.matches(graph)

    def edited(self, graph: Any) -> bool:
        r"""Whether :obj:`graph` is the edge list the cache was built for,
        modified in place since."""
        return self._identity.edited(graph)

    def plan(self, key: SamplerKey) -> SamplingPlan:
        r"""The sampling plan of a setting
        :obj:`(beta, min_keep, strategy)`, computed once."""
        plan = self._plans.get(key)
        if plan is None:
            beta, min_keep, strategy = key
            plan = sampling_plan(
                self.edge_index,
                self.grouping,
                self.sens,
                self.balance,
                beta,
                min_keep,
                strategy,
            )
            self._plans[key] = plan
        return plan

    def draw(self, key: SamplerKey, seed: int) -> Sample:
        r"""The sample of a setting drawn from :obj:`seed`; the same seed
        gives the same sample."""
        return Sample(seed, draw_seeded_edge_mask(self.plan(key), seed))

    def full_adjacency(self) -> Any:
        r"""The whole graph, every edge as given (self-loops and repeated
        edges included), as a transposed sparse adjacency (see
        :func:`~pyg_bemap.utils.layout.transposed_adjacency`), built
        once."""
        if self._full_adjacency is None:
            self._full_adjacency = transposed_adjacency(
                self.edge_index, self.sens.numel()
            )
        return self._full_adjacency

    def adjacency(self, sample: Sample) -> Any:
        r"""The kept edges of :obj:`sample` as a transposed sparse adjacency
        sorted by target (see
        ``MaskedAdjacency``), built once per
        sample."""
        if sample.adjacency is None:
            if self._masked_adjacency is None:
                self._masked_adjacency = MaskedAdjacency(
                    self.edge_index, self.sens.numel()
                )
            sample.adjacency = self._masked_adjacency(sample.mask)
        return sample.adjacency


class _GraphIdentity:
    r"""Recognises one graph: an edge list by its memory and version
    counter (holding a view, so that the memory is not reused by another
    tensor), anything else by object identity (a weak reference)."""

    def __init__(self, graph: Any):
        self._edges: Tensor | None = None
        self._ref: weakref.ref | None = None
        if _is_edge_list(graph):
            self._edges = graph.as_subclass(Tensor)
            self._version = _version(graph)
        else:
            self._ref = weakref.ref(graph)

    def matches(self, graph: Any) -> bool:
        if self._ref is not None:
            return self._ref() is graph
        return self._same_memory(graph) and _version(graph) == self._version

    def edited(self, graph: Any) -> bool:
        return self._same_memory(graph) and _version(graph) != self._version

    def _same_memory(self, graph: Any) -> bool:
        edges = self._edges
        return (
            edges is not None
            and _is_edge_list(graph)
            and graph.data_ptr() == edges.data_ptr()
            and graph.device == edges.device
            and graph.shape == edges.shape
            and graph.stride() == edges.stride()
        )


def _is_edge_list(graph: Any) -> bool:
    return isinstance(graph, Tensor) and graph.layout == torch.strided


def _version(tensor: Tensor) -> int:
    try:
        return tensor._version
    except RuntimeError:  # inference tensors keep no version counter
        return 0
