import os

import pytest

nbformat = pytest.importorskip('nbformat')
nbclient = pytest.importorskip('nbclient')

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = os.path.join(ROOT, 'examples', 'notebooks')


@pytest.mark.parametrize(
    'name', ['quickstart.ipynb', 'bias_amplification.ipynb']
)
def test_notebook_runs(name, tmp_path, monkeypatch):
    monkeypatch.setenv('PYG_BEMAP_DATA', str(tmp_path))
    monkeypatch.setenv('MPLBACKEND', 'Agg')
    book = nbformat.read(os.path.join(NOTEBOOKS, name), as_version=4)
    nbclient.NotebookClient(
        book,
        timeout=600,
        kernel_name='python3',
        resources={'metadata': {'path': str(tmp_path)}},
    ).execute()
    outputs = [
        o
        for cell in book.cells
        if cell.cell_type == 'code'
        for o in cell.outputs
    ]
    assert not [o for o in outputs if o.output_type == 'error']
    text = ''.join(o.get('text', '') for o in outputs)
    assert 'delta_sp' in text or 'probe accuracy' in text
