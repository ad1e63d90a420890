import pytest
import torch

from pyg_bemap import BalanceAwareSampling, BeMapConv
from pyg_bemap.datasets import biased_sbm
from pyg_bemap.metrics import fairness_report
from pyg_bemap_lab import METHODS, RunConfig, Trainer, train
from pyg_bemap_lab.running.provenance import device_name, provenance
from pyg_bemap_lab.running.training import RandomStream, train_run
from pyg_bemap_lab.selection import DEFAULT_RULE, STORED_RULES


@pytest.fixture(scope='module')
def data():
    return BalanceAwareSampling()(biased_sbm(300, seed=2))


@pytest.mark.parametrize('method', list(METHODS))
def test_every_method_builds_and_trains(method):
    data = BalanceAwareSampling()(biased_sbm(200, seed=1))
    run = train(data, method, seed=0, epochs=3)
    assert len(run.history) == 3
    assert all(len(values) == 3 for values in run.history.val.values())
    sampler = METHODS[method].graph
    bemap = sampler not in (None, 'fairdrop', 'renumbered')
    assert isinstance(run.model.conv1, BeMapConv) == bemap
    if bemap:
        assert run.model.conv1.strategy == sampler
    assert not run.model.training


def _logits(model, data):
    with torch.no_grad():
        return model(data.x, data.edge_index)


def test_stops_on_the_validation_loss_and_keeps_the_default_rules_epoch(
    data,
):
    run = train(data, 'GCN', 0, RunConfig(lr=0.05), epochs=60, patience=5)
    history = run.history
    best = history.pick('val-loss')
    assert len(history) < 60 and len(history) - 1 - best == 5
    assert run.kept == DEFAULT_RULE == 'val-loss-learned'
    kept = history.pick(DEFAULT_RULE)
    out = _logits(run.model, data)
    loss = torch.nn.functional.binary_cross_entropy_with_logits(
        out[data.val_mask], data.y[data.val_mask].float()
    )
    assert float(loss) == pytest.approx(history.val['loss'][kept])


def test_the_model_can_keep_another_running_rule(data):
    run = train(data, 'GCN', 0, RunConfig(lr=0.05), epochs=40, keep='val-acc')
    best = run.history.pick('val-acc')
    report = fairness_report(
        _logits(run.model, data), data.y, data.s, mask=data.val_mask
    )
    assert report.accuracy == pytest.approx(run.history.val['acc'][best])
    with pytest.raises(ValueError, match='val-loss, val-acc, val-auc'):
        train(data, 'GCN', 0, epochs=2, keep='val-fair')


def test_same_seed_same_history_whatever_the_global_state(data):
    torch.manual_seed(1)
    a = train(data, 'BeMap(sym)', 7, epochs=4).history
    torch.manual_seed(2)
    b = train(data, 'BeMap(sym)', 7, epochs=4).history
    assert a.test == b.test and a.val == b.val
    c = train(data, 'BeMap(sym)', 8, epochs=4).history
    assert c.val != a.val


def test_training_leaves_the_callers_random_state_alone(data):
    torch.manual_seed(0)
    before = torch.get_rng_state()
    for method in ('BeMap(sym)', 'FairDrop'):
        train(data, method, 3, epochs=2)
    assert torch.equal(torch.get_rng_state(), before)


def test_an_unknown_method_is_refused(data):
    with pytest.raises(ValueError, match="unknown method 'GIN'"):
        Trainer(data, 'GIN', 0, RunConfig())


def test_the_stored_record_of_a_run(data):
    config = RunConfig(lr=0.01, hidden=8, dropout=0.5)
    record = train_run(data, 'GCN', config, 0, 5, 5, budget=0.5)
    assert record['epochs'] == 5
    assert set(record['curve']) == {
        'loss',
        'acc',
        'auc',
        'sp',
        'eo',
        'prob',
        'pos',
    }
    # the threshold-free gap too
    assert set(record['test']['val-loss']) == {
        *('epoch', 'acc', 'auc', 'sp', 'eo', 'prob', 'pos')
    }
    assert len(record['curve']['pos']) == 5  # the validation positive share
    assert set(record['test']) == set(STORED_RULES) | {'test-fair'}
    picked = record['test']['val-loss']
    loss = record['curve']['loss']
    assert picked['epoch'] == loss.index(min(loss))
    assert 'test-fair' not in train_run(data, 'GCN', config, 0, 2, 2)['test']
    # the process's CPU time beside the wall clock's
    cores = torch.get_num_threads()
    assert 0 < record['cpu_seconds'] <= record['seconds'] * cores + 0.1
    # what it was made with, and where
    assert record['provenance'] == provenance() | {
        'device': device_name(data.x.device)
    }


def test_a_random_stream_seeds_no_device_it_does_not_restore(monkeypatch):
    # torch.manual_seed also seeds every GPU (at once, or when CUDA starts),
    # which the stream's fork of the CPU alone would not restore
    seeded = []
    monkeypatch.setattr(torch.cuda, 'manual_seed_all', seeded.append)
    state = torch.get_rng_state()
    stream = RandomStream(1234, torch.device('cpu'))
    with stream:
        first = torch.rand(3)
    assert seeded == [] and torch.equal(torch.get_rng_state(), state)
    torch.manual_seed(1234)
    assert torch.equal(first, torch.rand(3))  # the seed's own stream
