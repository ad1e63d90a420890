from pyg_bemap.nn.bemap_conv import BeMapConv
from pyg_bemap.nn.models import BeMapGCN
from pyg_bemap.nn.row_norm_conv import RowNormConv
from pyg_bemap.nn.sample_sharing import one_sample_per_call
from pyg_bemap.nn.to_bemap import to_bemap

__all__ = [
    'BeMapConv',
    'BeMapGCN',
    'RowNormConv',
    'one_sample_per_call',
    'to_bemap',
]
