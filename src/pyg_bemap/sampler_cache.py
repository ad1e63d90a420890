r"""Where BeMap's sampler keeps what it derives from one graph, so that a
training pass only does the random part: the edge grouping, one
``SamplingPlan`` per sampler setting, the
builder of sampled sparse adjacencies, the full graph as a sparse adjacency
(for evaluation), and the per-thread samples of layers outside a scoped
model (see :mod:`pyg_bemap.nn.sample_sharing`).
"""

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from pyg_bemap.utils.layout import MaskedAdjacency, transposed_adjacency
from pyg_bemap.utils.private_api import version_counter
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
    sparse adjacency (one per dtype of its values)."""

    seed: int
    mask: Tensor
    adjacency: dict[Any, Any] = field(default_factory=dict, repr=False)


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
        check_groups (callable, optional): Raises if the sensitive
            attribute the groups come from was edited since.
            (default: :obj:`None`)
        untracked_aliases (callable, optional): Whether the edges may have
            been edited without torch counting it, so that every sample
            reads them to check. (default: :obj:`None`, always)
    """

    def __init__(
        self,
        graph: Any,
        edge_index: Tensor,
        sens: Tensor,
        balance: Tensor,
        num_groups: int,
        grouping: EdgeGrouping | None = None,
        check_groups: Callable[[], None] | None = None,
        untracked_aliases: Callable[[], bool] | None = None,
    ):
        self.edge_index = edge_index
        self.sens, self.balance = sens, balance
        if grouping is None:
            grouping = group_edges(edge_index, sens, num_groups)
        self.grouping = grouping
        self._identity = _GraphIdentity(graph)
        self._check_groups = check_groups
        self._untracked_aliases = untracked_aliases
        self._plans: dict[SamplerKey, SamplingPlan] = {}
        self._masked_adjacency: MaskedAdjacency | None = None
        self._full_adjacency: dict[Any, Any] = {}
        self._shape: tuple[bool, bool] | None = None
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
        gives the same sample.

        Raises:
            ValueError: If the edges or the groups were edited in place
                since the cache was built (see :meth:`check_unchanged`).
        """
        self.check_unchanged()
        return Sample(seed, draw_seeded_edge_mask(self.plan(key), seed))

    def check_unchanged(self) -> None:
        r"""Raises a :class:`ValueError` if the edges or the sensitive
        attribute were edited in place since the cache was built, by any
        route (indexing, :obj:`.data`, a NumPy view): run once per sample
        and per use of the full graph, so that no pass uses stale counts.
        The edges' content is read only when they may have untracked
        aliases; the version counter (in :meth:`matches`) covers the
        rest."""
        if self._untracked_aliases is None or self._untracked_aliases():
            self._identity.check_unchanged()
        if self._check_groups is not None:
            self._check_groups()

    @property
    def has_self_loops(self) -> bool:
        r"""Whether the graph has an edge :math:`(i, i)`."""
        return self._graph_shape()[0]

    @property
    def has_repeated_edges(self) -> bool:
        r"""Whether an edge :math:`(j, i)`, :math:`j \neq i`, occurs more
        than once."""
        return self._graph_shape()[1]

    def _graph_shape(self) -> tuple[bool, bool]:
        if self._shape is None:
            loops = self.grouping.perm.numel() < self.edge_index.size(1)
            src, dst = self.edge_index[:, self.grouping.perm].long()
            key = torch.sort(dst * self.sens.numel() + src).values
            self._shape = (loops, bool((key[1:] == key[:-1]).any()))
        return self._shape

    def full_adjacency(self, dtype: torch.dtype) -> Any:
        r"""The whole graph, every edge as given (self-loops and repeated
        edges included), as a transposed sparse adjacency (see
        :func:`~pyg_bemap.utils.layout.transposed_adjacency`) for features
        of :obj:`dtype`, built once (with the check of :meth:`draw`)."""
        self.check_unchanged()
        adj = self._full_adjacency.get(dtype)
        if adj is None:
            adj = self._full_adjacency[dtype] = transposed_adjacency(
                self.edge_index, self.sens.numel(), dtype=dtype
            )
        return adj

    def adjacency(self, sample: Sample, dtype: torch.dtype) -> Any:
        r"""The kept edges of :obj:`sample` as a transposed sparse adjacency
        sorted by target (see ``MaskedAdjacency``) for features of
        :obj:`dtype`, built once per sample."""
        adj = sample.adjacency.get(dtype)
        if adj is None:
            if self._masked_adjacency is None:
                self._masked_adjacency = MaskedAdjacency(
                    self.edge_index, self.sens.numel()
                )
            adj = sample.adjacency[dtype] = self._masked_adjacency(
                sample.mask, dtype
            )
        return adj


class _GraphIdentity:
    r"""Recognises one graph: an edge list by its memory and version
    counter (holding a view, so that the memory is not reused by another
    tensor), anything else by object identity (a weak reference).

    An edge list also keeps the sums of its sources and of its targets, a
    fingerprint that :meth:`check_unchanged` compares to tell edits which
    bypass the version counter (through :obj:`.data` or a NumPy view),
    unless they only reorder values. The sampler runs it once per sample
    when the edges may have such aliases: one read of the edges, 0.3 to
    0.6 ms at 1.25M edges (``benchmarks/bench_staleness.py``).
    """

    def __init__(self, graph: Any):
        self._edges: Tensor | None = None
        self._ref: weakref.ref | None = None
        if _is_edge_list(graph):
            self._edges = graph.as_subclass(Tensor)
            self._version = version_counter(graph)
            self._fingerprint = _fingerprint(self._edges)
        else:
            self._ref = weakref.ref(graph)

    def matches(self, graph: Any) -> bool:
        if self._ref is not None:
            return self._ref() is graph
        return (
            self._same_memory(graph)
            and version_counter(graph) == self._version
        )

    def edited(self, graph: Any) -> bool:
        return (
            self._same_memory(graph)
            and version_counter(graph) != self._version
        )

    def check_unchanged(self) -> None:
        r"""Raises a :class:`ValueError` if the edge list's values changed
        since the identity was taken."""
        edges = self._edges
        if edges is not None and not torch.equal(
            _fingerprint(edges), self._fingerprint
        ):
            raise ValueError(EDITED_EDGES)

    def _same_memory(self, graph: Any) -> bool:
        edges = self._edges
        if edges is None or not _is_edge_list(graph):
            return False
        graph = graph.as_subclass(Tensor)  # asks a carrier nothing
        return (
            graph.data_ptr() == edges.data_ptr()
            and graph.device == edges.device
            and graph.shape == edges.shape
            and graph.stride() == edges.stride()
        )


#: The error for an edge list edited after its information was attached.
EDITED_EDGES = (
    "The edges of 'edge_index' were modified in place after "
    'BalanceAwareSampling (or AttachBeMap) attached the balance scores, '
    'which describe the old edges. Edit the graph before applying '
    'BalanceAwareSampling, or apply it again to the edited graph'
)


def _fingerprint(edges: Tensor) -> Tensor:
    return edges.sum(dim=-1)


def _is_edge_list(graph: Any) -> bool:
    return isinstance(graph, Tensor) and graph.layout == torch.strided
