import torch

from pyg_bemap.datasets import biased_sbm
from pyg_bemap_lab.comparison import compare
from pyg_bemap_lab.running import execution
from pyg_bemap_lab.running.threads import RUN_THREADS, run_threads


def test_runs_in_this_process_use_one_thread_and_give_the_number_back(
    monkeypatch,
):
    seen = []

    def job(protocol, root, job):
        seen.append(torch.get_num_threads())
        return {}

    monkeypatch.setattr(execution, '_run_job', job)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert len(list(execution._execute(None, '', ['a', 'b'], 1))) == 2
        assert seen == [RUN_THREADS, RUN_THREADS] == [1, 1]
        assert torch.get_num_threads() == 2
        with run_threads():
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_no_more_workers_than_runs(monkeypatch):
    def no_pool(method):
        raise AssertionError('a pool of workers for one run or none')

    monkeypatch.setattr(execution, '_run_job', lambda *args: {})
    monkeypatch.setattr(execution.multiprocessing, 'get_context', no_pool)
    assert list(execution._execute(None, '', [], 8)) == []
    assert len(list(execution._execute(None, '', ['a'], 8))) == 1


def test_the_same_runs_whatever_the_number_of_jobs(tmp_path):
    data = biased_sbm(150, seed=3)
    del data.train_mask, data.val_mask, data.test_mask
    options = dict(method='sym', seeds=2, epochs=4, patience=4)
    alone = compare(data, jobs=1, out=str(tmp_path / 'one'), **options)
    shared = compare(data, jobs=2, out=str(tmp_path / 'two'), **options)
    assert alone.runs == shared.runs  # the same records whatever --jobs
