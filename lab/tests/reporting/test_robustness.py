import dataclasses
import statistics

import pyg_bemap_lab.reporting.robustness as robustness
from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.reporting.robustness import (
    CANDIDATE_RULES,
    HEADLINE,
    INPUT_DROPOUTS,
    arm,
    combinations,
    plot_robustness,
    robustness_protocol,
    robustness_report,
    rule_records,
    stored_seed_counts,
)
from pyg_bemap_lab.run_config import RunConfig
from pyg_bemap_lab.running.degenerate import degenerate
from pyg_bemap_lab.running.execution import run_protocol
from pyg_bemap_lab.running.planning import chosen_runs, missing_runs
from pyg_bemap_lab.running.protocols import PROTOCOLS, Protocol
from pyg_bemap_lab.selection import NEAR_CONSTANT, STORED_RULES

# NBA ships with the package: a tiny base protocol that still tunes
TINY = Protocol(
    name='tiny-robustness',
    description='for tests',
    datasets=('nba',),
    methods=('GCN',),
    seeds=(0,),
    max_epochs=3,
    patience=2,
    config=RunConfig(hidden=8, dropout=0.0),
    grid=dict(lr=(1e-2, 1e-3), input_dropout=INPUT_DROPOUTS),
    grid_seeds=(0, 1),
)


def test_the_study_is_the_default_protocols_headline_pair():
    study = robustness_protocol()
    default = PROTOCOLS['default']
    assert study.name == default.name  # the two share their runs
    assert study.grid == default.grid and 'input_dropout' in study.grid
    assert study.methods == HEADLINE == ('GCN', 'BeMap(sym)')
    assert study.seeds == tuple(range(30)) == study.sweep_seeds
    for method in HEADLINE:
        rates = [s['input_dropout'] for s in study.sweep[method]]
        assert rates == [0.0, 0.5]


def test_every_combination_from_one_set_of_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(robustness, 'FEWER_SEEDS', 2)
    study = robustness_protocol(3, base=TINY)
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    first = dataclasses.replace(study, seeds=(0, 1), sweep_seeds=(0, 1))
    chosen = run_protocol(first, str(tmp_path), store)
    # no row of all seeds while only the first ones are stored
    assert stored_seed_counts(study, store, chosen, 'nba') == (2,)
    chosen = run_protocol(study, str(tmp_path), store)
    assert stored_seed_counts(study, store, chosen, 'nba') == (2, 3)
    assert missing_runs(study, store) == {'nba': 0}
    # both rates, both models, three seeds, every stored rule's report
    for rate in INPUT_DROPOUTS:
        for method in HEADLINE:
            runs = chosen_runs(study, store, arm(chosen, rate), 'nba', method)
            assert [r['seed'] for r in runs] == [0, 1, 2]
            assert all(set(STORED_RULES) <= set(r['test']) for r in runs)
    found = combinations(study, store, chosen, 'nba')
    assert len(found) == len(INPUT_DROPOUTS) * len(CANDIDATE_RULES) * 2
    one = next(
        c
        for c in found
        if (c.input_dropout, c.rule, c.seeds) == (0.5, 'val-loss', 2)
    )
    a, b = (
        chosen_runs(
            dataclasses.replace(study, seeds=(0, 1)),
            store,
            arm(chosen, 0.5),
            'nba',
            m,
        )
        for m in HEADLINE
    )
    expected = statistics.mean(
        100 * (y['test']['val-loss']['sp'] - x['test']['val-loss']['sp'])
        for x, y in zip(a, b)
    )
    assert abs(one.diffs['sp'].mean - expected) < 1e-9
    assert one.degenerate == tuple(
        sum(bool(degenerate(r, 'val-loss')) for r in runs) for runs in (a, b)
    )
    records = rule_records(study, store, chosen, 'nba')
    assert [r.rule for r in records] == list(CANDIDATE_RULES)
    assert all(r.runs == 12 and 0 <= r.agreement <= 1 for r in records)
    learned = next(r for r in records if r.rule == 'val-loss-learned')
    assert learned.unpicked == sum(
        run['test']['val-loss-learned'] is None
        for rate in INPUT_DROPOUTS
        for m in HEADLINE
        for run in chosen_runs(study, store, arm(chosen, rate), 'nba', m)
    )
    # the validation split's diagnostics, from the picked epochs' curves
    every = [
        run
        for rate in INPUT_DROPOUTS
        for m in HEADLINE
        for run in chosen_runs(study, store, arm(chosen, rate), 'nba', m)
    ]
    for record in records:
        shares = [
            run['curve']['pos'][run['test'][record.rule]['epoch']]
            for run in every
            if run['test'][record.rule] is not None
        ]
        assert record.val_one_class == sum(
            min(share, 1 - share) < NEAR_CONSTANT for share in shares
        )
    assert learned.val_one_class == 0  # by its definition
    report = robustness_report(study, store, chosen)
    assert 'val. one-class' in report and 'test-split diagnostics' in report
    assert '### nba' in report and 'first 2 and all 3 paired' in report
    # the rule table, the default rule marked
    assert report.count('\n| val-loss-learned (default) | 12 |') == 1
    plot_robustness(study, store, chosen, str(tmp_path / 'r.png'))
    assert (tmp_path / 'r.png').stat().st_size > 0
