import pytest
import torch
from sklearn.metrics import accuracy_score

from pyg_bemap import BalanceAwareSampling, BeMapConv
from pyg_bemap.datasets import biased_sbm
from pyg_bemap.train import TwoLayerGCN, score, train_node_classifier


def test_score_matches_definitions():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(200, 2, generator=gen)
    y = torch.randint(0, 2, (200, ), generator=gen)
    s = torch.randint(0, 2, (200, ), generator=gen)
    mask = torch.rand(200, generator=gen) < 0.7
    out = score(logits, y, s, mask)
    pred = logits.argmax(-1)
    assert out.accuracy == pytest.approx(accuracy_score(y[mask], pred[mask]))
    rate = [pred[mask & (s == g)].float().mean() for g in (0, 1)]
    tpr = [pred[mask & (s == g) & (y == 1)].float().mean() for g in (0, 1)]
    assert out.delta_sp == pytest.approx(abs(float(rate[0] - rate[1])))
    assert out.delta_eo == pytest.approx(abs(float(tpr[0] - tpr[1])))


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
    assert set(results[0]['val'].as_dict()) == {'accuracy', 'delta_sp',
                                                'delta_eo'}
