r"""Message-passing layers of the paper and of the evaluation that PyG does
not have, with one sparse product on a sparse adjacency."""

from pyg_bemap.layers.gat_conv import FusedGATConv
from pyg_bemap.layers.row_norm_conv import RowNormConv

__all__ = ['FusedGATConv', 'RowNormConv']
