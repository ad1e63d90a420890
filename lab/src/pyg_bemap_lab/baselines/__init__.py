r"""Comparison methods of the experiments (not part of BeMap)."""

from pyg_bemap_lab.baselines.fairdrop import fairdrop_edge

__all__ = ['fairdrop_edge']
