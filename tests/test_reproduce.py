import math

from pyg_bemap.experiments import SELECTIONS, Hyper
from pyg_bemap.reproduce import run_table


def test_worker_processes_give_the_same_table(tmp_path):
    args = (
        str(tmp_path),
        ['nba'],
        ['GCN', 'BeMap(sym)'],
        [0, 1],
        Hyper(epochs=3),
    )
    serial = run_table(*args, progress=False, jobs=1)
    parallel = run_table(*args, progress=False, jobs=2)
    assert len(serial) == 2 * len(SELECTIONS)
    assert [(r['method'], r['selection']) for r in serial] == [
        (m, s) for m in ('GCN', 'BeMap(sym)') for s in SELECTIONS
    ]
    for a, b in zip(serial, parallel):
        assert a.keys() == b.keys()
        for key in a:
            same_nan = (
                isinstance(a[key], float)
                and math.isnan(a[key])
                and math.isnan(b[key])
            )
            assert same_nan or a[key] == b[key], key
