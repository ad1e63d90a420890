import csv

import pytest

from pyg_bemap.datasets import biased_sbm
from pyg_bemap_lab.comparison import GRAPH_GRID
from pyg_bemap_lab.running.tuned import TUNED
from pyg_bemap_lab.sweeping import (
    QUICK_SETTINGS,
    SETTINGS,
    sweep,
    sweep_protocol,
)


def test_the_grid_varies_one_knob_at_a_time_beside_reference_points():
    protocol = sweep_protocol('german', 10)
    assert protocol.seeds == protocol.sweep_seeds == tuple(range(10))
    assert set(protocol.methods) >= {
        'MLP', 'GCN', 'SAGE', 'GAT', 'FairDrop', 'BeMap(sym)', 'BeMap(row)',
        'BeMap(sage)', 'BeMap(gat)', 'BeMap(sym)-uniform', 'BeMap(sym)-degree',
    }  # fmt: skip
    knobs = [s for m, s in SETTINGS if s]
    assert all(len(s) == 1 for s in knobs)  # one knob at a time
    assert {k for s in knobs for k in s} == {
        'beta', 'min_keep', 'balance_delta', 'num_hops'
    }  # fmt: skip
    assert protocol.sweep['FairDrop'] == (
        {'fairdrop_delta': 0.08},
        {'fairdrop_delta': 0.32},
    )
    # a named dataset keeps the default protocol's tuned backbones
    assert protocol.tuned['german', 'GCN'] == TUNED['german', 'GCN']
    assert not protocol.grid
    quick = sweep_protocol('graph-x', 3, quick=True, path='/g.pt')
    assert quick.methods == ('MLP', 'GCN', 'FairDrop', 'BeMap(sym)',
                             'BeMap(sym)-uniform')  # fmt: skip
    assert quick.grid == GRAPH_GRID and quick.graphs == {'graph-x': '/g.pt'}
    assert len(QUICK_SETTINGS) == 4
    with pytest.raises(ValueError, match='at least 1'):
        sweep_protocol('nba', 0)


def test_a_quick_sweep_on_a_graph_it_saves_itself(tmp_path):
    data = biased_sbm(120, seed=5)
    res = sweep(data, str(tmp_path), seeds=2, epochs=3, patience=3, quick=True)
    with open(tmp_path / 'sweep.csv') as handle:
        rows = list(csv.DictReader(handle))
    assert [r['setting'] for r in rows] == [
        'MLP', 'GCN', 'FairDrop', 'sym', 'sym-uniform', 'sym beta=0.1',
        'sym beta=1',
    ]  # fmt: skip
    for column in ('val_acc', 'val_delta_sp', 'test_acc', 'test_delta_sp',
                   'test_delta_eo', 'on_frontier'):  # fmt: skip
        assert column in rows[0]
    assert any(r['on_frontier'] == 'True' for r in rows)
    assert rows[3]['backbone'] == 'GCN' and rows[3]['delta_sp_vs_backbone']
    assert rows[0]['backbone'] == ''  # the MLP has no backbone
    assert (tmp_path / 'pareto.png').stat().st_size > 10_000
    text = str(res)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert 'nothing is chosen on them' in ' '.join(text.split())
