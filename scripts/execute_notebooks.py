"""Runs the example notebooks and saves them with their outputs, which the
documentation shows (it does not execute them): run this after changing a
notebook or what it prints, with the README's default torch (the test
compares the outputs closely on the torch release recorded in the
notebook), then commit the notebooks."""

import glob
import importlib.metadata
import os
import os.path as osp
import sys
import tempfile

import nbclient
import nbformat

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))


def execute(path: str) -> None:
    book = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as folder:
        os.environ.setdefault('PYG_BEMAP_DATA', folder)
        nbclient.NotebookClient(
            book,
            timeout=600,
            kernel_name='python3',
            resources={'metadata': {'path': folder}},
        ).execute()
    # what printed the outputs: other torch releases train otherwise
    book.metadata['pyg_bemap'] = {'torch': importlib.metadata.version('torch')}
    for cell in book.cells:
        cell.metadata.pop('execution', None)  # timings: noise in diffs
        if cell.cell_type == 'code':
            cell.outputs = _joined_streams(cell.outputs)
    nbformat.write(book, path)
    print(f'executed {osp.relpath(path, ROOT)}')


def _joined_streams(outputs: list) -> list:
    r"""One output per run of printed text: how the kernel splits it into
    chunks varies from run to run, which is noise in diffs."""
    joined: list = []
    for output in outputs:
        previous = joined[-1] if joined else None
        if (
            output.output_type == 'stream'
            and previous is not None
            and previous.output_type == 'stream'
            and previous.name == output.name
        ):
            previous.text += output.text
        else:
            joined.append(output)
    return joined


if __name__ == '__main__':
    paths = sys.argv[1:] or sorted(
        glob.glob(osp.join(ROOT, 'examples', 'notebooks', '*.ipynb'))
    )
    for path in paths:
        execute(path)
