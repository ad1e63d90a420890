import os.path as osp

from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.running.planning import chosen_configs
from pyg_bemap_lab.running.protocols import PROTOCOLS
from pyg_bemap_lab.running.tuned import TUNED

STORED = osp.join(osp.dirname(__file__), '..', '..', 'results', 'evaluation')


def test_tuned_settings_are_the_default_protocols_choices():
    store = RunStore(osp.join(STORED, 'runs.jsonl'))
    chosen = chosen_configs(PROTOCOLS['default'], store)
    for (dataset, backbone), config in TUNED.items():
        choice = chosen[dataset, backbone]
        assert choice == choice.replace(**config), (dataset, backbone)


def trains_the_default_protocols_choices(protocol):
    store = RunStore(osp.join(STORED, 'runs.jsonl'))
    chosen = chosen_configs(PROTOCOLS['default'], store)
    empty = RunStore(osp.join(STORED, 'absent', 'runs.jsonl'))
    again = chosen_configs(protocol, empty)
    return all(
        again[dataset, method] == chosen[dataset, method]
        for dataset in protocol.datasets
        for method in protocol.methods
    )


def test_the_confirmatory_protocol_trains_the_default_protocols_choices():
    # pre-registered: the configurations exactly as the default chose them
    confirmatory = PROTOCOLS['confirmatory']
    assert trains_the_default_protocols_choices(confirmatory)
    assert confirmatory.seeds == tuple(range(30, 60))
    assert confirmatory.methods == ('GCN', 'BeMap(sym)')
    assert not set(confirmatory.seeds) & set(range(30))  # never used


def test_the_gap_arm_reruns_the_headlines_first_seeds_and_choices():
    arm = PROTOCOLS['exploratory-gap']
    assert trains_the_default_protocols_choices(arm)
    assert arm.seeds == PROTOCOLS['default'].seeds == tuple(range(10))
    assert arm.datasets == ('nba', 'german', 'recidivism', 'credit')
    assert arm.methods == ('GCN', 'BeMap(sym)')
    assert arm.name.startswith('exploratory')
