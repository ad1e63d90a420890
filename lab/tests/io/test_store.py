import json
import lzma
import math
import os
import os.path as osp

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
    base.seal()
    over = RunStore(str(tmp_path / 'over.jsonl'), base=base.path)
    assert len(over) == 2
    over.add({**first, 'acc': 0.9, 'epochs': 9})  # trained again
    before = (tmp_path / 'base' / 'summaries.jsonl.xz').read_bytes()
    again = RunStore(str(tmp_path / 'over.jsonl'), base=base.path)
    assert again.get(run_key(first))['acc'] == 0.9
    assert len(again) == 2
    assert len((tmp_path / 'over.jsonl').read_text().splitlines()) == 1
    again.seal()  # its own run only
    assert len(RunStore(str(tmp_path / 'over.jsonl'))) == 1
    assert (tmp_path / 'base' / 'summaries.jsonl.xz').read_bytes() == before
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


def test_a_stored_run_is_found_by_its_typed_configuration(tmp_path):
    # a run written before the run configuration was typed (settings left
    # out had their defaults: the first line of the evaluation's store, as
    # it was) is found by the job of its RunConfig
    old = {
        'beta': 0.25,
        'delta': 0.16,  # FairDrop's, under its earlier name
        'dropout': 0.0,
        'hidden': 16,
        'lr': 0.001,
        'min_keep': 4,
        'scale': True,
        'weight_decay': 1e-05,
    }
    path = tmp_path / 'runs.jsonl'
    path.write_text(json.dumps({**run(0), 'config': old}) + '\n')
    config = RunConfig(
        lr=0.001, hidden=16, dropout=0.0, input_dropout=0.0, scale=True,
        fairdrop_delta=0.16,
    )  # fmt: skip
    job = {**run(0), 'config': config.as_dict()}
    assert RunStore(str(path)).get(run_key(job))['curve'] == {'loss': [0.7]}


def test_the_evaluation_store_holds_canonical_runs_with_provenance():
    path = osp.join(osp.dirname(__file__), '..', '..', 'results')
    store = RunStore(osp.join(path, 'evaluation', 'runs.jsonl'))
    assert len(store) > 2000
    for stored in store:
        config = stored['config']
        assert RunConfig.from_dict(config).as_dict() == config
        assert 'software' not in stored  # read as 'provenance'
        assert set(stored['val']) == set(stored['test'])


def test_a_command_seals_its_runs_into_summaries_and_curves(tmp_path):
    path = tmp_path / 'out' / 'runs.jsonl'
    nan = float('nan')
    first = run(0, curve={'loss': [0.7, 0.6], 'auc': [nan, 0.55]})
    first['test'] = {'val-loss': {'epoch': 1, 'sp': 0.1}, 'val-auc': None}
    with RunStore(str(path)).lock() as store:
        store.add(first)
        store.add({**run(1), 'dataset': 'german'})
        assert path.exists()  # written as each run ends
    assert not path.exists()  # sealed as the command ends
    folder = tmp_path / 'out' / 'runs'
    assert sorted(os.listdir(folder)) == [
        'curves-german.xz',
        'curves-nba.xz',
        'summaries.jsonl.xz',
    ]
    with lzma.open(folder / 'summaries.jsonl.xz', 'rt') as handle:
        summaries = [json.loads(line) for line in handle]
    assert all('curve' not in summary for summary in summaries)
    # the validation metrics at each rule's epoch, read off the curves
    assert summaries[1]['val'] == {
        'val-loss': {'loss': 0.6, 'auc': 0.55},
        'val-auc': None,
    }
    again = RunStore(str(path))
    assert len(again) == 2
    curve = again.get(run_key(first))['curve']
    assert curve['loss'] == [0.7, 0.6] and math.isnan(curve['auc'][0])
    # runs added on top are sealed beside the others
    with again.lock():
        again.add(run(2))
    assert len(RunStore(str(path))) == 3


def test_a_seal_cut_short_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    from pyg_bemap_lab.io import store as module

    path = tmp_path / 'runs.jsonl'
    with RunStore(str(path)).lock() as store:
        store.add(run(0))
    store = RunStore(str(path))
    store.add(run(1, curve={'loss': [0.5]}))

    def killed(*args, **kwargs):
        raise KeyboardInterrupt  # after the curves, before the summaries

    monkeypatch.setattr(module, '_write_xz', killed)
    with pytest.raises(KeyboardInterrupt):
        store.seal()
    monkeypatch.undo()
    assert path.exists()  # the journal stays until the summaries are in
    resumed = RunStore(str(path))
    assert len(resumed) == 2
    assert resumed.get(run_key(run(1)))['curve'] == {'loss': [0.5]}
    resumed.seal()
    assert not path.exists() and len(RunStore(str(path))) == 2
    # a summary whose curves are gone is an error that says what to do
    os.remove(tmp_path / 'runs' / 'curves-nba.xz')
    with pytest.raises(ValueError, match='curves of a run are missing'):
        RunStore(str(path))


def test_earlier_provenance_is_read_as_today(tmp_path):
    path = tmp_path / 'runs.jsonl'
    software = {
        'pyg-bemap': '0.1.0',
        'pyg-bemap-lab': '0.1.0',
        'pyg_bemap commit': 'abc+changes',
        'pyg_bemap_lab commit': 'abc+changes',
        'torch': '2.14.1+cu130',
        'torch_geometric': '2.8.1',
    }
    path.write_text(json.dumps(run(0, software=software)) + '\n')
    (stored,) = RunStore(str(path))
    assert 'software' not in stored
    assert stored['provenance'] == {
        'library': {'version': '0.1.0', 'commit': 'abc', 'clean': False},
        'lab': {'version': '0.1.0', 'commit': 'abc', 'clean': False},
        'torch': '2.14.1+cu130',
        'torch_geometric': '2.8.1',
    }


def test_a_report_learns_which_runs_it_read(tmp_path):
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    store.add(run(0))
    store.add(run(1))
    with store.reading() as outer:
        store.get(run_key(run(0)))
        with store.reading() as inner:
            store.get(run_key(run(1)))
            store.get(run_key(run(5)))  # not stored: not read
    assert outer == {run_key(run(0)), run_key(run(1))}
    assert inner == {run_key(run(1))}
    store.get(run_key(run(0)))  # outside: nothing records it
    assert len(outer) == 2
