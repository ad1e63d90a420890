r"""What differs between the torch and PyG releases the library supports,
in one place (the range: ``docs/installation.md``)."""

from torch import Tensor
from torch_geometric import EdgeIndex


def plain_tensor(tensor: Tensor) -> Tensor:
    r""":obj:`tensor` as a plain :class:`torch.Tensor` sharing its memory.

    PyG's :class:`~torch_geometric.EdgeIndex` wraps its data: its in-place
    arithmetic needs metadata that the library's computations do not keep,
    and torch 2.8 refuses :meth:`~torch.Tensor.as_subclass` on it, so it
    hands out its data itself. Any other subclass (such as
    :class:`~pyg_bemap.BeMapEdgeIndex`) is viewed as a plain tensor."""
    if isinstance(tensor, EdgeIndex):
        return tensor.as_tensor()
    return tensor.as_subclass(Tensor)
