r"""BeMapConv: any message-passing layer on a fair neighbourhood in
training and on the full graph in evaluation."""

from operator import attrgetter
from typing import Any

import torch
from torch_geometric.nn.conv import MessagePassing

from pyg_bemap.bemap_info import BeMapInfo
from pyg_bemap.infra.checks import check_choice, check_generator
from pyg_bemap.infra.private_api import (
    outside_functorch_transforms,
    registered_child,
)
from pyg_bemap.nn.inner_layer import (
    inner_layer,
    inner_names_on_load,
    inner_names_on_save,
    positional_names,
)
from pyg_bemap.nn.sample_sharing import CallReplay, pass_sample
from pyg_bemap.routes import (
    GraphInput,
    LayerCall,
    RouteChoice,
    choose_route,
)
from pyg_bemap.sampler import Sample
from pyg_bemap.settings import SamplerSettings

#: How the sampled graph reaches the inner layer in training.
LAYOUTS = ('auto', 'edge_index', 'sparse')


class BeMapConv(MessagePassing):
    r"""Wraps any message-passing layer so that, in training, it passes
    messages over a fair neighbourhood, as in the `"BeMap: Balanced Message
    Passing for Fair Graph Neural Network"
    <https://arxiv.org/abs/2306.04107>`_ paper.

    On every training pass, each node :math:`i` keeps the same number of
    neighbours of every sensitive group present in :math:`\mathcal{N}(i)
    \cup \{i\}` (the node counting in its own group), or
    :math:`\min(d_i, \max(m, \lceil \beta d_i \rceil))` when only one
    group is present, drawn without replacement proportionally to their
    balance scores (see :func:`~pyg_bemap.balanced_edge_sample`); the inner
    layer runs on that graph with its own normalisation:
    :obj:`BeMapConv(GCNConv(...))` is BeMap(sym),
    :obj:`BeMapConv(RowNormConv(...))` BeMap(row),
    :obj:`BeMapConv(GATConv(...))` BeMap(gat), and
    :obj:`BeMapConv(in_channels, out_channels, **kwargs)` builds the
    :obj:`GCNConv`, so renaming the class is the whole change.

    **In evaluation mode it computes what the inner layer computes on the
    full graph**, for every layer, :obj:`layout`, graph and floating dtype,
    with and without :obj:`torch_sparse`. A route
    (:mod:`pyg_bemap.routes`) builds the graph the layer gets: the edge
    list, a sparse adjacency for layers that compute the same function on
    it, or, for a plain :obj:`GCNConv`, :math:`\mathbf{s} \odot
    ((\mathbf{A} + \mathbf{I}) (\mathbf{s} \odot \mathbf{X}
    \mathbf{\Theta})) + \mathbf{b}` with :math:`\mathbf{s} = (\mathbf{d}
    + 1)^{-1/2}` from its own parameters; the fast routes agree with the
    layer's own call up to the order of floating-point sums, and every
    call they cannot honour takes the edge list.

    One sample is drawn per pass (a call of the outermost module) and used
    by all its :class:`BeMapConv` layers, also a layer called twice, and by
    a recomputation under activation checkpointing
    (:mod:`pyg_bemap.nn.sample_sharing`). The state dict holds the inner
    layer's entries under its own names, so checkpoints of the vanilla
    model load and vice versa, and the inner layer's attributes read
    through the wrapper (:obj:`conv.heads`, :obj:`conv.lin.weight`). The
    graph must carry its groups and balance scores
    (:class:`~pyg_bemap.BalanceAwareSampling`), or they come as
    :obj:`bemap=BeMapInfo(...)` (for sparse adjacencies).

    Args:
        conv (MessagePassing or int): The layer to wrap (e.g.
            :obj:`GCNConv`, :obj:`GATConv`, :obj:`SAGEConv`,
            :obj:`GraphConv`, :obj:`GINConv`), called as
            :obj:`conv(x, edge_index, ...)`, which must not cache its
            normalised graph (:obj:`cached=True`); or the number of input
            channels of a :class:`~torch_geometric.nn.conv.GCNConv` to build.
        out_channels (int, optional): The output channels of the
            :class:`~torch_geometric.nn.conv.GCNConv` to build (only with
            :obj:`conv` an integer). (default: :obj:`None`)
        beta (float, optional): Share :math:`\beta` of a one-group
            neighbourhood to keep. (default: :obj:`0.25`)
        min_keep (int, optional): Minimum :math:`m` of neighbours kept of a
            one-group neighbourhood. (default: :obj:`4`)
        strategy (str, optional): Weights inside a group: :obj:`'balance'`,
            :obj:`'uniform'` or :obj:`'degree'` (:math:`\deg(j)^{3/4}`).
            (default: :obj:`'balance'`)
        settings (SamplerSettings, optional): :obj:`beta`,
            :obj:`min_keep` and :obj:`strategy` as one value (its
            :obj:`num_hops` and :obj:`delta` are the transform's), instead
            of the three keywords. (default: :obj:`None`)
        layout (str, optional): :obj:`'edge_index'` (always the edge list)
            or :obj:`'auto'` (the fastest route that computes the same, see
            above); :obj:`'sparse'` is :obj:`'auto'`.
            (default: :obj:`'auto'`)
        generator (torch.Generator, optional): The random generator of the
            samples, which alone decides them, whatever happens to the
            global seed. It gives one seed per pass; the sample is drawn
            on the graph's device either way, so a CPU generator suits a
            graph on a GPU too (one on the GPU costs a host
            synchronisation per pass, and none can be read while a CUDA
            graph is captured). (default: :obj:`None`, the global one)
        *args (optional): The other positional arguments of the
            :class:`~torch_geometric.nn.conv.GCNConv` to build (e.g.
            :obj:`BeMapConv(16, 32, True)` for :obj:`GCNConv(16, 32, True)`).
        **kwargs (optional): Its other keyword arguments.

    Under :func:`torch.compile` the sample is drawn eagerly, so the same
    seed gives the same sample as in eager mode.

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})` (or what
          the inner layer takes), edge indices :math:`(2, |\mathcal{E}|)` or
          a sparse adjacency, edge-level arguments
          (:obj:`edge_weight`, :obj:`edge_attr`, :obj:`edge_type`) with
          :math:`|\mathcal{E}|` rows, masked together with the edges
        - **output:** the inner layer's output
    """

    def __init__(
        self,
        conv: MessagePassing | int,
        out_channels: int | None = None,
        *args: Any,
        beta: float | None = None,
        min_keep: int | None = None,
        strategy: str | None = None,
        settings: SamplerSettings | None = None,
        layout: str = 'auto',
        generator: torch.Generator | None = None,
        **kwargs: Any,
    ):
        super().__init__(aggr=None)
        if isinstance(conv, BeMapConv):
            raise ValueError(
                f'{conv} is already a BeMapConv; wrap the inner layer once '
                f"('BeMapConv(<its inner layer>)')"
            )
        conv = inner_layer(conv, out_channels, args, kwargs)
        check_choice('layout', layout, LAYOUTS)
        if getattr(conv, 'cached', False):
            raise ValueError(
                f'{conv} caches its normalised graph (cached=True) and would '
                f'reuse the first sampled neighbourhood forever; create it '
                f'with cached=False'
            )
        self.settings = SamplerSettings.resolve(
            settings, beta=beta, min_keep=min_keep, strategy=strategy
        )
        self.conv = conv
        self.layout = layout
        self.generator = check_generator(generator)
        self._replay = CallReplay()
        self._route = RouteChoice()
        self._arg_names = positional_names(conv)
        self.register_state_dict_post_hook(inner_names_on_save)
        self.register_load_state_dict_pre_hook(inner_names_on_load)

    def __getattr__(self, name: str) -> Any:
        # What the wrapper lacks of the inner layer's public attributes
        # (heads, out_channels, lin, ...) reads through, so code written for
        # the layer runs as before. Private names stay the wrapper's own:
        # torch and PyG set them on every module (an explainer's
        # _edge_mask), and a name found on the inner layer would refuse it.
        try:
            return super().__getattr__(name)
        except AttributeError:
            conv = registered_child(self, 'conv')
            if conv is None or name.startswith('_'):
                raise
        try:
            return getattr(conv, name)
        except AttributeError:
            raise AttributeError(
                f"'{type(self).__name__}' object and its inner layer "
                f"'{type(conv).__name__}' have no attribute '{name}'"
            ) from None

    #: :obj:`settings.beta`, :obj:`settings.min_keep` and
    #: :obj:`settings.strategy`, read through.
    beta = property(attrgetter('settings.beta'))
    min_keep = property(attrgetter('settings.min_keep'))
    strategy = property(attrgetter('settings.strategy'))

    def reset_parameters(self) -> None:
        r"""Resets all learnable parameters of the inner layer."""
        super().reset_parameters()
        self.conv.reset_parameters()

    def forward(
        self,
        x: Any,
        edge_index: Any,
        *args: Any,
        bemap: BeMapInfo | None = None,
        **kwargs: Any,
    ) -> Any:
        r"""Runs the inner layer on a fair neighbourhood (training) or on the
        full graph (evaluation).

        Args:
            x: The node features, passed to the inner layer.
            edge_index: The edges (:obj:`[2, E]`), a
                :class:`~pyg_bemap.BeMapEdgeIndex`, a
                :class:`torch_sparse.SparseTensor` or a :obj:`torch.sparse`
                adjacency (transposed, as PyG's layers take it).
            *args: Further positional arguments of the inner layer.
            bemap (BeMapInfo, optional): Groups and balance scores, when
                :obj:`edge_index` does not carry them. (default: :obj:`None`)
            **kwargs: Further keyword arguments of the inner layer.
        """
        if self.layout not in LAYOUTS:  # also when set after construction
            check_choice('layout', self.layout, LAYOUTS)
        graph = GraphInput(edge_index, bemap, getattr(self.conv, 'flow', None))
        sample = self._sample(graph) if self.training else None
        call = LayerCall(
            self.conv, self._arg_names, x, args, kwargs, self.layout
        )
        route = choose_route(self._route, call, graph, sample)
        return route(call, graph, sample)

    @torch.compiler.disable
    def _sample(self, graph: GraphInput) -> Sample:
        # Drawn eagerly, also under torch.compile: compiled random ops use
        # another generator, and the same seed must give the same sample.
        if graph.info is None:
            raise RuntimeError(_NO_INFORMATION)
        graph.info.check_unedited(graph.given)
        with outside_functorch_transforms():  # no transformed input in it
            return pass_sample(self, graph.sampler(), self._replay)

    def __repr__(self) -> str:
        return (
            f'{self.__class__.__name__}({self.conv}, beta={self.beta}, '
            f'min_keep={self.min_keep}, strategy={self.strategy!r}, '
            f'layout={self.layout!r})'
        )


_NO_INFORMATION = (
    'BeMapConv needs the sensitive groups and balance scores of the graph in '
    "training mode, and this 'edge_index' carries none. If you have not "
    "applied 'pyg_bemap.BalanceAwareSampling(sens_attr=...)' to the data, "
    'do. If you have, a later step rebuilt data.edge_index and lost them: '
    'steps that change the edges (ToUndirected, AddSelfLoops, GCNNorm, '
    'RemoveDuplicatedEdges) belong before BalanceAwareSampling; after '
    'batching (Batch.from_data_list, a DataLoader), subgraph(), '
    'edge_subgraph() or in a dataset of several graphs, the scores are still '
    "in 'data.bemap_balance', and 'pyg_bemap.AttachBeMap(sens_attr=...)' "
    "re-attaches them: give it to a NeighborLoader as 'transform=', or call "
    "it on each batch of a DataLoader ('batch = attach(batch)'). For a "
    'SparseTensor or torch.sparse adjacency, pass '
    "'bemap=BeMapInfo(sens, balance)'. A graph the model builds in its "
    'forward (pooling, flipped or dropped edges) cannot be sampled: leave '
    'the layers that take it unwrapped. Nor can a heterogeneous graph '
    '(HeteroData, a to_hetero model): BeMap supports homogeneous graphs '
    'only'
)
