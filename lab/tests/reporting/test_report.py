import pytest

from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.reporting.report import Report, text_file
from pyg_bemap_lab.running.protocols import PROTOCOLS


class Counting(Report):
    def files(self):
        return {
            'a.md': text_file(lambda: '# a\n'),
            'b.txt': lambda path: open(path, 'w').close(),
        }


def test_a_report_writes_its_files_into_the_folder(tmp_path):
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    report = Counting(PROTOCOLS['quick'], store, {})
    paths = report.write(str(tmp_path / 'out'))
    assert [p.rsplit('/', 1)[1] for p in paths] == ['a.md', 'b.txt']
    assert (tmp_path / 'out' / 'a.md').read_text() == (
        '# a\n\n## Code versions\n\nNo stored run is behind this page.\n'
    )
    assert str(report) == (
        f"protocol 'quick': runs of no dataset in {store.path}"
    )
    assert Report(PROTOCOLS['quick'], store, {}).write(str(tmp_path)) == []


def test_a_folder_that_cannot_be_written_is_refused(tmp_path):
    store = RunStore(str(tmp_path / 'runs.jsonl'))
    (tmp_path / 'file').write_text('')
    with pytest.raises(OSError):
        Counting(PROTOCOLS['quick'], store, {}).write(str(tmp_path / 'file'))
