r"""BeMap's sampler for one graph: it plans once and draws every pass.

A :class:`GraphSampler` keeps what it derives from one graph (the edge
grouping, one :class:`~pyg_bemap.utils.sampling.SamplingPlan` per setting,
the builder of sampled sparse adjacencies, the full graph as a sparse
adjacency for evaluation) and draws a :class:`Sample` from a seed. Which
seed a layer's call uses is decided by :mod:`pyg_bemap.nn.sample_sharing`;
the sampler gives the same :class:`Sample` object back for the same seed,
so the layers of one pass share its mask and adjacency.
"""

import threading
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from pyg_bemap.settings import SamplerSettings
from pyg_bemap.utils.gcn_graph import GCNGraph
from pyg_bemap.utils.graph_identity import GraphIdentity
from pyg_bemap.utils.layout import (
    MaskedAdjacency,
    csr_of_ones,
    transposed_adjacency,
)
from pyg_bemap.utils.sampling import (
    EdgeGrouping,
    SamplingPlan,
    draw_seeded_edge_mask,
    group_edges,
    sampling_plan,
)


class Sample:
    r"""One fair neighbourhood of every node: the seed it was drawn from and
    the mask of kept edges, and the kept edges as the graphs layers take.

    Args:
        seed (int): The seed it was drawn from.
        mask (torch.Tensor): The kept edges, a boolean mask over the edges.
        build_adjacency (callable): Builds the transposed sparse adjacency
            of a mask for features of a dtype.
        build_gcn_graph (callable): Builds the
            :class:`~pyg_bemap.utils.gcn_graph.GCNGraph` of a mask for
            features of a dtype.
    """

    def __init__(
        self,
        seed: int,
        mask: Tensor,
        build_adjacency: Callable[[Tensor, torch.dtype], Any],
        build_gcn_graph: Callable[[Tensor, torch.dtype], GCNGraph],
    ):
        self.seed, self.mask = seed, mask
        self._builders = {'sparse': build_adjacency, 'gcn': build_gcn_graph}
        self._built: dict[tuple[str, torch.dtype], Any] = {}

    def adjacency(self, dtype: torch.dtype) -> Any:
        r"""The kept edges as a transposed sparse adjacency sorted by target
        (self-loops left out, see ``MaskedAdjacency``) for features of
        :obj:`dtype`, built once per dtype."""
        return self._once('sparse', dtype)

    def gcn_graph(self, dtype: torch.dtype) -> GCNGraph:
        r"""The kept edges (self-loops left out) ready for GCN propagation,
        for features of :obj:`dtype`, built once per dtype."""
        return self._once('gcn', dtype)

    def _once(self, kind: str, dtype: torch.dtype) -> Any:
        built = self._built.get((kind, dtype))
        if built is None:
            built = self._builders[kind](self.mask, dtype)
            self._built[kind, dtype] = built
        return built

    def __repr__(self) -> str:
        kept = int(self.mask.sum())
        return (
            f'{self.__class__.__name__}(seed={self.seed}, '
            f'kept={kept}/{self.mask.numel()})'
        )


class GraphSampler:
    r"""Draws BeMap's fair neighbourhoods of one graph, from what it
    derives once from the graph and its nodes' groups and balance scores.

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
        self._identity = GraphIdentity(graph)
        self._check_groups = check_groups
        self._untracked_aliases = untracked_aliases
        self._plans: dict[tuple[float, int, str], SamplingPlan] = {}
        self._masked_adjacency: MaskedAdjacency | None = None
        self._full_graphs: dict[tuple[str, torch.dtype], Any] = {}
        self._shape: tuple[bool, bool] | None = None
        #: Per thread: the last sample of every setting, and the seeds of
        #: layers outside a scoped model (see ``sample_sharing``).
        self.per_thread = threading.local()

    def matches(self, graph: Any) -> bool:
        r"""Whether the sampler was built for :obj:`graph`, unchanged
        since."""
        return self._identity.matches(graph)

    def edited(self, graph: Any) -> bool:
        r"""Whether :obj:`graph` is the edge list the sampler was built for,
        modified in place since."""
        return self._identity.edited(graph)

    def plan(self, settings: SamplerSettings) -> SamplingPlan:
        r"""The sampling plan of :obj:`settings`, computed once per
        :attr:`~pyg_bemap.SamplerSettings.draw_key`."""
        key = settings.draw_key
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = sampling_plan(
                self.edge_index, self.grouping, self.sens, self.balance, *key
            )
        return plan

    def draw(self, settings: SamplerSettings, seed: int) -> Sample:
        r"""The sample of :obj:`settings` drawn from :obj:`seed`: the same
        seed gives the same sample, and the same object when it was this
        thread's last draw of the setting.

        Raises:
            ValueError: If the edges or the groups were edited in place
                since the sampler was built (see :meth:`check_unchanged`).
        """
        last = self.per_thread.__dict__.setdefault('last_sample', {})
        sample = last.get(settings.draw_key)
        if sample is None or sample.seed != seed:
            self.check_unchanged()
            mask = draw_seeded_edge_mask(self.plan(settings), seed)
            sample = Sample(
                seed, mask, self._sampled_adjacency, self._sampled_gcn_graph
            )
            last[settings.draw_key] = sample
        return sample

    def check_unchanged(self) -> None:
        r"""Raises a :class:`ValueError` if the edges or the sensitive
        attribute were edited in place since the sampler was built, by any
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
        return self._full(
            'sparse',
            dtype,
            lambda: transposed_adjacency(
                self.edge_index, self.sens.numel(), dtype=dtype
            ),
        )

    def full_gcn_graph(self, dtype: torch.dtype) -> GCNGraph:
        r"""The whole graph, which must have no self-loops or repeated
        edges, ready for GCN propagation for features of :obj:`dtype`,
        built once (with the check of :meth:`draw`)."""
        return self._full(
            'gcn',
            dtype,
            lambda: GCNGraph(
                csr_of_ones(self.edge_index, self.sens.numel(), dtype=dtype)
            ),
        )

    def _full(
        self, kind: str, dtype: torch.dtype, build: Callable[[], Any]
    ) -> Any:
        self.check_unchanged()
        built = self._full_graphs.get((kind, dtype))
        if built is None:
            built = self._full_graphs[kind, dtype] = build()
        return built

    def _masked(self) -> MaskedAdjacency:
        if self._masked_adjacency is None:
            self._masked_adjacency = MaskedAdjacency(
                self.edge_index, self.sens.numel()
            )
        return self._masked_adjacency

    def _sampled_adjacency(self, mask: Tensor, dtype: torch.dtype) -> Any:
        return self._masked()(mask, dtype)

    def _sampled_gcn_graph(self, mask: Tensor, dtype: torch.dtype) -> GCNGraph:
        return GCNGraph(*self._masked().csr_pair(mask, dtype))
