from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.running.planning import missing_jobs
from pyg_bemap_lab.running.protocols import PROTOCOLS, record_of
from pyg_bemap_lab.selection import STORED_RULES

QUICK = PROTOCOLS['quick']


def result(pos):
    curve = dict(loss=[0.7, 0.5], sp=[0.1, 0.1], eo=[0.1, 0.1], pos=[pos] * 2)
    return {'curve': curve, 'test': dict.fromkeys(STORED_RULES)}


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
