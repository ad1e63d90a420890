from torch import Tensor
from torch_geometric.nn.conv import MessagePassing
from torch_geometric.nn.dense.linear import Linear
from torch_geometric.utils import add_self_loops, remove_self_loops


class RowNormConv(MessagePassing):
    r"""The row-normalised graph convolution that BeMap(row) wraps, from the
    `"BeMap: Balanced Message Passing for Fair Graph Neural Network"
    <https://arxiv.org/abs/2306.04107>`_ paper: the mean over the node and its
    neighbours, then a linear map,

    .. math::
        \mathbf{x}^{\prime}_i = \mathbf{\Theta}^{\top}
        \frac{1}{|\mathcal{N}(i)| + 1} \sum_{j \in \mathcal{N}(i) \cup
        \{ i \}} \mathbf{x}_j + \mathbf{b}.

    Existing self-loops are replaced by exactly one per node. The linear map
    runs after the aggregation when that is cheaper (fewer input than output
    channels); both orders compute the same function. Wrapped as
    :obj:`BeMapConv(RowNormConv(in_channels, out_channels))`, the mean runs
    over the fair neighbourhood including the node.

    Args:
        in_channels (int): Size of each input sample.
        out_channels (int): Size of each output sample.
        bias (bool, optional): If set to :obj:`False`, the layer will not
            learn an additive bias. (default: :obj:`True`)

    Shapes:
        - **input:** node features :math:`(|\mathcal{V}|, F_{in})`,
          edge indices :math:`(2, |\mathcal{E}|)`
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

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        edge_index, _ = remove_self_loops(edge_index)
        edge_index, _ = add_self_loops(edge_index, num_nodes=x.size(0))
        if self.in_channels < self.out_channels:
            return self.lin(self.propagate(edge_index, x=x))
        return self.propagate(edge_index, x=self.lin(x))

    def __repr__(self) -> str:
        return (
            f'{self.__class__.__name__}({self.in_channels}, '
            f'{self.out_channels})'
        )
