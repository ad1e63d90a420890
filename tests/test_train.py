import torch

from pyg_bemap import BalanceAwareSampling, BeMapConv
from pyg_bemap.datasets import biased_sbm
from pyg_bemap.train import TwoLayerGCN, train_node_classifier


def test_training_selects_on_validation_and_is_seeded():
    data = BalanceAwareSampling()(biased_sbm(300, seed=2))
    results = []
    for _ in range(2):
        torch.manual_seed(0)
        model = TwoLayerGCN(data.num_features, 16, bemap=True)
        assert isinstance(model.conv1, BeMapConv)
        results.append(train_node_classifier(model, data, epochs=5, lr=0.01))
    assert results[0]['epoch'] == results[1]['epoch']
    assert results[0]['test'] == results[1]['test']
    assert 1 <= results[0]['epoch'] <= 5
    assert results[0]['val'].accuracy >= 0.0
