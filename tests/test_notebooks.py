import os

import pytest

nbformat = pytest.importorskip('nbformat')
nbclient = pytest.importorskip('nbclient')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, 'examples', 'notebooks')


def printed(book) -> str:
    # joined: how the kernel splits a cell's output into chunks varies
    return ''.join(
        output.text
        for cell in book.cells
        if cell.cell_type == 'code'
        for output in cell.outputs
        if output.output_type == 'stream'
    )


@pytest.mark.parametrize(
    'name', ['quickstart.ipynb', 'bias_amplification.ipynb']
)
def test_notebook_runs_and_prints_what_is_committed(
    name, tmp_path, monkeypatch
):
    monkeypatch.setenv('PYG_BEMAP_DATA', str(tmp_path))
    monkeypatch.setenv('MPLBACKEND', 'Agg')
    committed = nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)
    book = nbformat.from_dict(committed)
    nbclient.NotebookClient(
        book,
        timeout=600,
        kernel_name='python3',
        resources={'metadata': {'path': str(tmp_path)}},
    ).execute()
    outputs = [o for cell in book.cells for o in cell.get('outputs', [])]
    assert not [o for o in outputs if o.output_type == 'error']
    assert [o.text for o in outputs if o.get('name') == 'stderr'] == []
    # the prose quotes these numbers: after a change, rerun
    # scripts/execute_notebooks.py and check the text
    assert printed(book) == printed(committed)
    committed_outputs = [
        o for cell in committed.cells for o in cell.get('outputs', [])
    ]
    assert [o for o in committed_outputs if 'image/png' in o.get('data', {})]
