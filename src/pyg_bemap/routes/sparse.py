r"""The sparse route: the graph as a transposed sparse adjacency (targets
as rows), for the layers that compute on it what they compute on the edge
list, and the full graph's and samples' adjacencies built for them."""

from typing import Any

import torch
from torch_geometric.nn.aggr import MeanAggregation, SumAggregation
from torch_geometric.nn.conv import (
    GCNConv,
    GINConv,
    GraphConv,
    MessagePassing,
    SAGEConv,
    SGConv,
    TAGConv,
)

from pyg_bemap.infra.sparse import MaskedAdjacency
from pyg_bemap.sampler import GraphSampler, Sample, remembered


def same_on_sparse(conv: MessagePassing) -> bool:
    r"""Whether :obj:`conv` computes on a transposed sparse adjacency what it
    computes on the edge list, for a graph without self-loops or repeated
    edges and features that torch.sparse's products take (as
    ``tests/nn/test_eval_promise.py`` checks, with and without
    :obj:`torch_sparse`): PyG's layers that do, by exact type (a subclass
    may change what the sparse path skips, e.g. :meth:`message`; not
    :obj:`GCNConv(improved=True)`, whose :obj:`torch.sparse` path in PyG
    adds self-loops of weight 1), and any layer whose own class says so by
    defining :obj:`computes_same_on_sparse(self) -> bool` (e.g.
    :class:`~pyg_bemap.RowNormConv`)."""
    kind = type(conv)
    declared = kind.__dict__.get('computes_same_on_sparse')
    if declared is not None:  # the layer's own word, whatever it fuses
        return bool(declared(conv))
    return (
        kind in (GCNConv, SAGEConv, SGConv, TAGConv, GraphConv, GINConv)
        and not (kind is GCNConv and conv.improved)
        and reduction(conv) is not None
        and bool(conv.fuse)
        and getattr(conv, 'decomposed_layers', 1) == 1
    )


#: The aggregations whose sparse products compute what the edge list does,
#: gradients included (a maximum or minimum picks another of tied values,
#: and PyG's products have neither on CUDA).
REDUCTIONS = {
    'add': SumAggregation,
    'sum': SumAggregation,
    'mean': MeanAggregation,
}


def reduction(conv: MessagePassing) -> str | None:
    r"""The sum or mean that :obj:`conv` aggregates by, or :obj:`None`: on
    the edge list a layer aggregates by the module its :obj:`aggr` named
    when it was built, on a sparse adjacency by the name it has at the
    call, so the two must agree (an :obj:`aggr` set later changes the
    one, not the other)."""
    aggr = getattr(conv, 'aggr', None)
    kind = REDUCTIONS.get(aggr) if isinstance(aggr, str) else None
    # no module's type is None
    return aggr if type(getattr(conv, 'aggr_module', None)) is kind else None


def masked_adjacency(sampler: GraphSampler) -> MaskedAdjacency:
    r"""The builder of the adjacencies of edge subsets of the graph."""
    return sampler.remembered(
        'masked_adjacency',
        lambda: MaskedAdjacency(sampler.edge_index, sampler.num_nodes),
    )


def sampled_adjacency(
    sampler: GraphSampler, sample: Sample, dtype: torch.dtype
) -> Any:
    r"""The kept edges of :obj:`sample` (or of the whole graph, see
    :meth:`~pyg_bemap.sampler.GraphSampler.whole`) as a transposed
    adjacency sorted by target, built once per sample and dtype."""
    return remembered(
        sample.memo,
        ('adjacency', dtype),
        lambda: masked_adjacency(sampler)(sample.mask, dtype, sample.num_kept),
    )


def graph_shape(sampler: GraphSampler) -> tuple[bool, bool]:
    r"""Whether the graph has a self-loop, and whether an edge
    :math:`(j, i)`, :math:`j \neq i`, occurs more than once."""

    def shape() -> tuple[bool, bool]:
        src, dst = sampler.edge_index.long()
        loops = bool((src == dst).any())
        key = torch.sort((dst * sampler.num_nodes + src)[src != dst]).values
        return loops, bool((key[1:] == key[:-1]).any())

    return sampler.remembered('shape', shape)
