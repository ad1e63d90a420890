from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.reporting.code_versions import (
    UNRECORDED,
    code_version,
    code_versions_section,
)
from pyg_bemap_lab.reporting.report import Report, text_file
from pyg_bemap_lab.running.protocols import PROTOCOLS


def _made_by(library, lab=None, clean=True, exploratory=False):
    part = {'version': '0.1.0', 'commit': library, 'clean': clean}
    return {
        'provenance': {
            'library': part,
            'lab': {**part, 'commit': lab or library},
            'exploratory': exploratory,
        }
    }


def test_a_run_names_its_code():
    assert code_version(_made_by('a' * 40)) == 'a' * 10
    assert (
        code_version(_made_by('a' * 40, 'b' * 40))
        == 'aaaaaaaaaa, lab bbbbbbbbbb'
    )
    dirty = _made_by('a' * 40, clean=False, exploratory=True)
    assert (
        code_version(dirty)
        == 'aaaaaaaaaa with uncommitted changes, exploratory'
    )
    assert code_version({}) == UNRECORDED  # stored before provenance
    assert code_version(_made_by(None)) == UNRECORDED  # not a checkout


def test_a_page_says_when_its_tables_mix_versions():
    one = code_versions_section([_made_by('a' * 40)] * 3)
    assert '| aaaaaaaaaa | 3 |' in one and 'Mixed' not in one
    mixed = code_versions_section([_made_by('a' * 40), {}])
    assert f'| {UNRECORDED} | 1 |' in mixed
    assert '**Mixed: these tables mix runs of 2 code versions.**' in mixed
    assert 'No stored run' in code_versions_section([])
    unknown = code_versions_section([{}, {}])
    assert '**Unknown: these tables rest on runs that name no code' in unknown


def test_each_page_counts_the_runs_it_read(tmp_path):
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    config = {'lr': 0.01, 'hidden': 16, 'dropout': 0.5, 'input_dropout': 0.0}
    base = dict(protocol='quick', dataset='nba', method='GCN', config=config)
    results = dict(curve={'loss': [0.7]}, test={})
    keys = []
    for seed, made in enumerate([_made_by('a' * 40), {}, {}]):
        run = {**base, 'seed': seed, **results, **made}
        store.add(run)
        keys.append(
            next(k for k, r in store._runs.items() if r['seed'] == seed)
        )

    class TwoPages(Report):
        def files(self):
            return {
                'one.md': text_file(lambda: f'{store.get(keys[0])["seed"]}\n'),
                'both.md': text_file(
                    lambda: ''.join(
                        str(store.get(k)['seed']) for k in keys[:2]
                    )
                ),
                'none.txt': text_file(lambda: str(store.get(keys[2]))),
            }

    TwoPages(PROTOCOLS['quick'], store, {}).write(str(tmp_path / 'out'))
    one = (tmp_path / 'out' / 'one.md').read_text()
    assert one.startswith('0\n') and 'Mixed' not in one
    assert '| aaaaaaaaaa | 1 |' in one
    both = (tmp_path / 'out' / 'both.md').read_text()
    assert 'mix runs of 2 code versions' in both
    assert 'Code versions' not in (tmp_path / 'out' / 'none.txt').read_text()
