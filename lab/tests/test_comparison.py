import os.path as osp

import pytest

from pyg_bemap_lab.comparison import (
    TUNED,
    UNTUNED,
    comparison_protocol,
    comparison_summary,
)
from pyg_bemap_lab.planning import chosen_configs
from pyg_bemap_lab.protocols import PROTOCOLS, record_of
from pyg_bemap_lab.store import RunStore

STORED = osp.join(osp.dirname(__file__), '..', 'results', 'evaluation')


def test_protocol_pairs_the_backbone_with_its_bemap_version():
    protocol = comparison_protocol('german', 'BeMap(row)', 6, 50, 10)
    assert protocol.methods == ('GCN', 'BeMap(row)')
    assert protocol.seeds == tuple(range(6)) and not protocol.grid
    assert protocol.max_epochs == 50 and protocol.patience == 10
    assert protocol.config['hidden'] == 128 and protocol.config['beta'] == 0.25
    sage = comparison_protocol('pokec_z', 'BeMap(sage)', 2)
    assert sage.methods[0] == 'SAGE' and sage.config['lr'] == UNTUNED['lr']
    with pytest.raises(ValueError, match='not a BeMap method'):
        comparison_protocol('nba', 'FairDrop', 6)
    with pytest.raises(ValueError, match='at least 1'):
        comparison_protocol('nba', 'BeMap(sym)', 0)


def test_tuned_settings_are_the_default_protocols_choices():
    store = RunStore(osp.join(STORED, 'runs.jsonl'))
    chosen = chosen_configs(PROTOCOLS['default'], store)
    for (dataset, backbone), config in TUNED.items():
        choice = chosen[dataset, backbone]
        assert {k: choice[k] for k in config} == config, (dataset, backbone)


def test_summary_fits_80_columns_and_gives_the_verdict(tmp_path):
    protocol = comparison_protocol('nba', 'BeMap(sym)', 6)
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    for seed in protocol.seeds:
        for method, sp in (('GCN', 0.10), ('BeMap(sym)', 0.07)):
            picked = dict(acc=0.7, auc=0.8, sp=sp + seed / 100, eo=0.05)
            result = {'test': {'val-loss': picked}}
            job = ('nba', method, protocol.config, seed)
            store.add(record_of(protocol, job, result))
    chosen = {('nba', m): protocol.config for m in protocol.methods}
    summary = comparison_summary(protocol, store, chosen)
    assert max(len(line) for line in summary.splitlines()) <= 80
    assert 'BeMap(sym) against GCN on nba: 6 paired seeds' in summary
    assert '  delta_sp  -3.00 [-3.00, -3.00]*' in summary
    verdict = ' '.join(summary.split('\n\n')[-1].split())
    assert verdict == (
        'Verdict: fairer: delta_sp -3.0 [-3.0, -3.0]; no significant '
        'change in accuracy or AUC.'
    )
