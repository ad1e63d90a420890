r"""How a :class:`~pyg_bemap.BeMapConv` runs the layer it wraps: a route
builds the layer's graph from the full graph (evaluation) or from a
sample (training) and calls the layer.

.. list-table::
    :header-rows: 1

    * - route
      - layers
      - the graph the layer gets
    * - :obj:`edge_list_route`
      - any
      - the edges as given, or the kept edges with every edge-level
        argument masked alike
    * - :obj:`sparse_route`
      - those that compute the same function on a sparse adjacency
        (``same_on_sparse`` in ``routes/sparse.py``)
      - a transposed sparse adjacency, built once per graph or sample
    * - :obj:`gcn_route`
      - a plain :class:`~torch_geometric.nn.conv.GCNConv`
        (``computes_gcn`` in ``routes/gcn.py``)
      - none: GCN's propagation from the layer's own parameters
        (``routes/gcn.py``)

The fast routes (:obj:`sparse_route`, :obj:`gcn_route`) are an
optimisation that never changes a result or raises where the layer's own
call would not, but for one thing: PyG's sparse products of the
:obj:`sparse_route` have no second derivative (docs/options.md,
"Layouts", says which layers, and that :obj:`layout='edge_index'` has
it). A layer's route is decided once (``layer_route``, kept by a
``RouteChoice``), and again at a call where the layer's options changed
(``layer_options``: an aggregation set later, a hook registered); a call
that it cannot honour (``honours``) takes the edge list: a graph without
BeMap information or not an edge list, features that are not one dense
matrix of the graph's nodes or of a dtype torch.sparse's products take
(not half precision), autocast, :func:`torch.compile`,
:mod:`torch.func` transforms, edge-level arguments, and, for
:obj:`gcn_route`, any other argument, for :obj:`sparse_route`, a graph
with self-loops (in evaluation) or repeated edges. A layer with hooks on
its message passing or on any of its modules, or explained, takes the
edge list whatever the call.
"""

from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch import Tensor
from torch.utils.hooks import RemovableHandle

from pyg_bemap.bemap_info import BeMapInfo
from pyg_bemap.edge_index import BeMapEdgeIndex, get_bemap
from pyg_bemap.infra.private_api import (
    functorch_transforms_active,
    has_module_hooks,
    has_propagation_hooks,
    outside_functorch_transforms,
    registered_child,
    registered_parameter,
)
from pyg_bemap.infra.sparse import quiet_sparse, sparse_product_takes
from pyg_bemap.routes.edge_list import (
    edge_level_args_given,
    edge_pairs,
    kept_edges,
    mask_edge_level_args,
)
from pyg_bemap.routes.gcn import GCNGraph, computes_gcn, gcn_forward
from pyg_bemap.routes.sparse import (
    graph_shape,
    masked_adjacency,
    same_on_sparse,
    sampled_adjacency,
)
from pyg_bemap.sampler import GraphSampler, Sample, is_edge_list, remembered


class GraphInput:
    r"""The graph a call received: as given, as the inner layer takes it (a
    carrier becomes a plain tensor), its BeMap information and its sampler
    (found on first use). For a layer whose messages flow from
    :obj:`edge_index[1]` to :obj:`edge_index[0]`
    (:obj:`flow='target_to_source'`), the sampler draws over the flipped
    pairs, so that every node's fair neighbourhood is drawn among the edges
    it aggregates."""

    def __init__(
        self, edge_index: Any, bemap: BeMapInfo | None, flow: str | None
    ):
        if bemap is not None and not isinstance(bemap, BeMapInfo):
            raise ValueError(
                f"'bemap' must be a BeMapInfo (got "
                f'{type(bemap).__name__}); build one with '
                f"'BeMapInfo(sens, balance)'"
            )
        self.info = bemap if bemap is not None else get_bemap(edge_index)
        self.given = edge_index
        self.plain = edge_index
        if isinstance(edge_index, BeMapEdgeIndex):
            with outside_functorch_transforms():
                # a plain view (the carrier's ops give plain tensors), which
                # torch.compile traces where it breaks on as_subclass
                self.plain = edge_index.view_as(edge_index)
        self.flipped = flow == 'target_to_source'
        self._sampler: GraphSampler | None = None

    def sampler(self) -> GraphSampler:
        r"""The graph's sampler (see :meth:`BeMapInfo.sampler`); the
        graph's pairs are read only when a new sampler is built."""
        if self._sampler is None:
            assert self.info is not None
            self._sampler = self.info.kept_sampler(self.given, self.flipped)
            if self._sampler is None:
                pairs = edge_pairs(self.plain)
                pairs = pairs.flip(0) if self.flipped else pairs
                self._sampler = self.info.sampler(
                    self.given, pairs, flipped=self.flipped
                )
        return self._sampler


class LayerCall(NamedTuple):
    r"""A call of the inner layer: the layer, its positional argument
    names, the features, the arguments after the graph and the wrapper's
    :obj:`layout`."""

    conv: Any
    arg_names: tuple[str, ...]
    x: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    layout: str = 'auto'


#: A route: runs the call on the full graph (no sample) or on a sample.
Route = Callable[[LayerCall, GraphInput, Sample | None], Any]


def edge_list_route(
    call: LayerCall, graph: GraphInput, sample: Sample | None
) -> Any:
    r"""The layer's own call on the edges, right for any layer."""
    if sample is None:
        return call.conv(call.x, graph.plain, *call.args, **call.kwargs)
    args, kwargs = mask_edge_level_args(call, sample)
    # The graph in its layout, with the kept edges of the sample only. Like
    # the sample (drawn in BeMapConv._sample), it is made outside any
    # torch.func transform, as plain tensors: under a transform, only these
    # two reach the graph and its sampler (the fast routes, which would
    # too, step aside).
    with outside_functorch_transforms():
        kept = kept_edges(graph.plain, sample)
    return call.conv(call.x, kept, *args, **kwargs)


def sparse_route(
    call: LayerCall, graph: GraphInput, sample: Sample | None
) -> Any:
    r"""The layer's call on a transposed sparse adjacency."""
    sampler = graph.sampler()
    kept = sample if sample is not None else sampler.whole()
    adj = sampled_adjacency(sampler, kept, call.x.dtype)
    with quiet_sparse():  # our choice of layout: no torch notices
        return call.conv(call.x, adj, *call.args, **call.kwargs)


def gcn_route(
    call: LayerCall, graph: GraphInput, sample: Sample | None
) -> Any:
    r"""GCN's propagation from the layer's own parameters."""
    sampler, dtype = graph.sampler(), call.x.dtype
    kept = sample if sample is not None else sampler.whole()

    def build() -> GCNGraph:
        masked = masked_adjacency(sampler)
        return GCNGraph(masked.csr_parts(kept.mask, kept.num_kept), dtype)

    built = remembered(kept.memo, ('gcn', dtype), build)
    return gcn_forward(call.conv, call.x, built)


#: The layer's attributes that its route depends on, besides its type,
#: its modules and its explanation (:func:`layer_options`).
OPTION_NAMES = (
    'flow',
    'aggr',
    'fuse',
    'decomposed_layers',
    'improved',
    'normalize',
    'add_self_loops',
    'cached',
)


def layer_options(conv: Any, layout: str) -> tuple[Any, ...]:
    r"""Everything :func:`layer_route` reads of a layer: its type, its
    options (:obj:`OPTION_NAMES`, as set on it), whether it is explained,
    its aggregation and linear modules, what a class that declares
    :obj:`computes_same_on_sparse` says, the layout, and the count of
    hooks ever registered (:obj:`torch.utils.hooks.RemovableHandle.next_id`,
    which every registration raises). Read from the layer's dictionaries:
    an attribute it lacks costs no exception."""
    attributes = vars(conv)
    lin = registered_child(conv, 'lin')
    declared = type(conv).__dict__.get('computes_same_on_sparse')
    return (
        layout,
        type(conv),
        RemovableHandle.next_id,
        *[attributes.get(name) for name in OPTION_NAMES],
        getattr(conv, 'explain', None),
        type(registered_child(conv, 'aggr_module')),
        type(lin),
        lin is None or registered_parameter(lin, 'bias') is None,
        None if declared is None else bool(declared(conv)),
    )


def hooked(conv: Any) -> bool:
    r"""Whether a hook or an explanation would see the layer's call or its
    message passing, which the fast routes change or skip."""
    return has_propagation_hooks(conv) or has_module_hooks(conv)


def layer_route(conv: Any, layout: str) -> Route:
    r"""The fastest route that computes what :obj:`conv` computes, from
    what the layer is (:func:`honours` then asks the call)."""
    if (
        layout == 'edge_index'
        or getattr(conv, 'flow', None) != 'source_to_target'
        or hooked(conv)
    ):
        return edge_list_route
    if computes_gcn(conv):
        return gcn_route
    return sparse_route if same_on_sparse(conv) else edge_list_route


class RouteChoice:
    r"""A layer's route, decided by :func:`layer_route` at its first call
    and again at a call where :func:`layer_options` changed (an option set
    after construction, a hook registered): one comparison per call. A
    layer whose hooks chose the edge list decides at every call (so the
    fast route comes back when they are removed, which raises no
    counter)."""

    def __init__(self) -> None:
        self.options: tuple[Any, ...] | None = None
        self.route: Route = edge_list_route

    def of(self, conv: Any, layout: str) -> Route:
        options = layer_options(conv, layout)
        if options != self.options:
            self.route = layer_route(conv, layout)
            self.options = None if hooked(conv) else options
        return self.route


def choose_route(
    choice: RouteChoice,
    call: LayerCall,
    graph: GraphInput,
    sample: Sample | None,
) -> Route:
    r"""The route of a call: the layer's route (:class:`RouteChoice`) when
    the call lets it compute exactly the layer's own call
    (:func:`honours`), else :func:`edge_list_route`; under
    :func:`torch.compile` always the edge list."""
    if torch.compiler.is_compiling():
        return edge_list_route
    route = choice.of(call.conv, call.layout)
    if route is edge_list_route or not honours(route, call, graph, sample):
        return edge_list_route
    return route


def honours(
    route: Route, call: LayerCall, graph: GraphInput, sample: Sample | None
) -> bool:
    r"""Whether :obj:`route` computes exactly the layer's own call: on an
    edge list with BeMap information, with features that are one dense
    matrix of the graph's nodes that torch.sparse's products take (no
    half precision, no autocast), outside :mod:`torch.func` transforms;
    for :obj:`gcn_route` with no other argument, for :obj:`sparse_route`
    with no edge-level argument and on a graph without repeated edges
    (nor self-loops, in evaluation). Inference mode is no exception: what
    routes keep is built outside it (``remembered``)."""
    x, info = call.x, graph.info
    if (
        info is None
        or not is_edge_list(graph.plain)
        or not isinstance(x, Tensor)
        or x.layout != torch.strided
        or x.shape[:-1] != (info.num_nodes,)  # [N, F]
        or not sparse_product_takes(x)  # autocast would cast it
        or functorch_transforms_active()
    ):
        return False
    if route is gcn_route:  # it takes no other argument
        return all(a is None for a in [*call.args, *call.kwargs.values()])
    if edge_level_args_given(call):
        return False
    loops, repeated = graph_shape(graph.sampler())
    return not repeated and (sample is not None or not loops)
