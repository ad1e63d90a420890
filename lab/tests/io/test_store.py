import json

import pytest

from pyg_bemap_lab.io.store import RunStore, run_key
from pyg_bemap_lab.run_config import RunConfig

CONFIG = {'lr': 0.01, 'hidden': 16, 'dropout': 0.5, 'input_dropout': 0.0}


def run(seed, **extra):
    results = dict(curve={'loss': [0.7]}, test={'val-loss': None})
    return dict(
        protocol='quick',
        dataset='nba',
        method='GCN',
        config=dict(CONFIG),
        seed=seed,
        **{**results, **extra},
    )


def test_runs_survive_a_new_store_and_keys_ignore_other_fields(tmp_path):
    path = str(tmp_path / 'runs' / 'nba.jsonl')
    store = RunStore(path)
    store.add(run(0, curve={'loss': [0.7, 0.6]}))
    store.add(run(1, curve={'loss': [0.8]}))
    again = RunStore(path)
    assert len(again) == 2
    assert run_key(run(0)) in again and run_key(run(2)) not in again
    assert again.get(run_key(run(1)))['curve'] == {'loss': [0.8]}
    # the config's key order, a default spelt out or a number spelt
    # otherwise does not change a run's identity
    other = run(0)
    other['config'] = {**dict(reversed(CONFIG.items())), 'head': False}
    other['config']['hidden'] = 16.0
    assert run_key(other) == run_key(run(0))
    other['config']['head'] = True
    assert run_key(other) != run_key(run(0))


def test_a_line_cut_off_by_an_interruption_is_done_again(tmp_path):
    path = tmp_path / 'nba.jsonl'
    store = RunStore(str(path))
    store.add(run(0))
    with open(path, 'a') as handle:
        handle.write('{"protocol": "quick", "datas')  # killed mid-write
    resumed = RunStore(str(path))
    assert len(resumed) == 1
    resumed.add(run(1))
    assert len(RunStore(str(path))) == 2


def test_a_record_needs_its_identity():
    with pytest.raises(ValueError, match='seed'):
        run_key(
            {
                'protocol': 'quick',
                'dataset': 'nba',
                'method': 'GCN',
                'config': CONFIG,
            }
        )


def test_a_base_file_is_read_first_and_never_written(tmp_path):
    base = RunStore(str(tmp_path / 'base.jsonl'))
    first = {**run(0), 'protocol': 'p', 'dataset': 'd', 'method': 'm'}
    base.add({**first, 'acc': 0.5})
    base.add({**first, 'seed': 1, 'acc': 0.6})
    over = RunStore(str(tmp_path / 'over.jsonl'), base=base.path)
    assert len(over) == 2
    over.add({**first, 'acc': 0.9, 'epochs': 9})  # trained again
    before = (tmp_path / 'base.jsonl').read_text()
    again = RunStore(str(tmp_path / 'over.jsonl'), base=base.path)
    assert again.get(run_key(first))['acc'] == 0.9
    assert len(again) == 2
    assert (tmp_path / 'base.jsonl').read_text() == before
    assert len((tmp_path / 'over.jsonl').read_text().splitlines()) == 1
    with pytest.raises(FileNotFoundError, match='no such file of runs'):
        RunStore(str(tmp_path / 'x.jsonl'), base=str(tmp_path / 'none'))


def test_a_bad_record_names_the_file_and_the_line(tmp_path):
    path = tmp_path / 'runs.jsonl'
    store = RunStore(str(path))
    store.add(run(0))
    store.add(run(1))
    lines = path.read_text().splitlines()
    path.write_text('\n'.join([lines[0], '{"garbage": ', lines[1]]) + '\n')
    with pytest.raises(ValueError, match=r'runs.jsonl: line 2: not a run'):
        RunStore(str(path))
    path.write_text('\n'.join([lines[0], '{"seed": 3}', lines[1]]) + '\n')
    with pytest.raises(ValueError, match=r'line 2: .* needs the fields'):
        RunStore(str(path))
    path.write_text('\n'.join([lines[0], lines[1], '{"prot']))  # cut off
    assert len(RunStore(str(path))) == 2
    # what reports read: a curve of lists and a table of test reports
    for broken, said in (
        ({'curve': None}, "'curve' is not a table of lists"),
        ({'curve': {'loss': 0.7}}, "'curve' is not a table of lists"),
        ({'test': None}, "'test' is not a table"),
    ):
        path.write_text(json.dumps(run(2, **broken)) + '\n')
        with pytest.raises(ValueError, match=f'line 1: not a run .*{said}'):
            RunStore(str(path))


def test_one_process_at_a_time_and_a_folder_it_can_write(tmp_path):
    import os
    import subprocess
    import sys

    store = RunStore(str(tmp_path / 'out' / 'runs.jsonl'))
    other = (
        'import sys; from pyg_bemap_lab.io.store import RunStore\n'
        'try:\n'
        '    with RunStore(sys.argv[1]).lock(): pass\n'
        'except ValueError as error: print(error)\n'
    )
    with store.lock():
        out = subprocess.run(
            [sys.executable, '-c', other, store.path],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
    assert 'is in use by another pyg-bemap process' in out
    with store.lock():  # free again
        pass
    if os.geteuid() != 0:  # root writes anywhere
        folder = tmp_path / 'read-only'
        folder.mkdir(mode=0o500)
        with pytest.raises(PermissionError, match='cannot write here'):
            with RunStore(str(folder / 'runs.jsonl')).lock():
                pass


def test_runs_stored_before_input_dropout_was_named_migrate(tmp_path):
    # they dropped the input features at the hidden rate: that is their
    # input_dropout, and a job asking for it finds them
    path = tmp_path / 'runs.jsonl'
    old = run(0, curve={'loss': [0.7]})
    old['config'] = {'lr': 0.01, 'hidden': 16, 'dropout': 0.5}
    path.write_text(json.dumps(old) + '\n')
    store = RunStore(str(path))
    (stored,) = list(store)
    assert (
        stored['config']
        == RunConfig.from_dict(
            {**old['config'], 'input_dropout': 0.5}
        ).as_dict()
    )
    wanted = run(0)
    wanted['config'] = {**old['config'], 'input_dropout': 0.5}
    assert run_key(wanted) in store
    wanted['config']['input_dropout'] = 0.0
    assert run_key(wanted) not in store
    # FairDrop's drop rate goes under its own name
    fairdrop = run(1)
    fairdrop['config'] = {**CONFIG, 'delta': 0.1}
    with open(path, 'a') as handle:
        handle.write(json.dumps(fairdrop) + '\n')
    fairdrop['config'] = {**fairdrop['config'], 'fairdrop_delta': 0.1}
    del fairdrop['config']['delta']
    assert run_key(fairdrop) in RunStore(str(path))
    # a run that names its input dropout is read as it is
    store.add({**wanted, 'curve': {'loss': [0.6]}})
    assert RunStore(str(path)).get(run_key(wanted))['curve'] == {'loss': [0.6]}


def test_a_stored_run_is_found_by_its_typed_configuration():
    # every stored run of the evaluation, written before the run
    # configuration was typed (settings left out had their defaults), is
    # found by the job of its RunConfig
    import os.path as osp

    path = osp.join(osp.dirname(__file__), '..', '..', 'results', 'evaluation')
    store = RunStore(osp.join(path, 'runs.jsonl'))
    with open(osp.join(path, 'runs.jsonl')) as handle:
        first = json.loads(handle.readline())
    old = first['config']  # the older format: no head, FairDrop's 'delta'
    assert 'head' not in old and 'input_dropout' not in old
    config = RunConfig(
        lr=old['lr'],
        hidden=old['hidden'],
        dropout=old['dropout'],
        input_dropout=old['dropout'],
        scale=old['scale'],
        fairdrop_delta=old['delta'],
    )
    job = {**first, 'config': config.as_dict()}
    assert store.get(run_key(job))['curve'] == first['curve']
    assert all(
        RunConfig.from_dict(run['config']).as_dict() == run['config']
        for run in store
    )
