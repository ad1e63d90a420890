import importlib.metadata
import platform
import subprocess
from types import ModuleType

import pytest
import torch

from pyg_bemap_lab.running import provenance as module
from pyg_bemap_lab.running.provenance import (
    _commit,
    check_committed,
    device_name,
    provenance,
)


def _module_in(folder) -> ModuleType:
    module = ModuleType('example')
    module.__file__ = str(folder / '__init__.py')
    return module


def _git(folder, *args) -> str:
    identity = ('-c', 'user.name=t', '-c', 'user.email=t@example.org')
    return subprocess.run(
        ['git', *identity, '-C', str(folder), *args],
        capture_output=True,
        check=True,
        text=True,
    ).stdout.strip()


def test_the_versions_are_those_installed():
    found = provenance()
    assert found['torch'] == torch.__version__  # its build too (+cu130)
    assert found['torch'].startswith(importlib.metadata.version('torch'))
    assert found['python'] == platform.python_version()
    assert found['library']['version'] == importlib.metadata.version(
        'pyg-bemap'
    )
    assert found['lab']['version'] == importlib.metadata.version(
        'pyg-bemap-lab'
    )
    assert set(found['library']) == {'version', 'commit', 'clean'}
    assert 'no-such-distribution' not in found


def test_the_commit_of_a_checkout_and_its_changes(tmp_path):
    code = _module_in(tmp_path)
    assert _commit(code) == {'commit': None, 'clean': None}  # no checkout
    _git(tmp_path, 'init', '-q')
    (tmp_path / '__init__.py').write_text('x = 1\n')
    assert _commit(code)['commit'] is None  # not tracked: not this code
    _git(tmp_path, 'add', '__init__.py')
    _git(tmp_path, 'commit', '-q', '-m', 'first')
    head = _git(tmp_path, 'rev-parse', 'HEAD')
    assert _commit(code) == {'commit': head, 'clean': True}
    (tmp_path / 'untracked.txt').write_text('not part of the code\n')
    assert _commit(code) == {'commit': head, 'clean': True}
    (tmp_path / '__init__.py').write_text('x = 2\n')
    assert _commit(code) == {'commit': head, 'clean': False}


def test_the_commits_are_those_of_the_code_imported(monkeypatch):
    # read as the process imports the code: a commit made while a run
    # trains is not the code the run used (they were read at its end)
    before = provenance()
    monkeypatch.setattr(module, '_commit', lambda m: 'committed-since')
    assert provenance() == before


def test_uncommitted_code_stores_runs_only_as_exploratory(monkeypatch):
    dirty = {'commit': 'abc', 'clean': False}
    clean = {'commit': 'abc', 'clean': True}
    monkeypatch.setattr(module, '_COMMITS', {'library': dirty, 'lab': clean})
    with pytest.raises(ValueError, match='the library .* uncommitted'):
        check_committed(exploratory=False)
    check_committed(exploratory=True)
    monkeypatch.setattr(module, '_COMMITS', {'library': clean, 'lab': clean})
    check_committed(exploratory=False)


def test_the_device_is_named():
    name = device_name(torch.device('cpu'))
    assert name.startswith('cpu: ')
    assert name.endswith(f'{torch.get_num_threads()} threads')
