r"""Recognises the graph a sampler was built for, and tells in-place edits
of its edges apart."""

import weakref
from typing import Any

import torch
from torch import Tensor

from pyg_bemap.utils.private_api import version_counter


class GraphIdentity:
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
