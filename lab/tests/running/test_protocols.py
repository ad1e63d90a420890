import dataclasses
import os
import os.path as osp
import statistics

import pytest

from pyg_bemap.datasets.fair_graph import PROCESSED_FORMAT
from pyg_bemap_lab.cli import main
from pyg_bemap_lab.io.store import RunStore, run_key
from pyg_bemap_lab.reporting.tables import comparisons, protocol_report
from pyg_bemap_lab.run_config import RunConfig
from pyg_bemap_lab.running import execution
from pyg_bemap_lab.running.execution import prepared_graph, run_protocol
from pyg_bemap_lab.running.planning import (
    chosen_configs,
    missing_runs,
    stored_runs,
)
from pyg_bemap_lab.running.protocols import PROTOCOLS, Protocol, record_of
from tests.datasets.test_fair_graph import with_raw

# NBA ships with the package: a tiny protocol that still tunes
TINY = Protocol(
    name='tiny',
    description='for tests',
    datasets=('nba',),
    methods=('MLP', 'GCN', 'BeMap(sym)', 'FairDrop'),
    seeds=(0, 1, 2),
    max_epochs=3,
    patience=2,
    config=RunConfig(hidden=8, dropout=0.0),
    grid=dict(lr=(1e-2, 1e-3)),
    grid_seeds=(0, 1),
    fairdrop_deltas=(0.1, 0.3),
    sweep={
        'BeMap(sym)': (
            dict(beta=0.25, min_keep=4),
            dict(beta=1.0, min_keep=1),
        ),
        'FairDrop': (dict(fairdrop_delta=0.0), dict(fairdrop_delta=0.5)),
    },
    sweep_seeds=(0, 1),
)


def test_tuning_picks_the_lowest_mean_validation_loss(tmp_path):
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    chosen = run_protocol(TINY, str(tmp_path), store)
    for method in ('MLP', 'GCN'):
        losses = {
            config.lr: statistics.mean(
                min(run['curve']['loss'])
                for run in stored_runs(
                    TINY, store, 'nba', method, config, TINY.grid_seeds
                )
            )
            for config in TINY.grid_configs()
        }
        assert chosen['nba', method].lr == min(losses, key=losses.get)
    # BeMap keeps its backbone's choice; FairDrop adds its delta to GCN's
    assert chosen['nba', 'BeMap(sym)'] == chosen['nba', 'GCN']
    fairdrop = chosen['nba', 'FairDrop']
    assert fairdrop.fairdrop_delta in TINY.fairdrop_deltas
    assert fairdrop.replace(fairdrop_delta=0.16) == chosen['nba', 'GCN']
    # 2 configs x 2 backbones x 2 seeds, 2 deltas x 2 seeds, then 4 methods
    # x 3 seeds of which the tuning runs already hold some
    for method in TINY.methods:
        runs = stored_runs(
            TINY, store, 'nba', method, chosen['nba', method], TINY.seeds
        )
        assert [run['seed'] for run in runs] == [0, 1, 2]
        assert all(run['epochs'] <= TINY.max_epochs for run in runs)


def test_resume_after_an_interruption_gives_the_same_tables(tmp_path):
    whole = RunStore(str(tmp_path / 'whole.jsonl'))
    expected = protocol_report(
        TINY, whole, run_protocol(TINY, str(tmp_path), whole)
    )
    path = str(tmp_path / 'cut.jsonl')
    finished = []

    def interrupt(job):
        finished.append(job)
        if len(finished) == 5:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_protocol(TINY, str(tmp_path), RunStore(path), on_run=interrupt)
    resumed = RunStore(path)
    assert len(resumed) == 5
    assert missing_runs(TINY, resumed) == {'nba': len(whole) - 5}
    partial = protocol_report(TINY, resumed, chosen_configs(TINY, resumed))
    assert f'runs still missing (nba {len(whole) - 5})' in partial
    assert 'Incomplete' not in expected
    redone = []
    chosen = run_protocol(TINY, str(tmp_path), resumed, on_run=redone.append)
    assert len(redone) == len(whole) - 5  # nothing is trained twice
    assert protocol_report(TINY, resumed, chosen) == expected
    assert chosen_configs(TINY, RunStore(path)) == chosen  # no training
    assert missing_runs(TINY, resumed) == {'nba': 0}


def test_report_pairs_and_marks():
    assert comparisons(TINY) == [
        ('GCN', 'BeMap(sym)'),
        ('GCN', 'FairDrop'),
        ('MLP', 'GCN'),
        ('MLP', 'BeMap(sym)'),
        ('MLP', 'FairDrop'),
    ]
    default = PROTOCOLS['default']
    assert len(default.grid_configs()) == 32
    assert default.seeds == tuple(range(10)) and default.max_epochs == 1000


def test_a_run_reads_its_graph_without_printing(tmp_path, monkeypatch, capfd):
    monkeypatch.delenv('PYTEST_CURRENT_TEST')  # PyG keeps quiet under it
    data = prepared_graph(TINY, str(tmp_path), 'nba', TINY.config, 0)
    assert data.num_nodes == 403 and int(data.train_mask.sum()) > 0
    assert capfd.readouterr() == ('', '')  # the workers of a notebook's run


def test_record_identity():
    job = ('nba', 'GCN', RunConfig(lr=0.01), 3)
    record = record_of(TINY, job, {'epochs': 2})
    assert record['epochs'] == 2 and record['protocol'] == 'tiny'
    assert run_key(record) == run_key(record_of(TINY, job))


def test_quick_protocol_from_the_command_line(tmp_path, capsys):
    root = with_raw(str(tmp_path / 'data'), 'german')
    out = str(tmp_path / 'out')
    argv = ['reproduce', '--quick', '--max-epochs', '2', '--out', out]
    assert main(argv + ['--root', root, '--jobs', '1']) == 0
    assert '\r' not in capsys.readouterr().err  # no bar redrawn when piped
    report = open(osp.join(out, 'quick-max2.md')).read()
    assert 'BeMap(sym) - GCN' in report and 'FairDrop - GCN' in report
    assert "Protocol 'quick-max2'" in report
    assert osp.getsize(osp.join(out, 'paired_quick-max2.png')) > 10_000
    assert osp.getsize(osp.join(out, 'paired_quick-max2_sym.png')) > 10_000
    # a second call resumes: nothing left to run
    assert main(argv + ['--root', root, '--jobs', '1']) == 0
    said = capsys.readouterr().out
    assert said.startswith('0 new runs') and '\nwrote' in said
    assert all(  # but for a path too long for a line, on a line of its own
        len(line) <= 80 or line.startswith('  /') for line in said.splitlines()
    )
    # the report alone, from the stored runs
    path = osp.join(out, 'quick-max2.md')
    os.remove(path)
    assert main(argv + ['--root', '/nowhere', '--report-only']) == 0
    assert open(path).read() == report
    assert len(RunStore(osp.join(out, 'runs.jsonl'))) == 2 * 4 * 3


def test_sweep_runs_and_tradeoff_plot(tmp_path):
    from pyg_bemap_lab.reporting.plots import (
        plot_paired,
        plot_tradeoff,
        tradeoff_points,
    )
    from pyg_bemap_lab.running.protocols import sweep_configs

    store = RunStore(str(tmp_path / 'runs.jsonl'))
    chosen = run_protocol(TINY, str(tmp_path), store)
    swept = sweep_configs(TINY, chosen, 'nba')
    assert len(swept) == 4
    for method, config in swept:
        point = tradeoff_points(TINY, store, 'nba', method, config, 'val-loss')
        assert point is not None and 0 <= point['acc'][0] <= 100
    path = tmp_path / 'tradeoff.png'
    plot_tradeoff(TINY, store, chosen, 'nba', str(path))
    assert path.stat().st_size > 10_000
    paired = tmp_path / 'paired.png'
    plot_paired(TINY, store, chosen, str(paired))
    assert paired.stat().st_size > 10_000
    alone = dataclasses.replace(TINY, methods=('MLP', 'GCN'))
    with pytest.raises(ValueError, match='no method to compare'):
        plot_paired(alone, store, chosen, str(paired))


def test_datasets_one_after_the_other_and_in_parallel(tmp_path):
    root = with_raw(str(tmp_path / 'data'), 'german')
    two = dataclasses.replace(
        TINY,
        name='two',
        datasets=('nba', 'german'),
        methods=('MLP', 'GCN'),
        seeds=(0, 1, 2),
        config=TINY.config.replace(lr=1e-2),
        grid={},
        grid_seeds=(),
        sweep={},
    )
    serial, order = RunStore(str(tmp_path / 'serial.jsonl')), []
    run_protocol(two, root, serial, on_run=order.append)
    names = [job[0] for job in order]
    assert names == sorted(names, key=two.datasets.index)  # nba first
    assert missing_runs(two, serial) == {'nba': 0, 'german': 0}
    parallel = RunStore(str(tmp_path / 'parallel.jsonl'))
    run_protocol(two, root, parallel, jobs=2)
    assert len(parallel) == len(serial)
    for run in serial:
        twin = parallel.get(run_key(run))
        assert twin is not None and twin['epochs'] == run['epochs']
        for a, b in zip(twin['curve']['loss'], run['curve']['loss']):
            assert a == pytest.approx(b, abs=1e-4)


def test_workers_find_their_datasets_processed(tmp_path, monkeypatch):
    # read once before the workers start, which would otherwise process a
    # fresh root all at once
    root = with_raw(str(tmp_path / 'data'), 'german')
    unscaled = TINY.config.replace(scale=False)
    todo = [('german', 'MLP', TINY.config, 0), ('german', 'GCN', unscaled, 0)]
    found = []

    class NoWorkers(Exception):
        pass

    def get_context(method):
        found.extend(os.listdir(osp.join(root, 'german', 'processed')))
        raise NoWorkers

    monkeypatch.setattr(execution.multiprocessing, 'get_context', get_context)
    with pytest.raises(NoWorkers):
        list(execution._execute(TINY, root, todo, jobs=2))
    assert set(found) == {
        f'format{PROCESSED_FORMAT}_random0_budgetall_sens0_norm1',
        f'format{PROCESSED_FORMAT}_random0_budgetall_sens0_norm0',
    }


def test_reference_protocol_on_nba(tmp_path):
    reference = PROTOCOLS['reference']
    assert reference.max_epochs == 400 and reference.patience >= 400
    assert reference.config.head and reference.config.dropout == 0
    tiny = dataclasses.replace(
        reference,
        name='reference-tiny',
        datasets=('nba',),
        seeds=(0, 1),
        max_epochs=3,
        patience=3,
    )
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    chosen = run_protocol(tiny, str(tmp_path), store)
    runs = list(store)
    assert len(runs) == 3 * 2 and all(r['epochs'] == 3 for r in runs)
    assert all('test-fair' in r['test'] for r in runs)
    report = protocol_report(tiny, store, chosen)
    assert 'Selected on the TEST split' in report
    assert "reference loaders' fixed split" in report
    assert 'BeMap(sym)-renumbered - GCN' in report
    assert 'lowest validation loss' not in report


def test_the_budgets_arm_trains_on_class_balanced_budgets(tmp_path):
    arm = PROTOCOLS['exploratory-budgets']
    assert arm.datasets == ('nba', 'recidivism', 'credit')
    first = prepared_graph(arm, str(tmp_path), 'nba', arm.config, 0)
    y, train = first.y, first.train_mask
    # NBA's budget of 100: 50 training nodes of each class
    assert int((train & (y == 0)).sum()) == int((train & (y == 1)).sum()) == 50
    assert not bool((train & first.val_mask).any())
    assert not bool((first.val_mask & first.test_mask).any())
    other = prepared_graph(arm, str(tmp_path), 'nba', arm.config, 1)
    assert not bool((other.train_mask == train).all())  # drawn per seed
    tiny = dataclasses.replace(
        arm, name='budgets-tiny', datasets=('nba',), seeds=(0,), max_epochs=2
    )
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    chosen = run_protocol(tiny, str(tmp_path), store)
    assert len(list(store)) == 2
    report = protocol_report(tiny, store, chosen)
    assert 'class-balanced label budget' in report
