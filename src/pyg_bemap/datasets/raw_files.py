r"""Raw files of the fairness graphs: verified against their published
Git blob ids, read as tables, and the one-line reason of a failed
download."""

import csv
import hashlib
import io
import lzma
import os

import numpy as np

from pyg_bemap.datasets.specs import RawFile


class DownloadError(OSError):
    r"""A dataset file could not be downloaded; the message says where to
    put it by hand."""


def download_reason(error: BaseException) -> str:
    r"""The innermost cause of a chain of exceptions, in one line."""
    while error.__cause__ is not None or error.__context__ is not None:
        error = error.__cause__ or error.__context__  # type: ignore[assignment]
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def git_blob_id(content: bytes) -> str:
    r"""The Git object id of a file's content."""
    header = f'blob {len(content)}\0'.encode()
    return hashlib.sha1(header + content).hexdigest()


def read_verified(path: str, file: RawFile) -> str:
    opener = lzma.open if path.endswith('.xz') else open
    try:
        with opener(path, 'rb') as handle:
            content = handle.read()
    except (lzma.LZMAError, EOFError) as error:
        raise ValueError(
            f"'{path}' is damaged ({error}): delete it, and the published "
            f"'{file.name}' is downloaded again, or put it there from "
            f'{file.url}'
        ) from None
    blob = git_blob_id(content)
    if blob != file.git_blob:
        raise ValueError(
            f"'{path}' is not the published '{file.name}': its Git blob id is "
            f'{blob}, expected {file.git_blob}. Replace it with the file from '
            f'{file.url}'
        )
    return content.decode('utf-8')


def read_table(text: str) -> tuple[list[str], np.ndarray]:
    header = next(csv.reader([text.split('\n', 1)[0]]))
    table = np.loadtxt(
        io.StringIO(text),
        delimiter=',',
        dtype=str,
        skiprows=1,
        ndmin=2,
        comments=None,
    )
    return header, table


def misplaced_raw_files(
    files: tuple[RawFile, ...], folders: tuple[str, ...], raw_dir: str
) -> list[str]:
    r"""The raw :obj:`files` (plain or xz) found in :obj:`folders` instead
    of :obj:`raw_dir`."""
    found = []
    for file in files:
        for folder in folders:
            for name in (file.name, f'{file.name}.xz'):
                path = os.path.join(folder, name)
                if os.path.isfile(path) and not os.path.exists(
                    os.path.join(raw_dir, name)
                ):
                    found.append(path)
    return found


def drop_if_empty(folder: str) -> None:
    r"""Removes :obj:`folder` if it exists and is empty (PyG makes the raw
    folder before a download; when nothing could be put there, no empty
    folder is left behind)."""
    if os.path.isdir(folder) and not os.listdir(folder):
        os.rmdir(folder)
