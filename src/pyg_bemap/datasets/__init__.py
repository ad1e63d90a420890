from pyg_bemap.datasets.fair_graph import (
    ALIASES,
    SPECS,
    FairGraphDataset,
    default_root,
    load_nba,
    split_masks,
)
from pyg_bemap.datasets.synthetic import biased_sbm

__all__ = [
    'ALIASES',
    'SPECS',
    'FairGraphDataset',
    'biased_sbm',
    'default_root',
    'load_nba',
    'split_masks',
]
