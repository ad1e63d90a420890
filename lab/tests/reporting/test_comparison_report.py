from pyg_bemap_lab.comparison import comparison_protocol
from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.reporting.comparison_report import (
    comparison_runs,
    comparison_summary,
    comparison_verdict,
)
from pyg_bemap_lab.running.protocols import record_of
from pyg_bemap_lab.selection import DEFAULT_RULE


def run_result(picked, loss=(0.7, 0.6, 0.5)):
    curve = dict(loss=list(loss), acc=[0.6] * 3, auc=[0.7] * 3)
    curve.update(sp=[0.1] * 3, eo=[0.2] * 3)
    return {'curve': curve, 'test': {DEFAULT_RULE: dict(epoch=2, **picked)}}


def test_summary_fits_80_columns_and_gives_the_verdict(tmp_path):
    protocol = comparison_protocol('nba', 'BeMap(sym)', 6)
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    for seed in protocol.seeds:
        for method, sp in (('GCN', 0.10), ('BeMap(sym)', 0.07)):
            picked = dict(acc=0.7, auc=0.8, sp=sp + seed / 100, eo=0.05)
            result = run_result(picked)
            job = ('nba', method, protocol.config, seed)
            store.add(record_of(protocol, job, result))
    chosen = {('nba', m): protocol.config for m in protocol.methods}
    summary = comparison_summary(protocol, store, chosen)
    assert max(len(line) for line in summary.splitlines()) <= 80
    assert 'BeMap(sym) against GCN on nba: 6 paired seeds' in summary
    assert '  delta_sp   -3.00 [-3.00, -3.00]*' in summary
    text = ' '.join(summary.split())  # says what its intervals cover
    assert 'intervals over the paired seeds, which cover less than 95 %' in (
        text
    )
    verdict = ' '.join(summary.split('\n\n')[-1].split())
    assert verdict == (
        'Verdict: fairer: delta_sp -3.0 [-3.0, -3.0]; no significant '
        'change in accuracy or AUC.'
    )


def test_degenerate_runs_are_marked_and_left_out_once(tmp_path):
    protocol = comparison_protocol('german', 'BeMap(sym)', 8)
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    for seed in protocol.seeds:
        for method, sp in (('GCN', 0.10), ('BeMap(sym)', 0.15)):
            picked = dict(acc=0.7, auc=0.7, sp=sp + seed / 100, eo=0.1)
            picked['pos'] = 0.4
            loss = (0.7, 0.6, 0.5)
            if (method, seed) == ('GCN', 7):
                picked.update(sp=0.0, eo=0.0, pos=1.0)  # one class only
            if (method, seed) == ('BeMap(sym)', 6):
                loss = (0.7, 0.695, 0.699)  # never left the plateau
            job = ('german', method, protocol.config, seed)
            store.add(record_of(protocol, job, run_result(picked, loss)))
    chosen = {('german', m): protocol.config for m in protocol.methods}
    runs = comparison_runs(protocol, store, chosen, DEFAULT_RULE)
    marked = {(r['model'], r['seed']): r['degenerate'] for r in runs}
    assert marked.pop(('GCN', 7)) == 'constant'
    assert marked.pop(('BeMap(sym)', 6)) == 'plateau'
    assert set(marked.values()) == {None}
    assert runs[0]['val_delta_eo'] == 0.2  # the validation curve's epoch
    summary = comparison_summary(protocol, store, chosen)
    text = ' '.join(summary.split())
    assert 'Degenerate runs (' in text
    assert ': GCN seed 7; BeMap(sym) seed 6.' in text
    assert 'Without them (6 paired seeds):' in summary
    assert max(len(line) for line in summary.splitlines()) <= 80
    verdict = comparison_verdict(protocol, store, chosen, DEFAULT_RULE)
    assert '2 of 8 paired seeds hold a degenerate run; without them: ' in (
        verdict
    )


def test_runs_without_an_epoch_to_report_are_named_and_left_out(tmp_path):
    protocol = comparison_protocol('nba', 'BeMap(sym)', 6)
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    for seed in protocol.seeds:
        for method in protocol.methods:
            acc = 0.7 + seed / 100
            picked = dict(acc=acc, auc=0.8, sp=0.1, eo=0.05, pos=0.4)
            result = run_result(picked)
            if (method, seed) in (('GCN', 2), ('BeMap(sym)', 4)):
                result['test'][DEFAULT_RULE] = None  # no epoch learned
            job = ('nba', method, protocol.config, seed)
            store.add(record_of(protocol, job, result))
    chosen = {('nba', m): protocol.config for m in protocol.methods}
    summary = comparison_summary(protocol, store, chosen)
    assert summary.startswith('BeMap(sym) against GCN on nba: 4 paired seeds')
    text = ' '.join(summary.split())
    assert 'No epoch to report, left out: GCN seed 2; BeMap(sym) seed 4.' in (
        text
    )
    assert text.endswith('2 runs left out, where the rule picked no epoch.')
    assert max(len(line) for line in summary.splitlines()) <= 80
    # each model's row is over the paired seeds 0, 1, 3 and 5 alone
    rows = [line for line in summary.splitlines() if '72.25 ±' in line]
    assert [row.split()[0] for row in rows] == ['GCN', 'BeMap(sym)']
