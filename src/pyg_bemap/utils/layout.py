r"""Graph layouts handed to message-passing layers."""

from typing import Any

from torch import Tensor
from torch_geometric.typing import WITH_TORCH_SPARSE, SparseTensor
from torch_geometric.utils import to_torch_csr_tensor


def transposed_adjacency(
    edge_index: Tensor, num_nodes: int, is_sorted: bool = False
) -> Any:
    r"""The edges as the transposed adjacency PyG's layers take (targets as
    rows): a :class:`torch_sparse.SparseTensor` when installed, else a
    :obj:`torch.sparse` CSR tensor.

    Args:
        edge_index (torch.Tensor): The edges, shape :obj:`[2, E]`.
        num_nodes (int): The number of nodes.
        is_sorted (bool, optional): The edges are already sorted by target,
            then source, so no sort is needed. (default: :obj:`False`)
    """
    size = (num_nodes, num_nodes)
    if WITH_TORCH_SPARSE:
        return SparseTensor(
            row=edge_index[1],
            col=edge_index[0],
            sparse_sizes=size,
            is_sorted=is_sorted,
            trust_data=is_sorted,
        )
    return to_torch_csr_tensor(
        edge_index.flip(0), size=size, is_coalesced=is_sorted
    )
