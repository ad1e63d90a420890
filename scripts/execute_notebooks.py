"""Runs the example notebooks and saves them with their outputs, which the
documentation shows (it does not execute them): run this after changing a
notebook or what it prints, then commit the notebooks."""

import glob
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
    for cell in book.cells:
        cell.metadata.pop('execution', None)  # timings: noise in diffs
    nbformat.write(book, path)
    print(f'executed {osp.relpath(path, ROOT)}')


if __name__ == '__main__':
    paths = sys.argv[1:] or sorted(
        glob.glob(osp.join(ROOT, 'examples', 'notebooks', '*.ipynb'))
    )
    for path in paths:
        execute(path)
