r"""Finished training runs on disk, one JSON line each, so that an
interrupted experiment resumes where it stopped and every table and plot
is rebuilt from the stored runs alone."""

import contextlib
import json
import os
import os.path as osp
from collections.abc import Iterator
from typing import Any

import filelock

from pyg_bemap_lab.run_config import RunConfig

#: What identifies a run.
KEY_FIELDS = ('protocol', 'dataset', 'method', 'config', 'seed')


def run_key(run: dict[str, Any]) -> str:
    r"""The identity of a run: its protocol, dataset, method,
    configuration (a :class:`~pyg_bemap_lab.run_config.RunConfig`, however
    its flat dictionary is spelled) and seed, as one canonical string."""
    _check_fields(run)
    config = RunConfig.from_dict(run['config']).as_dict()
    return _canonical_key({**run, 'config': config})


def _canonical_key(run: dict[str, Any]) -> str:
    # the key of a run whose configuration is canonical already
    _check_fields(run)
    return json.dumps([run[f] for f in KEY_FIELDS], sort_keys=True)


def _check_fields(run: dict[str, Any]) -> None:
    missing = [field for field in KEY_FIELDS if field not in run]
    if missing:
        raise ValueError(f'A run record needs the fields {missing}')


def migrated(run: dict[str, Any]) -> dict[str, Any]:
    r"""A stored run in today's format.

    * Runs stored before the input features' dropout rate was a
      hyper-parameter of its own dropped the input features at the hidden
      layer's rate: their configuration gains :obj:`input_dropout` equal to
      :obj:`dropout`, which is what they trained with.
    * FairDrop's drop rate, once :obj:`delta`, is :obj:`fairdrop_delta`
      (BeMap's balance offset is :obj:`balance_delta`).
    * Every configuration names every setting of
      :class:`~pyg_bemap_lab.run_config.RunConfig`: a setting it leaves out
      had its default (the run trained with it).
    """
    config = run.get('config') if isinstance(run, dict) else None
    if not isinstance(config, dict):
        return run
    config = dict(config)
    if 'dropout' in config and 'input_dropout' not in config:
        config['input_dropout'] = config['dropout']
    if 'delta' in config:
        config['fairdrop_delta'] = config.pop('delta')
    return {**run, 'config': RunConfig.from_dict(config).as_dict()}


class RunStore:
    r"""A file of finished runs, one JSON object per line.

    Lines are appended and flushed to disk one run at a time; a line cut
    off by an interruption (the last one) is ignored when the file is read
    again and dropped before the next run is added, and that run is done
    again. Any other line that is not a run record is an error that names
    the file and the line.

    A later line with the same identity (:func:`run_key`) replaces an
    earlier one: a run trained again (e.g. to record a rule added since).
    Runs stored in an earlier format are read as
    :func:`~pyg_bemap_lab.io.store.migrated` says.

    Args:
        path (str): The file (created with its folder when missing).
        base (str, optional): A file of runs read first and never written:
            :obj:`path` then holds only what was added on top of it.
            (default: :obj:`None`)
    """

    def __init__(self, path: str, base: str | None = None) -> None:
        self.path = path
        self._runs: dict[str, dict[str, Any]] = {}
        if base is not None and not osp.exists(base):
            raise FileNotFoundError(f'{base}: no such file of runs')
        for file in (base, path):
            if file is not None and osp.exists(file):
                self._read(file)

    def _read(self, path: str) -> None:
        with open(path) as handle:
            lines = handle.read().split('\n')
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                run = migrated(json.loads(line))  # canonical configuration
                key = _canonical_key(run)
                _check_results(run)
            except (json.JSONDecodeError, ValueError, TypeError) as error:
                if number == len(lines) and isinstance(
                    error, json.JSONDecodeError
                ):
                    continue  # the last line, cut off by an interruption
                raise ValueError(
                    f'{path}: line {number}: not a run record ({error}); '
                    'remove the line (the run is done again) or restore '
                    'the file'
                ) from None
            self._runs[key] = run

    def __contains__(self, key: str) -> bool:
        return key in self._runs

    def __len__(self) -> int:
        return len(self._runs)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._runs.values())

    def get(self, key: str) -> dict[str, Any] | None:
        return self._runs.get(key)

    def add(self, run: dict[str, Any]) -> None:
        r"""Stores a finished run (on disk before it returns)."""
        key = run_key(run)
        line = json.dumps(run, sort_keys=True, separators=(',', ':'))
        os.makedirs(osp.dirname(self.path) or '.', exist_ok=True)
        self._drop_a_cut_off_line()
        with open(self.path, 'a') as handle:
            handle.write(line + '\n')
            handle.flush()
            os.fsync(handle.fileno())
        self._runs[key] = run

    @contextlib.contextmanager
    def lock(self) -> Iterator['RunStore']:
        r"""Holds the store for one process: a second process that asks for
        it is refused at once, and a folder that cannot be written is found
        before any run is trained. The lock is released when the process
        ends, however it ends.

        Raises:
            ValueError: If another process holds the store.
            OSError: If the store's folder cannot be written.
        """
        writable_folder(osp.dirname(self.path) or '.')
        lock = filelock.FileLock(self.path + '.lock', timeout=0)
        try:
            lock.acquire()
        except filelock.Timeout:
            raise ValueError(
                f'{self.path} is in use by another pyg-bemap process; wait '
                'for it to finish or give another output folder'
            ) from None
        try:
            yield self
        finally:
            lock.release()

    def _drop_a_cut_off_line(self) -> None:
        r"""Removes a last line cut off by an interruption (the file then
        ends with a whole record), so that no broken line is ever followed
        by another."""
        if not osp.exists(self.path) or osp.getsize(self.path) == 0:
            return
        with open(self.path, 'rb+') as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) == b'\n':
                return
            handle.seek(0)
            whole = handle.read().rfind(b'\n') + 1
            handle.truncate(whole)


def _check_results(run: dict[str, Any]) -> None:
    r"""Raises a :class:`ValueError` unless :obj:`run` holds what reports
    read: a validation curve of lists and a table of test reports."""
    curve, test = run.get('curve'), run.get('test')
    if not isinstance(curve, dict) or not all(
        isinstance(values, list) for values in curve.values()
    ):
        raise ValueError("its 'curve' is not a table of lists")
    if not isinstance(test, dict):
        raise ValueError("its 'test' is not a table")


def writable_folder(folder: str) -> str:
    r"""Makes :obj:`folder` if needed and checks that files can be written
    in it, before anything is trained that would be written there.

    Raises:
        OSError: If it cannot be made or written.
    """
    os.makedirs(folder, exist_ok=True)
    if not os.access(folder, os.W_OK):
        raise PermissionError(
            f'{folder}: cannot write here; give a folder you can write'
        )
    return folder
