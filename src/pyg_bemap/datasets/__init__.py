from pyg_bemap.datasets.synthetic import biased_sbm

__all__ = ['biased_sbm']
