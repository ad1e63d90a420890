from typing import Any

import torch
from torch import Tensor
from torch_geometric.nn.conv import MessagePassing
from torch_geometric.utils import is_torch_sparse_tensor

from pyg_bemap.edge_index import BeMapEdgeIndex, BeMapInfo, get_bemap
from pyg_bemap.nn.gcn_propagation import gcn_forward, propagates_directly
from pyg_bemap.nn.graph_layouts import (
    SPARSE_DTYPES,
    edge_pairs,
    same_on_sparse,
)
from pyg_bemap.nn.inner_layer import (
    edge_level_args_given,
    inner_layer,
    inner_names_on_load,
    inner_names_on_save,
    mask_edge_level_args,
    positional_names,
)
from pyg_bemap.nn.sample_sharing import (
    CallReplay,
    PassScope,
    SharedSeed,
    layer_seed,
)
from pyg_bemap.sampler import GraphSampler, Sample
from pyg_bemap.settings import SamplerSettings
from pyg_bemap.utils.checks import check_generator
from pyg_bemap.utils.layout import quiet_sparse

#: How the sampled graph reaches the inner layer in training.
LAYOUTS = ('auto', 'edge_index', 'sparse')


class BeMapConv(MessagePassing):
    r"""Wraps any message-passing layer so that, in training, it passes
    messages over a fair neighbourhood, as in the `"BeMap: Balanced Message
    Passing for Fair Graph Neural Network"
    <https://arxiv.org/abs/2306.04107>`_ paper.

    On every training forward pass, each node :math:`i` keeps the same number
    of neighbours of every sensitive group present in
    :math:`\mathcal{N}(i) \cup \{i\}` (the node counting in its own group),
    or :math:`\min(d_i, \max(m, \lceil \beta d_i \rceil))` neighbours when
    only one group is present; inside a group, neighbours are drawn without
    replacement proportionally to their balance score
    :math:`b_j = 1 / (D_j + \delta)` (see
    :func:`~pyg_bemap.balanced_edge_sample`). The inner layer then runs on
    the sampled graph with its own normalisation, so
    :obj:`BeMapConv(GCNConv(...))` is BeMap(sym),
    :obj:`BeMapConv(RowNormConv(...))` is BeMap(row) and
    :obj:`BeMapConv(GATConv(...))` is BeMap(gat).
    :obj:`BeMapConv(in_channels, out_channels, **kwargs)` builds
    :obj:`GCNConv(in_channels, out_channels, **kwargs)` inside, so renaming
    :obj:`GCNConv` in existing code is the whole change.

    **In evaluation mode it computes what the inner layer computes on the
    full graph**, for every layer, :obj:`layout`, graph (self-loops,
    repeated edges, any order, isolated nodes, edge weights and attributes)
    and floating dtype, with and without :obj:`torch_sparse`: up to the
    order of floating-point sums where a layer that computes the same
    function on a sparse adjacency (plain :obj:`GCNConv` without
    :obj:`improved=True`, :obj:`SGConv`, :obj:`TAGConv`, :obj:`SAGEConv`
    with mean or sum, :obj:`GraphConv`, :obj:`GINConv`, and with
    :obj:`torch_sparse` :class:`~pyg_bemap.RowNormConv` and
    :class:`~pyg_bemap.nn.fused.FusedGATConv`) receives the full graph as
    one (built once per graph; a plain :obj:`GCNConv` without hooks is
    computed from its own parameters, in training too, as
    :math:`\mathbf{s} \odot ((\mathbf{A} + \mathbf{I}) (\mathbf{s}
    \odot \mathbf{X} \mathbf{\Theta})) + \mathbf{b}` with
    :math:`\mathbf{s} = (\mathbf{d} + 1)^{-1/2}`, which normalises no
    edge per call), and exactly the inner layer's call on the edges
    otherwise (any other layer or option, graphs with
    self-loops or repeated edges, half precision, edge-level arguments).
    In training, outputs and gradients have the input's dtype.

    One sample is drawn per pass (a call of the model) and used by all
    :class:`BeMapConv` layers of the pass, also by a layer called twice, in
    models prepared by :func:`~pyg_bemap.to_bemap`; layers outside such a
    model share a sample until one of them is called again. A recomputation
    under activation checkpointing uses the sample of the call it
    recomputes. :mod:`pyg_bemap.nn.sample_sharing` has the rules. The
    state dict holds the inner layer's entries under the inner layer's own
    names, so checkpoints of the vanilla model load and vice versa.

    The graph must carry its groups and balance scores: apply
    :class:`~pyg_bemap.BalanceAwareSampling` to the data, or pass a
    :class:`~pyg_bemap.BeMapInfo` as :obj:`bemap=...` (needed for
    :class:`torch_sparse.SparseTensor` and :obj:`torch.sparse` adjacencies).

    Args:
        conv (MessagePassing or int): The layer to wrap (e.g.
            :obj:`GCNConv`, :obj:`GATConv`, :obj:`SAGEConv`,
            :obj:`GraphConv`, :obj:`GINConv`), which must not cache its
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
        layout (str, optional): How the graph reaches the inner layer:
            :obj:`'edge_index'` (always the kept edges in training, the
            edges as given in evaluation) or :obj:`'auto'` (a transposed
            sparse adjacency, a :class:`torch_sparse.SparseTensor` when
            installed, where it computes the same function, see above; the
            edge list otherwise and under :func:`torch.compile`).
            :obj:`'sparse'` is the same as :obj:`'auto'`: a sparse
            adjacency is never used where it would compute another
            function. (default: :obj:`'auto'`)
        generator (torch.Generator, optional): The random generator of the
            samples, which alone decides them, whatever happens to the
            global seed. (default: :obj:`None`, the global one)
        **kwargs (optional): The other arguments of the
            :class:`~torch_geometric.nn.conv.GCNConv` to build.

    Under :func:`torch.compile`, evaluation adds no graph break to the inner
    layer's; in training the sample is drawn eagerly, outside the compiled
    graph, so the same seed gives the same sample as in eager mode.

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
        *,
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
        conv = inner_layer(conv, out_channels, kwargs)
        if layout not in LAYOUTS:
            raise ValueError(
                f"'layout' must be one of {LAYOUTS} (got '{layout}')"
            )
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
        #: The pass scope of the model the layer is in (see
        #: :func:`~pyg_bemap.to_bemap`), or :obj:`None`.
        self.pass_scope: PassScope | None = None
        self._replay = CallReplay()
        self._arg_names = positional_names(conv)
        self.register_state_dict_post_hook(inner_names_on_save)
        self.register_load_state_dict_pre_hook(inner_names_on_load)

    @property
    def beta(self) -> float:
        r""":obj:`settings.beta`."""
        return self.settings.beta

    @property
    def min_keep(self) -> int:
        r""":obj:`settings.min_keep`."""
        return self.settings.min_keep

    @property
    def strategy(self) -> str:
        r""":obj:`settings.strategy`."""
        return self.settings.strategy

    def reset_parameters(self) -> None:
        r"""Resets all learnable parameters of the inner layer."""
        super().reset_parameters()
        reset = getattr(self.conv, 'reset_parameters', None)
        if callable(reset):
            reset()

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
        if bemap is not None and not isinstance(bemap, BeMapInfo):
            raise ValueError(
                f"'bemap' must be a BeMapInfo (got "
                f'{type(bemap).__name__}); build one with '
                f"'BeMapInfo(sens, balance)'"
            )
        info = bemap if bemap is not None else get_bemap(edge_index)
        graph = edge_index
        if isinstance(edge_index, BeMapEdgeIndex):
            edge_index = edge_index.as_subclass(Tensor)  # no alias noted
        sparse = info is not None and self._sparse_layout(
            x, edge_index, args, kwargs, info
        )
        if not self.training:
            if not sparse or info is None:
                return self.conv(x, edge_index, *args, **kwargs)
            sampler = info.sampler(graph, edge_index)
            if sampler.has_self_loops or sampler.has_repeated_edges:
                return self.conv(x, edge_index, *args, **kwargs)
            with quiet_sparse():
                if propagates_directly(self.conv, x):
                    graph = sampler.full_gcn_graph(x.dtype)
                    return gcn_forward(self.conv, x, graph)
                adj = sampler.full_adjacency(x.dtype)
                return self.conv(x, adj, *args, **kwargs)
        if info is None:
            raise RuntimeError(_NO_INFORMATION)
        pairs, rebuild = edge_pairs(edge_index)
        sampler, sample, shared = self._sample(info, graph, pairs)
        if sparse and not sampler.has_repeated_edges:  # no self-loops drawn
            with quiet_sparse():  # our choice of layout: no torch notices
                if propagates_directly(self.conv, x):
                    graph = sample.gcn_graph(x.dtype)
                    out = gcn_forward(self.conv, x, graph)
                else:
                    adj = sample.adjacency(x.dtype)
                    out = self.conv(x, adj, *args, **kwargs)
        else:
            args, kwargs = mask_edge_level_args(
                self._arg_names, args, kwargs, sample.mask
            )
            out = self.conv(x, rebuild(sample.mask), *args, **kwargs)
        if shared is not None:
            shared.expire_on_backward(out)
        return out

    @torch.compiler.disable
    def _sample(
        self, info: BeMapInfo, graph: Any, pairs: Tensor
    ) -> tuple[GraphSampler, Sample, SharedSeed | None]:
        # Drawn eagerly, also under torch.compile: compiled random ops use
        # another generator, and the same seed must give the same sample.
        sampler = info.sampler(graph, pairs)
        seed, shared = layer_seed(
            sampler,
            self.settings,
            self,
            self.pass_scope,
            self._replay,
            self.generator,
        )
        return sampler, sampler.draw(self.settings, seed), shared

    def _sparse_layout(
        self,
        x: Any,
        edge_index: Any,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        info: BeMapInfo,
    ) -> bool:
        r"""Whether to hand the inner layer a sparse adjacency: an edge list
        of the graph :obj:`info` describes came in, with features of a dtype
        in :obj:`SPARSE_DTYPES` and no edge-level argument, and the layer
        computes the same function on a sparse adjacency
        (:func:`same_on_sparse`). The caller also checks
        the graph: no self-loops or repeated edges in evaluation, no
        repeated edges in training."""
        if (
            self.layout == 'edge_index'
            or not isinstance(edge_index, Tensor)
            or is_torch_sparse_tensor(edge_index)
            or not isinstance(x, Tensor)
            or x.dtype not in SPARSE_DTYPES
            or x.size(0) != info.num_nodes
            or torch.compiler.is_compiling()
        ):
            return False
        if edge_level_args_given(self._arg_names, args, kwargs):
            return False
        return same_on_sparse(self.conv)

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
    "'bemap=BeMapInfo(sens, balance)'"
)
