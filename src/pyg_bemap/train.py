r"""Full-batch training of a vanilla or BeMap GCN with validation-based model
selection, shared by the command line and the examples.
"""
import copy
from typing import Dict, Optional

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.nn import GCNConv

from pyg_bemap.metrics import fairness_report
from pyg_bemap.nn import BeMapConv


class TwoLayerGCN(torch.nn.Module):
    r"""The paper's backbone: two :class:`GCNConv` layers with dropout,
    optionally each wrapped in :class:`~pyg_bemap.BeMapConv`.
    """
    def __init__(self, in_channels: int, hidden_channels: int = 128,
                 out_channels: int = 2, dropout: float = 0.5,
                 bemap: bool = False, **bemap_kwargs: object):
        super().__init__()
        convs = [GCNConv(in_channels, hidden_channels),
                 GCNConv(hidden_channels, out_channels)]
        if bemap:
            convs = [BeMapConv(conv, **bemap_kwargs) for conv in convs]
        self.conv1, self.conv2 = convs
        self.dropout = dropout

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        x = torch.nn.functional.dropout(x, self.dropout, self.training)
        x = self.conv1(x, edge_index).relu()
        x = torch.nn.functional.dropout(x, self.dropout, self.training)
        return self.conv2(x, edge_index)


def train_node_classifier(model: torch.nn.Module, data: Data,
                          epochs: int = 200, lr: float = 1e-3,
                          weight_decay: float = 1e-5,
                          seed: Optional[int] = 0) -> Dict[str, object]:
    r"""Trains with Adam and cross-entropy on :obj:`data.train_mask` and
    keeps the parameters of the epoch with the best validation accuracy.

    Returns a dictionary with the selected epoch and the validation and test
    :class:`~pyg_bemap.FairnessReport` of the selected model.
    """
    if seed is not None:
        torch.manual_seed(seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr,
                                 weight_decay=weight_decay)
    best = (-1.0, 0, copy.deepcopy(model.state_dict()))
    for epoch in range(1, epochs + 1):
        model.train()
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        loss = torch.nn.functional.cross_entropy(out[data.train_mask],
                                                 data.y[data.train_mask])
        loss.backward()
        optimizer.step()
        model.eval()
        with torch.no_grad():
            out = model(data.x, data.edge_index)
        val = fairness_report(out, data.y, data.s,
                              mask=data.val_mask).accuracy
        if val > best[0]:
            best = (val, epoch, copy.deepcopy(model.state_dict()))
    model.load_state_dict(best[2])
    model.eval()
    with torch.no_grad():
        out = model(data.x, data.edge_index)
    return {
        'epoch': best[1],
        'val': fairness_report(out, data.y, data.s, mask=data.val_mask),
        'test': fairness_report(out, data.y, data.s, mask=data.test_mask),
    }
