from pyg_bemap.datasets.fair_graph import (
    FairGraphDataset,
    default_root,
    load_german,
    load_nba,
    scale_features,
)
from pyg_bemap.datasets.raw_files import DownloadError
from pyg_bemap.datasets.reference_splits import reference_split
from pyg_bemap.datasets.specs import ALIASES, BUNDLED_DIR, SPECS
from pyg_bemap.datasets.splits import split_masks
from pyg_bemap.datasets.synthetic import biased_sbm

__all__ = [
    'ALIASES',
    'BUNDLED_DIR',
    'SPECS',
    'DownloadError',
    'FairGraphDataset',
    'biased_sbm',
    'default_root',
    'load_german',
    'load_nba',
    'reference_split',
    'scale_features',
    'split_masks',
]
