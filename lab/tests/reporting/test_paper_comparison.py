import pytest

from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.reporting.paper_comparison import (
    PAPER_TABLE,
    SETTINGS,
    paper_comparison,
    setting_summary,
)
from pyg_bemap_lab.running.protocols import PROTOCOLS, record_of
from pyg_bemap_lab.selection import DEFAULT_RULE

REFERENCE = PROTOCOLS['reference']
CURVE = {'loss': [0.7, 0.5]}  # the validation loss left its plateau


def picked(acc, sp):
    return {'test-fair': dict(epoch=9, acc=acc, auc=0.8, sp=sp, eo=0.02)}


@pytest.fixture
def store(tmp_path):
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    results = {
        'GCN': [(0.70, 0.05), (0.72, 0.03)],
        'BeMap(sym)': [(0.66, 0.02), (0.68, 0.04)],
        'BeMap(sym)-renumbered': [(0.60, 0.01), (0.62, 0.01)],
    }
    for method, values in results.items():
        for seed, (acc, sp) in enumerate(values):
            job = ('nba', method, REFERENCE.config, seed)
            store.add(
                record_of(
                    REFERENCE, job, {'curve': CURVE, 'test': picked(acc, sp)}
                )
            )
    return store


def test_rows_come_from_the_paper_and_the_stored_runs(store):
    paper, renumbered, reference, default_test, default_val = SETTINGS
    assert (
        setting_summary(store, paper, 'nba', 'GCN')['acc'][:2]
        == (PAPER_TABLE['nba', 'GCN']['acc'])
    )
    bemap = setting_summary(store, reference, 'nba', 'BeMap(sym)')
    assert bemap['acc'][0] == pytest.approx(67.0)
    assert bemap['sp'][0] == pytest.approx(3.0) and bemap['acc'][2] == 2
    again = setting_summary(store, renumbered, 'nba', 'BeMap(sym)')
    assert again['acc'][0] == pytest.approx(61.0)
    # the vanilla model has no renumbered variant: the same runs
    assert setting_summary(store, renumbered, 'nba', 'GCN') == (
        setting_summary(store, reference, 'nba', 'GCN')
    )
    assert setting_summary(store, default_val, 'nba', 'GCN') is None
    # the default protocol's row reads the epoch the tables report
    assert default_val.rule == DEFAULT_RULE
    assert setting_summary(store, reference, 'german', 'GCN') is None


def test_report_labels_test_selection_and_shows_the_steps(store):
    report = paper_comparison(store, ('nba',))
    assert 'Why our numbers differ from the paper' in report
    assert '| reference protocol | TEST | BeMap(sym) | 2 | 67.00 ± 1.41' in (
        report
    )
    # paper 65.37 -> renumbered 61.00 -> reference 67.00
    assert '| nba | BeMap(sym) | the code:' in report
    assert '| -4.37 |' in report.split('the code:')[2].split('\n')[0]
    renumbering = report.split('renumbering removed |')[2].split('\n')[0]
    assert renumbering.startswith(' +6.00 |')
    assert '| default protocol | validation | GCN | 0 | n/a' in report


def test_reproduce_writes_the_comparison_beside_the_report(store, tmp_path):
    from pyg_bemap_lab.cli import main

    argv = ['reproduce', '--protocol', 'reference', '--report-only']
    assert main(argv + ['--out', str(tmp_path), '--root', '/nowhere']) == 0
    comparison = (tmp_path / 'paper_comparison.md').read_text()
    table = paper_comparison(store, REFERENCE.datasets)
    assert comparison.startswith(table)  # then the runs' code versions
    assert comparison[len(table) :].startswith('\n## Code versions\n')
    report = (tmp_path / 'reference.md').read_text()
    assert 'Selected on the TEST split' in report and 'Incomplete' in report
