import inspect
import itertools
from typing import Any

import torch
from torch import Tensor
from torch_geometric.nn.conv import MessagePassing
from torch_geometric.typing import SparseTensor
from torch_geometric.utils import (
    is_torch_sparse_tensor,
    to_edge_index,
    to_torch_coo_tensor,
    to_torch_csr_tensor,
)

from pyg_bemap.edge_index import BeMapEdgeIndex, BeMapInfo, get_bemap
from pyg_bemap.nn.forward_pass import current_pass, install_pass_tracking
from pyg_bemap.utils.sampling import check_sampling_args

#: How the sampled graph reaches the inner layer in training.
LAYOUTS = ('auto', 'edge_index', 'sparse')

#: Arguments of a conv that hold one entry per edge.
EDGE_LEVEL_ARGS = ('edge_weight', 'edge_attr', 'edge_type')

_consumer_ids = itertools.count()


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
    :func:`~pyg_bemap.balanced_edge_sample`). One sample is drawn per pass (a
    call of the model that contains the layers) and shared by all
    :class:`BeMapConv` layers of the model; layers called on their own share
    a sample until one of them is called again. The inner layer then
    runs on the sampled graph with its own normalisation, so
    :obj:`BeMapConv(GCNConv(...))` is BeMap(sym),
    :obj:`BeMapConv(RowNormConv(...))` is BeMap(row) and
    :obj:`BeMapConv(GATConv(...))` is BeMap(gat). In evaluation mode it is
    exactly the inner layer on the full graph.

    The graph must carry its groups and balance scores: apply
    :class:`~pyg_bemap.BalanceAwareSampling` to the data, or pass a
    :class:`~pyg_bemap.BeMapInfo` as :obj:`bemap=...` (needed for
    :class:`torch_sparse.SparseTensor` and :obj:`torch.sparse` adjacencies).

    Args:
        conv (MessagePassing): The layer to wrap (e.g. :obj:`GCNConv`,
            :obj:`GATConv`, :obj:`SAGEConv`, :obj:`GraphConv`, :obj:`GINConv`).
            It must not cache its normalised graph (:obj:`cached=True`).
        beta (float, optional): Share :math:`\beta` of a one-group
            neighbourhood to keep. (default: :obj:`0.25`)
        min_keep (int, optional): Minimum :math:`m` of neighbours kept of a
            one-group neighbourhood. (default: :obj:`4`)
        strategy (str, optional): Weights inside a group: :obj:`'balance'`,
            :obj:`'uniform'` or :obj:`'degree'` (:math:`\deg(j)^{3/4}`).
            (default: :obj:`'balance'`)
        layout (str, optional): How the sampled graph reaches the inner layer
            in training: :obj:`'edge_index'` (the kept edges), :obj:`'sparse'`
            (a sparse adjacency sorted by target, a
            :class:`torch_sparse.SparseTensor` when installed) or
            :obj:`'auto'`, sparse for layers that fuse message passing into
            one sparse-matrix product (:obj:`conv.fuse`, e.g. GCN, SAGE, GIN)
            when no edge-level argument is given (the edge list under
            :func:`torch.compile`). Both compute the same function, up to the
            order of floating-point sums. (default: :obj:`'auto'`)
        generator (torch.Generator, optional): The random generator of the
            samples. (default: :obj:`None`, the global one)

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
        conv: MessagePassing,
        *,
        beta: float = 0.25,
        min_keep: int = 4,
        strategy: str = 'balance',
        layout: str = 'auto',
        generator: torch.Generator | None = None,
    ):
        super().__init__(aggr=None)
        if layout not in LAYOUTS:
            raise ValueError(
                f"'layout' must be one of {LAYOUTS} (got '{layout}')"
            )
        if not isinstance(conv, torch.nn.Module):
            raise ValueError(
                f"'conv' must be a message-passing layer "
                f'(got {type(conv).__name__})'
            )
        if getattr(conv, 'cached', False):
            raise ValueError(
                f'{conv} caches its normalised graph (cached=True) and would '
                f'reuse the first sampled neighbourhood forever; create it '
                f'with cached=False'
            )
        check_sampling_args(beta, min_keep, strategy)
        self.conv = conv
        self.beta = beta
        self.min_keep = min_keep
        self.strategy = strategy
        self.layout = layout
        self.generator = generator
        self._consumer = next(_consumer_ids)
        install_pass_tracking()
        self._arg_names = _positional_names(conv)

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
            edge_index = edge_index.as_tensor()
        if not self.training:
            return self.conv(x, edge_index, *args, **kwargs)
        if info is None:
            raise RuntimeError(
                'BeMapConv needs the sensitive groups and balance scores of '
                'the graph in training mode: apply '
                "'pyg_bemap.BalanceAwareSampling(sens_attr=...)' to the data "
                "(its 'edge_index' then carries them) or pass "
                "'bemap=BeMapInfo(sens, balance)'"
            )
        pairs, rebuild = _as_edge_pairs(edge_index)
        mask = self._sample(info, graph, pairs)
        if self._sparse_layout(edge_index, args, kwargs):
            adj_t = info.sampled_adjacency(edge_index, self._sampler_key)
            return self.conv(x, adj_t, *args, **kwargs)
        args, kwargs = self._mask_edge_args(args, kwargs, mask)
        return self.conv(x, rebuild(mask), *args, **kwargs)

    @torch.compiler.disable
    def _sample(self, info: BeMapInfo, graph: Any, pairs: Tensor) -> Tensor:
        # Drawn eagerly, also under torch.compile: compiled random ops use
        # another generator, and the same seed must give the same sample.
        return info.shared_sample(
            graph,
            pairs,
            self._sampler_key,
            self._consumer,
            current_pass(),
            self.generator,
        )

    @property
    def _sampler_key(self) -> tuple[float, int, str]:
        return (self.beta, self.min_keep, self.strategy)

    def _sparse_layout(
        self, edge_index: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> bool:
        r"""Whether to hand the inner layer a sparse adjacency: an edge list
        came in, no edge-level argument is given, and the layer fuses message
        and aggregation into one sparse-matrix product (:obj:`'auto'`), or
        :obj:`layout='sparse'` asks for it.
        """
        if (
            self.layout == 'edge_index'
            or not isinstance(edge_index, Tensor)
            or is_torch_sparse_tensor(edge_index)
            or torch.compiler.is_compiling()
        ):
            return False
        names = self._arg_names[2 : 2 + len(args)]
        given = [n for n, a in zip(names, args) if a is not None]
        given += [k for k, v in kwargs.items() if v is not None]
        if any(name in EDGE_LEVEL_ARGS for name in given):
            return False
        return self.layout == 'sparse' or bool(
            getattr(self.conv, 'fuse', False)
        )

    def _mask_edge_args(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], mask: Tensor
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        def masked(name: str, value: Any) -> Any:
            if name not in EDGE_LEVEL_ARGS or not isinstance(value, Tensor):
                return value
            if value.size(0) != mask.numel():
                raise ValueError(
                    f"'{name}' has {value.size(0)} rows but the graph has "
                    f'{mask.numel()} edges; it must hold one row per edge'
                )
            return value[mask]

        names = self._arg_names[2 : 2 + len(args)]
        args = (
            tuple(masked(n, a) for n, a in zip(names, args))
            + args[len(names) :]
        )
        return args, {k: masked(k, v) for k, v in kwargs.items()}

    def __repr__(self) -> str:
        return (
            f'{self.__class__.__name__}({self.conv}, beta={self.beta}, '
            f'min_keep={self.min_keep}, strategy={self.strategy!r}, '
            f'layout={self.layout!r})'
        )


def _positional_names(conv: torch.nn.Module) -> tuple[str, ...]:
    try:
        params = inspect.signature(conv.forward).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return ()
    return tuple(
        p.name
        for p in params
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    )


def _as_edge_pairs(adj: Any) -> tuple[Tensor, Any]:
    r"""Returns the :obj:`[2, E]` (source, target) pairs of any graph layout
    and a function that rebuilds the layout from a mask over those pairs.
    """
    if isinstance(adj, SparseTensor):
        row, col, _ = adj.coo()  # transposed: row = target, col = source
        return torch.stack([col, row]), lambda mask: adj.masked_select_nnz(
            mask, layout='coo'
        )
    if is_torch_sparse_tensor(adj):
        index, value = to_edge_index(adj)  # transposed, as above
        size = (adj.size(0), adj.size(1))
        csr = adj.layout == torch.sparse_csr
        convert = to_torch_csr_tensor if csr else to_torch_coo_tensor
        # Masking keeps a coalesced (sorted, unique) order.
        sorted_ = csr or adj.is_coalesced()
        return index.flip(0), lambda mask: convert(
            index[:, mask], value[mask], size, is_coalesced=sorted_
        )
    if not isinstance(adj, Tensor):
        raise ValueError(
            f"'edge_index' must be a tensor, a SparseTensor or a "
            f'torch.sparse adjacency (got {type(adj).__name__})'
        )
    return adj, lambda mask: adj[:, mask]
