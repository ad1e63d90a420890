r"""Finished training runs on disk, so that an interrupted experiment
resumes where it stopped and every table and plot is rebuilt from the
stored runs alone.

A store kept at :obj:`OUT/runs.jsonl` is

* :obj:`OUT/runs/summaries.jsonl.xz`: one JSON line per run, its identity,
  the test and validation metrics at each rule's epoch, its times and
  provenance, without its curves;
* :obj:`OUT/runs/curves-DATASET.xz`: the runs' per-epoch validation
  curves, exactly (:mod:`~pyg_bemap_lab.io.curves`);
* :obj:`OUT/runs.jsonl`, while a command trains: the runs finished since
  the store was last sealed, whole, one JSON line each, written as each
  run ends; a command seals them into the two above when it stops.
"""

import contextlib
import json
import lzma
import os
import os.path as osp
import urllib.parse
from collections.abc import Iterator
from typing import Any

import filelock

from pyg_bemap_lab.io.curves import read_curves, replace_file, write_curves
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
    * :obj:`software` (the versions and commits that runs stored before
      :obj:`provenance` recorded) becomes :obj:`provenance`, with what it
      knew.
    * :obj:`val`, the validation metrics at each rule's epoch, is read off
      the curves where a run lacks it.
    """
    config = run.get('config') if isinstance(run, dict) else None
    if not isinstance(config, dict):
        return run
    config = dict(config)
    if 'dropout' in config and 'input_dropout' not in config:
        config['input_dropout'] = config['dropout']
    if 'delta' in config:
        config['fairdrop_delta'] = config.pop('delta')
    run = {**run, 'config': RunConfig.from_dict(config).as_dict()}
    if 'software' in run:
        run['provenance'] = _provenance_of(run.pop('software'))
    if 'val' not in run and _has_results(run):
        run['val'] = picked_validation(run['curve'], run['test'])
    return run


def picked_validation(
    curve: dict[str, list[float]], test: dict[str, Any]
) -> dict[str, dict[str, float] | None]:
    r"""Per rule of :obj:`test`, the validation metrics of :obj:`curve` at
    the epoch it picked (:obj:`None` where it picked none)."""
    return {
        rule: None
        if picked is None
        else {
            m: values[picked['epoch']]
            for m, values in curve.items()
            if picked['epoch'] < len(values)
        }
        for rule, picked in test.items()
    }


def _provenance_of(software: dict[str, str]) -> dict[str, Any]:
    # 'pyg_bemap commit': 'SHA' or 'SHA+changes', beside the versions
    found: dict[str, Any] = {}
    for part, module, distribution in (
        ('library', 'pyg_bemap', 'pyg-bemap'),
        ('lab', 'pyg_bemap_lab', 'pyg-bemap-lab'),
    ):
        commit = software.get(f'{module} commit')
        found[part] = {
            'version': software.get(distribution),
            'commit': None if commit is None else commit.split('+')[0],
            'clean': None if commit is None else '+' not in commit,
        }
    rest = {
        k: v
        for k, v in software.items()
        if 'commit' not in k and k not in ('pyg-bemap', 'pyg-bemap-lab')
    }
    return found | rest


class RunStore:
    r"""The finished runs of a folder (see the module's description).

    A run added is written to the journal :obj:`path` at once (one JSON
    line, flushed to disk); :meth:`seal` moves the journal's runs into the
    compressed summaries and curves, which :meth:`lock` does when the
    command holding the store stops. A journal's last line cut off by an
    interruption is ignored when the store is read and dropped before the
    next run is added, and that run is done again. Any other line that is
    not a run record is an error that names the file and the line.

    A later run with the same identity (:func:`run_key`) replaces an
    earlier one: a run trained again (e.g. to record a rule added since).
    Runs stored in an earlier format are read as
    :func:`~pyg_bemap_lab.io.store.migrated` says; a journal of an earlier
    store (all its runs, whole) is sealed like any other.

    Args:
        path (str): The journal, :obj:`OUT/NAME.jsonl`; the sealed runs are
            in the folder :obj:`OUT/NAME/` (created when needed).
        base (str, optional): The journal path of a store read first and
            never written: :obj:`path` then holds only what was added on
            top of it. (default: :obj:`None`)
    """

    def __init__(self, path: str, base: str | None = None) -> None:
        self.path = path
        self.folder = osp.splitext(path)[0]
        self._runs: dict[str, dict[str, Any]] = {}
        self._seen: list[set[str]] = []
        if base is not None:
            if not _exists(base):
                raise FileNotFoundError(f'{base}: no such file of runs')
            self._runs.update(RunStore(base)._runs)
        sealed = _read_sealed(self.folder)
        journal = _read_journal(path) if osp.exists(path) else {}
        self._runs.update(sealed | journal)
        self._own = set(sealed) | set(journal)  # not the base's runs
        self._journal = set(journal)  # of those, the unsealed ones

    def __contains__(self, key: str) -> bool:
        return key in self._runs

    def __len__(self) -> int:
        return len(self._runs)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self._runs.values())

    def get(self, key: str) -> dict[str, Any] | None:
        r"""The run of :obj:`key` (see :func:`run_key`), or :obj:`None`;
        a run handed out is counted by every :meth:`reading` block."""
        run = self._runs.get(key)
        if run is not None:
            for seen in self._seen:
                seen.add(key)
        return run

    @contextlib.contextmanager
    def reading(self) -> Iterator[set[str]]:
        r"""The keys of the runs :meth:`get` hands out inside the block:
        the runs a report's tables are made of."""
        seen: set[str] = set()
        self._seen.append(seen)
        try:
            yield seen
        finally:
            self._seen.remove(seen)

    def add(self, run: dict[str, Any]) -> None:
        r"""Stores a finished run (in the journal, on disk, before it
        returns)."""
        key = run_key(run)
        line = json.dumps(run, sort_keys=True, separators=(',', ':'))
        os.makedirs(osp.dirname(self.path) or '.', exist_ok=True)
        self._drop_a_cut_off_line()
        with open(self.path, 'a') as handle:
            handle.write(line + '\n')
            handle.flush()
            os.fsync(handle.fileno())
        self._runs[key] = migrated(run)
        self._own.add(key)
        self._journal.add(key)

    def seal(self) -> None:
        r"""Moves the journal's runs into the summaries and the curves of
        their datasets, then removes the journal. Each file is replaced
        only once its successor is whole, the curves before the summaries
        that point to them, and the journal last: an interruption at any
        point leaves a store that reads as before."""
        if not self._journal:
            return
        own = sorted(self._own)
        os.makedirs(self.folder, exist_ok=True)
        for dataset in sorted(
            {self._runs[k]['dataset'] for k in self._journal}
        ):
            write_curves(
                _curves_path(self.folder, dataset),
                {
                    k: self._runs[k]['curve']
                    for k in own
                    if self._runs[k]['dataset'] == dataset
                },
            )
        lines = [_summary_line(self._runs[k]) for k in own]
        _write_xz(osp.join(self.folder, SUMMARIES), '\n'.join(lines) + '\n')
        os.remove(self.path)
        self._journal.clear()

    @contextlib.contextmanager
    def lock(self) -> Iterator['RunStore']:
        r"""Holds the store for one process: a second process that asks for
        it is refused at once, and a folder that cannot be written is found
        before any run is trained. The lock is released when the process
        ends, however it ends; the runs added meanwhile are sealed
        (:meth:`seal`) as the block ends, however it ends.

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
            try:
                self.seal()
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


#: The sealed summaries, in a store's folder.
SUMMARIES = 'summaries.jsonl.xz'


def _exists(path: str) -> bool:
    return osp.exists(path) or osp.exists(
        osp.join(osp.splitext(path)[0], SUMMARIES)
    )


def _curves_path(folder: str, dataset: str) -> str:
    return osp.join(
        folder, f'curves-{urllib.parse.quote(dataset, safe="")}.xz'
    )


def _summary_line(run: dict[str, Any]) -> str:
    summary = {k: v for k, v in run.items() if k != 'curve'}
    return json.dumps(summary, sort_keys=True, separators=(',', ':'))


def _write_xz(path: str, text: str) -> None:
    replace_file(path, lzma.compress(text.encode(), preset=9))


def _read_sealed(folder: str) -> dict[str, dict[str, Any]]:
    path = osp.join(folder, SUMMARIES)
    if not osp.exists(path):
        return {}
    with lzma.open(path, 'rt') as handle:
        summaries = [json.loads(line) for line in handle if line.strip()]
    curves: dict[str, dict[str, Any]] = {}
    for dataset in sorted({run['dataset'] for run in summaries}):
        if osp.exists(_curves_path(folder, dataset)):
            curves.update(read_curves(_curves_path(folder, dataset)))
    runs = {}
    for summary in summaries:
        key = _canonical_key(summary)
        if key not in curves:
            raise ValueError(
                f'{folder}: the curves of a run are missing ({key}); '
                'restore the folder from its copy'
            )
        runs[key] = {**summary, 'curve': curves[key]}
    return runs


def _read_journal(path: str) -> dict[str, dict[str, Any]]:
    with open(path) as handle:
        lines = handle.read().split('\n')
    runs = {}
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
        runs[key] = run
    return runs


def _has_results(run: dict[str, Any]) -> bool:
    try:
        _check_results(run)
    except ValueError:
        return False
    return True


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
