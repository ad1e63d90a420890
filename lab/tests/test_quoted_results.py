"""The paired differences quoted in the README and on the results page are
those of the stored report (lab/results/evaluation/default.md)."""

import os.path as osp
import re

LAB = osp.dirname(osp.dirname(osp.abspath(__file__)))
ROOT = osp.dirname(LAB)
REPORT = osp.join(LAB, 'results', 'evaluation', 'default.md')
NAMES = {
    'nba': 'NBA',
    'german': 'German',
    'recidivism': 'Recidivism',
    'credit': 'Credit',
}


def read(*path: str) -> str:
    with open(osp.join(ROOT, *path), encoding='utf-8') as handle:
        return handle.read()


def tables(text: str) -> list[list[list[str]]]:
    r"""Every Markdown table of :obj:`text`: its rows, header first."""
    found = re.findall(r'((?:^\|.*\|\n)+)', text, re.M)
    return [
        [
            [c.strip() for c in row.strip('|').split('|')]
            for row in t.splitlines()
            if not set(row) <= set('|-')
        ]
        for t in found
    ]


def default_rule_table(*path: str) -> list[list[str]]:
    r"""A report's first table of paired differences at the default rule
    (the lowest validation loss among epochs that learned)."""
    section = read(*path).split(
        '### Paired differences (points), epoch by lowest validation loss'
    )[1]
    return tables(section)[0]


def stored() -> dict[tuple[str, str], dict[str, str]]:
    r"""The report's paired differences at the lowest validation loss."""
    header, *rows = default_rule_table(REPORT)
    return {
        (NAMES[row[0]], row[1]): dict(zip(header[3:], row[3:])) for row in rows
    }


def test_the_results_page_quotes_the_stored_report():
    report = stored()
    quoted = [
        t
        for t in tables(read('docs', 'results.md'))
        if t[0][:2] == ['dataset', 'compared - reference']
    ]
    assert [t[0][2:] for t in quoted] == [
        ['delta_sp', 'delta_eo'],
        ['acc', 'AUC'],
    ]
    for header, *rows in quoted:
        assert len(rows) == 24
        for dataset, pair, *values in rows:
            assert values == [report[dataset, pair][h] for h in header[2:]]


ROBUSTNESS = osp.join(LAB, 'results', 'evaluation', 'robustness.md')


def headline() -> dict[str, dict[str, str]]:
    r"""Per dataset, the robustness report's BeMap(sym) - GCN at the input
    dropout chosen on validation (marked *), under the default rule, on
    the most paired seeds stored."""
    from pyg_bemap_lab.selection import DEFAULT_RULE

    found = {}
    for section in read(ROBUSTNESS).split('\n### ')[1:]:
        dataset = NAMES[section.split('\n', 1)[0].strip()]
        header, *rows = tables(section)[0]
        default = [
            dict(zip(header, row))
            for row in rows
            if row[0].endswith('*') and row[1] == f'{DEFAULT_RULE} (default)'
        ]
        found[dataset] = default[-1]  # the most seeds come last
    return found


def test_the_readme_quotes_the_robustness_report():
    report = headline()
    header, *rows = next(
        t for t in tables(read('README.md')) if t[0][0] == 'dataset'
    )
    names = ['dataset', 'paired seeds', 'delta_sp', 'delta_eo', 'AUC']
    assert header[:5] == names
    assert [row[0] for row in rows] == list(NAMES.values())
    for dataset, seeds, *values in rows:
        stored = report[dataset]
        assert seeds == stored['seeds'].split(' of ')[0]
        assert values[:3] == [stored[h] for h in header[2:5]]
    # the last column, the gap arm's: test_the_pages_quote_the_arms_reports


def _difference(row: dict[str, str], metric: str) -> str:
    mean, low, high = (
        float(row[f'{metric}_vs_backbone{end}'])
        for end in ('', '_low', '_high')
    )
    marked = row.get(f'{metric}_marked') == 'True'
    return f'{mean:+.2f} [{low:+.2f}, {high:+.2f}]' + ('*' if marked else '')


def _setting(label: str, settings: dict) -> str:
    # the page writes BeMap(sym)'s knobs without their 'sym ' prefix
    return label if label in settings else f'sym {label}'


def _sweep_folder(key: str) -> str:
    return osp.join(LAB, 'results', 'sweep', key)


def _stored_runs(folder: str) -> int:
    runs = osp.join(folder, 'runs.jsonl')
    if not osp.exists(runs):
        return 0
    with open(runs, encoding='utf-8') as handle:
        return sum(1 for _ in handle)


def test_the_pages_count_the_runs_of_the_incomplete_sweeps():
    # the prose of the results page and of lab/results/README.md says how
    # far the incomplete sweeps are: "N of 220" must be a store's count
    folders = [_sweep_folder(key) for key in NAMES]
    counts = {
        _stored_runs(folder)
        for folder in folders
        if not osp.exists(osp.join(folder, 'sweep.csv'))
    }
    for page in (('docs', 'results.md'), ('lab', 'results', 'README.md')):
        quoted = {int(n) for n in re.findall(r'\b(\d+) of 220\b', read(*page))}
        assert quoted == counts - {0}, page


def test_the_results_page_quotes_the_stored_sweeps():
    import csv

    header, *rows = next(
        t
        for t in tables(read('docs', 'results.md'))
        if t[0][:3]
        == ['dataset', 'on the validation frontier (BeMap)', 'chosen']
    )
    swept = {name: key for key, name in NAMES.items()}
    for dataset, frontier, chosen, acc, delta_sp, delta_eo in rows:
        folder = _sweep_folder(swept[dataset])
        path = osp.join(folder, 'sweep.csv')
        if not chosen:  # not complete: the row counts the runs stored
            assert not osp.exists(path)
            runs = _stored_runs(folder)
            assert frontier == (
                f'not complete ({runs} of 220 runs)' if runs else 'not started'
            )
            continue
        with open(path) as handle:
            settings = {r['setting']: r for r in csv.DictReader(handle)}
        row = settings[_setting(chosen, settings)]
        assert acc.rstrip('*') == _difference(row, 'acc')
        assert [delta_sp, delta_eo] == [
            _difference(row, 'delta_sp'),
            _difference(row, 'delta_eo'),
        ]
        on_frontier = {
            s for s, r in settings.items()
            if r['on_frontier'] == 'True' and r['method'].startswith('BeMap')
        }  # fmt: skip
        quoted = set()
        if frontier != 'none':
            quoted = {_setting(s, settings) for s in frontier.split(', ')}
        assert quoted == on_frontier


CONFIRMATORY = osp.join(LAB, 'results', 'confirmatory')


def paired_differences(*path: str) -> dict[str, dict[str, str]]:
    r"""A report's paired differences at the default rule, by graph."""
    header, *rows = default_rule_table(*path)
    return {NAMES[row[0]]: dict(zip(header, row)) for row in rows}


def test_the_pages_quote_the_confirmatory_report():
    report = paired_differences(CONFIRMATORY, 'confirmatory.md')
    page = next(
        t for t in tables(read('docs', 'results.md')) if t[0][0] == 'graph'
    )
    side_by_side = next(
        t
        for t in tables(read(CONFIRMATORY, 'README.md'))
        if t[0][:2] == ['graph', 'run']
    )
    confirmatory = [row[:1] + row[2:] for row in side_by_side[1:]]
    quoted = page[1:] + [
        r
        for r, full in zip(confirmatory, side_by_side[1:])
        if full[1] == 'confirmatory'
    ]
    assert len(quoted) == 8
    for graph, seeds, *values in quoted:
        stored = report[graph]
        assert seeds == stored['seeds']
        assert values == [stored[h] for h in page[0][2:]]


ARMS = {'budgets': 'exploratory-budgets', 'gap': 'exploratory-gap'}


def test_the_pages_quote_the_arms_reports():
    reports = {
        arm: paired_differences('lab', 'results', folder, f'{arm}.md')
        for folder, arm in ARMS.items()
    }
    quoted = []  # (arm, graph, column names, values)
    for folder in ARMS:
        header, *rows = tables(read('lab', 'results', folder, 'README.md'))[0]
        quoted += [(ARMS[folder], r[0], header[1:], r[1:]) for r in rows]
    header, *rows = next(
        t
        for t in tables(read('docs', 'results.md'))
        if t[0][:2] == ['graph', 'arm']
    )
    quoted += [(r[1], r[0], header[2:], r[2:]) for r in rows]
    header, *rows = next(
        t for t in tables(read('README.md')) if t[0][0] == 'dataset'
    )
    assert header[-1] == 'delta_prob, seeds 0-9'  # the headline's
    quoted += [('exploratory-gap', r[0], ['delta_prob'], r[-1:]) for r in rows]
    assert len(quoted) == 2 * 3 + 3 * 4  # budgets: 3 graphs, gap: 4
    for arm, graph, names, values in quoted:
        stored = reports[arm][graph]
        assert values == [
            stored['seeds' if n == 'pairs' else n] for n in names
        ]
