from pyg_bemap.datasets.fair_graph import (
    ALIASES,
    BUNDLED_DIR,
    SPECS,
    DownloadError,
    FairGraphDataset,
    default_root,
    load_nba,
    split_masks,
)
from pyg_bemap.datasets.synthetic import biased_sbm

__all__ = [
    'ALIASES',
    'BUNDLED_DIR',
    'SPECS',
    'DownloadError',
    'FairGraphDataset',
    'biased_sbm',
    'default_root',
    'load_nba',
    'split_masks',
]
