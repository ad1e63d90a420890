from typing import Any

import torch
from torch import Tensor
from torch_geometric.nn.conv import MessagePassing
from torch_geometric.nn.dense.linear import Linear
from torch_geometric.typing import WITH_TORCH_SPARSE, Adj, SparseTensor
from torch_geometric.utils import (
    add_self_loops,
    is_torch_sparse_tensor,
    remove_self_loops,
    to_edge_index,
)

from pyg_bemap.infra.sparse import sparse_product, sparse_product_takes


class RowNormConv(MessagePassing):
    r"""The row-normalised graph convolution that BeMap(row) wraps, from the
    `"BeMap: Balanced Message Passing for Fair Graph Neural Network"
    <https://arxiv.org/abs/2306.04107>`_ paper: the mean over the node and its
    neighbours, then a linear map,

    .. math::
        \mathbf{x}^{\prime}_i = \mathbf{\Theta}^{\top}
        \frac{1}{|\mathcal{N}(i)| + 1} \sum_{j \in \mathcal{N}(i) \cup
        \{ i \}} \mathbf{x}_j + \mathbf{b}.

    Existing self-loops are replaced by exactly one per node; a sparse
    adjacency's values are ignored (the layer takes no edge weights). The
    linear map runs after the aggregation when that is cheaper (fewer input
    than output channels); both orders compute the same function. On a
    :class:`torch_sparse.SparseTensor`, the mean is one
    ``sparse_product`` (``infra/sparse.py``) with the self-loops as
    a diagonal; other inputs pass messages along the edge list. Wrapped as
    :obj:`BeMapConv(RowNormConv(in_channels, out_channels))`, the mean runs
    over the fair neighbourhood including the node.

    Args:
        in_channels (int): Size of each input sample.
        out_channels (int): Size of each output sample.
        bias (bool, optional): If set to :obj:`False`, the layer will not
            learn an additive bias. (default: :obj:`True`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})`,
          edge indices :math:`(2, |\mathcal{E}|)` or a transposed sparse
          adjacency :math:`(|\mathcal{V}|, |\mathcal{V}|)`
        - **output:** node features :math:`(|\mathcal{V}|, F_{out})`
    """

    def __init__(self, in_channels: int, out_channels: int, bias: bool = True):
        super().__init__(aggr='mean')
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.lin = Linear(
            in_channels, out_channels, bias=bias, weight_initializer='glorot'
        )
        self.reset_parameters()

    def reset_parameters(self) -> None:
        super().reset_parameters()
        self.lin.reset_parameters()

    def forward(self, x: Tensor, edge_index: Adj) -> Tensor:
        sparse_tensor = isinstance(edge_index, SparseTensor)
        if sparse_tensor and sparse_product_takes(x):
            mean = _neighbourhood_mean(edge_index, x.dtype)
            if self.in_channels < self.out_channels:
                return self.lin(mean(x))
            return mean(self.lin(x))
        if sparse_tensor or is_torch_sparse_tensor(edge_index):
            edge_index = to_edge_index(edge_index)[0].flip(0)  # rows: targets
        edge_index, _ = remove_self_loops(edge_index)
        edge_index, _ = add_self_loops(edge_index, num_nodes=x.size(0))
        if self.in_channels < self.out_channels:
            return self.lin(self.propagate(edge_index, x=x))
        return self.propagate(edge_index, x=self.lin(x))

    def computes_same_on_sparse(self) -> bool:
        r"""Whether :class:`~pyg_bemap.BeMapConv` hands the layer a sparse
        adjacency: with :obj:`torch_sparse`, where it is one product."""
        return WITH_TORCH_SPARSE


def _neighbourhood_mean(graph: SparseTensor, dtype: torch.dtype) -> Any:
    r"""With :math:`\mathbf{A}` the pattern of :obj:`graph` without its
    diagonal and :math:`d_i` its row counts, the product with
    :math:`\mathbf{A}` of entries :math:`1 / (d_i + 1)` plus the diagonal
    :math:`1 / (\mathbf{d} + 1)`: the mean over each node and its
    neighbours."""
    storage = graph.storage
    row = storage.row()
    off_diagonal = (row != storage.col()).to(dtype)  # diagonal entries: 0
    degree = off_diagonal.new_zeros(graph.size(0)).index_add_(
        0, row, off_diagonal
    )
    scale = (degree + 1.0).reciprocal()
    value = scale.index_select(0, row) * off_diagonal

    def transpose() -> tuple[Tensor, Tensor, Tensor]:
        perm = storage.csr2csc()
        return storage.colptr(), storage.row()[perm], perm

    def mean(x: Tensor) -> Tensor:
        return sparse_product(
            storage.rowptr(),
            storage.col(),
            value,
            x,
            scale.view(-1, 1),
            transpose,
        )

    return mean
