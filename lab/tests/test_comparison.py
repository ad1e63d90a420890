import os.path as osp

import pytest

from pyg_bemap.datasets import biased_sbm
from pyg_bemap_lab.comparison import (
    GRAPH_GRID,
    compare,
    comparison_protocol,
    graph_protocol,
)
from pyg_bemap_lab.running.tuned import TUNED, UNTUNED
from pyg_bemap_lab.sweeping import sweep

STORED = osp.join(osp.dirname(__file__), '..', 'results', 'evaluation')


def test_protocol_pairs_the_backbone_with_its_bemap_version():
    protocol = comparison_protocol('german', 'BeMap(row)', 6, 50, 10)
    assert protocol.methods == ('GCN', 'BeMap(row)')
    assert protocol.seeds == tuple(range(6)) and not protocol.grid
    assert protocol.max_epochs == 50 and protocol.patience == 10
    tuned = TUNED['german', 'GCN']
    assert protocol.config == protocol.config.replace(**tuned)
    assert protocol.config.sampler.beta == 0.25
    sage = comparison_protocol('pokec_z', 'BeMap(sage)', 2)
    assert sage.methods[0] == 'SAGE' and sage.config.lr == UNTUNED['lr']
    with pytest.raises(ValueError, match='not a BeMap method'):
        comparison_protocol('nba', 'FairDrop', 6)
    with pytest.raises(ValueError, match='at least 1'):
        comparison_protocol('nba', 'BeMap(sym)', 0)


def test_a_graph_of_ones_own_gets_a_small_tuning_grid():
    protocol = graph_protocol('graph-x', '/g.pt', 'sage', 4, 30, 5, (0.6, 0.2))
    assert protocol.methods == ('SAGE', 'BeMap(sage)')
    assert protocol.grid == GRAPH_GRID and protocol.grid_seeds == (0, 1)
    assert protocol.graphs == {'graph-x': '/g.pt'}
    assert protocol.split == 'stratified' and protocol.fractions == (0.6, 0.2)
    assert len(protocol.grid_configs()) == 16
    with pytest.raises(ValueError, match="unknown method 'gin'"):
        graph_protocol('graph-x', '/g.pt', 'gin', 4)
    with pytest.raises(ValueError, match='leaving a test split'):
        graph_protocol('graph-x', '/g.pt', 'sym', 4, fractions=(0.7, 0.3))


RECORD_KEYS = {
    'seed',
    'model',
    'acc',
    'auc',
    'delta_sp',
    'delta_eo',
    'delta_prob',
    'val_acc',
    'val_auc',
    'val_delta_sp',
    'val_delta_eo',
    'val_delta_prob',
    'epoch',
    'degenerate',
}


def test_compare_from_python_resumes_from_its_stored_runs(tmp_path):
    data = biased_sbm(150, seed=3)
    del data.train_mask, data.val_mask, data.test_mask
    options = dict(seeds=2, epochs=4, patience=4, out=str(tmp_path))
    options['selection'] = 'val-loss'  # 4 epochs may learn nothing
    res = compare(data, method='sym', **options)
    assert {(r['seed'], r['model']) for r in res.runs} == {
        (s, m) for s in (0, 1) for m in ('GCN', 'BeMap(sym)')
    }
    assert all(set(r) == RECORD_KEYS for r in res.runs)
    assert res.verdict.startswith('no verdict: 2 paired seeds')
    table = res.to_markdown()
    assert '| delta_sp |' in table and 'without degenerate runs' in table
    assert str(res).startswith('BeMap(sym) against GCN on graph-')
    stored = len(res.store)
    assert stored == 16 * 2 + 2  # the tuning grid, then BeMap's seeds
    again = compare(data, method='sym', **options)  # nothing to train
    assert len(again.store) == stored and again.runs == res.runs


def test_compare_refuses_an_unknown_dataset_or_rule():
    with pytest.raises(ValueError, match="unknown dataset 'cora'"):
        compare('cora')
    with pytest.raises(ValueError, match="unknown selection rule 'val-acc'"):
        compare('nba', selection='val-acc')


@pytest.mark.parametrize(
    'arguments, match',
    [  # the held-out cases of issue Evaluation IV
        (dict(seeds=1), 'seeds must be an integer of at least 2'),
        (dict(seeds=2.5), r'seeds must be an integer .*2\.5'),
        (dict(epochs=0), 'epochs must be an integer of at least 1'),
        (dict(patience=-1), 'patience must be an integer of at least 1'),
        (dict(jobs=0), 'jobs must be an integer of at least 1'),
    ],
)
def test_compare_refuses_counts_out_of_range(arguments, match):
    with pytest.raises(ValueError, match=match):
        compare('nba', **arguments)


def test_compare_and_sweep_refuse_an_out_that_is_a_file(tmp_path):
    file = tmp_path / 'file'
    file.write_text('')
    for out in (file, file / 'sub'):
        with pytest.raises(ValueError, match='out names a file, not a folder'):
            compare('nba', out=str(out))
        with pytest.raises(ValueError, match='out names a file, not a folder'):
            sweep('nba', out=str(out))
