import dataclasses

from pyg_bemap_lab.io.store import RunStore, run_key
from pyg_bemap_lab.running.planning import missing_jobs, needs_restart
from pyg_bemap_lab.running.protocols import PROTOCOLS, record_of
from pyg_bemap_lab.selection import STORED_RULES

QUICK = PROTOCOLS['quick']


def result(pos, restarts=0):
    curve = dict(loss=[0.7, 0.5], sp=[0.1, 0.1], eo=[0.1, 0.1], pos=[pos] * 2)
    test = dict.fromkeys(STORED_RULES)
    extra = {'restarts': restarts} if restarts else {}
    return {'curve': curve, 'test': test, **extra}


def test_a_degenerate_run_is_trained_again_when_restarts_allow(tmp_path):
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    jobs = [('nba', 'GCN', QUICK.config, seed) for seed in range(3)]
    for job, pos in zip(jobs, (0.4, 1.0, 0.0)):
        store.add(record_of(QUICK, job, result(pos)))
    assert missing_jobs(QUICK, store, jobs) == []  # no restarts asked for
    again = dataclasses.replace(QUICK, restarts=2)
    assert missing_jobs(again, store, jobs) == jobs[1:]
    store.add(record_of(QUICK, jobs[1], result(1.0, restarts=2)))
    restarted = store.get(run_key(record_of(QUICK, jobs[1])))
    assert not needs_restart(again, restarted)  # it used all it may
    assert missing_jobs(again, store, jobs) == [jobs[2]]


def test_a_run_without_a_stored_rule_is_trained_again_unless_tuning(
    tmp_path,
):
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    jobs = [('nba', 'GCN', QUICK.config, seed) for seed in range(2)]
    old = result(0.4)
    old['test'] = {'val-loss': None, 'val-fair': None}  # stored before
    store.add(record_of(QUICK, jobs[0], old))
    store.add(record_of(QUICK, jobs[1], result(0.4)))
    assert missing_jobs(QUICK, store, jobs) == jobs[:1]
    # tuning reads the validation curve only: the run serves it as it is
    assert missing_jobs(QUICK, store, jobs, picks=False) == []
