import pytest
import torch
from torch_geometric.typing import WITH_TORCH_SPARSE, SparseTensor

from pyg_bemap import BalanceAwareSampling, BeMapConv
from pyg_bemap.datasets import biased_sbm
from pyg_bemap.metrics import FairnessReport
from pyg_bemap_lab import (
    METHODS,
    EpochRecord,
    Hyper,
    NodeClassifier,
    fast_graph,
    select,
    train_and_record,
)


def report(acc, auc, sp, eo):
    return FairnessReport(acc, auc, sp, eo, {})


def record(epoch, val, test):
    return EpochRecord(epoch, report(*val), report(*test))


RECORDS = [
    record(1, (0.70, 0.80, 0.01, 0.01), (0.90, 0.8, 0.01, 0.01)),
    record(2, (0.80, 0.85, 0.20, 0.01), (0.60, 0.8, 0.01, 0.01)),
    record(3, (0.75, 0.85, 0.01, 0.02), (0.95, 0.8, 0.20, 0.01)),
    record(4, (0.60, float('nan'), 0.0, 0.0), (0.99, 0.9, 0.0, 0.0)),
]


def test_selection_rules():
    assert select(RECORDS, 'val-acc', None).epoch == 2
    assert select(RECORDS, 'val-auc', None).epoch == 2  # earliest best AUC
    assert select(RECORDS, 'val-fair', 0.05).epoch == 3
    assert select(RECORDS, 'paper', 0.05).epoch == 4  # test-set selection
    assert select(RECORDS, 'val-fair', None) is None
    assert select(RECORDS, 'paper', 0.0) is None


@pytest.mark.parametrize('method', list(METHODS))
def test_every_method_builds_and_trains(method):
    data = BalanceAwareSampling()(biased_sbm(200, seed=1))
    result = train_and_record(data, method, seed=0, hyper=Hyper(epochs=3))
    assert [r.epoch for r in result.records] == [1, 2, 3]
    backbone, sampler = METHODS[method]
    bemap = sampler not in (None, 'fairdrop', 'renumbered')
    assert isinstance(result.model.conv1, BeMapConv) == bemap
    if bemap:
        assert result.model.conv1.strategy == sampler
    assert not result.model.training


def test_training_keeps_the_best_validation_epoch_and_stops_early():
    data = BalanceAwareSampling()(biased_sbm(300, seed=2))
    result = train_and_record(data, 'GCN', 0, Hyper(epochs=60, patience=5))
    best = select(result.records, 'val-acc', None)
    assert len(result.records) <= 60
    assert len(result.records) == 60 or len(result.records) - best.epoch == 5
    from pyg_bemap.metrics import fairness_report

    graph = fast_graph(data, 'gcn')
    with torch.no_grad():
        out = result.model(data.x, graph)
    again = fairness_report(out, data.y, data.s, mask=data.val_mask)
    assert again.accuracy == pytest.approx(best.val.accuracy)


def test_same_seed_same_records():
    data = BalanceAwareSampling()(biased_sbm(200, seed=3))
    a = train_and_record(data, 'BeMap(sym)', 7, Hyper(epochs=4)).records
    b = train_and_record(data, 'BeMap(sym)', 7, Hyper(epochs=4)).records
    assert [r.test for r in a] == [r.test for r in b]


def test_fast_graph_layouts():
    data = BalanceAwareSampling()(biased_sbm(100, seed=4))
    graph = fast_graph(data, 'gcn')
    if WITH_TORCH_SPARSE:
        assert isinstance(graph, SparseTensor)
        assert graph.nnz() == data.num_edges
        for backbone in ('gat', 'row'):
            assert isinstance(fast_graph(data, backbone), SparseTensor)
    else:  # pragma: no cover
        assert graph.layout == torch.sparse_csr
        for backbone in ('gat', 'row'):
            assert type(fast_graph(data, backbone)) is torch.Tensor
    assert type(fast_graph(data, 'mlp')) is torch.Tensor


def test_classifier_outputs_one_logit_per_node():
    model = NodeClassifier(8, 'row', 'uniform', Hyper(hidden=4))
    data = BalanceAwareSampling()(biased_sbm(50, num_features=8))
    assert model(data.x, data.edge_index).shape == (50,)


def test_a_linear_head_after_the_second_layer():
    data = biased_sbm(60, seed=6)
    model = NodeClassifier(data.num_features, 'gcn', None, Hyper(head=True))
    assert model.conv2.out_channels == 128 and model.head.in_features == 128
    assert model(data.x, data.edge_index).shape == (60,)
    bemap = NodeClassifier(
        data.num_features, 'gcn', 'balance', Hyper(head=True)
    )
    assert isinstance(bemap.conv2, BeMapConv)
    assert isinstance(bemap.head, torch.nn.Linear)  # not a layer to sample
    assert NodeClassifier(data.num_features, 'gcn', None, Hyper()).head is None
