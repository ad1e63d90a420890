import importlib.metadata
import subprocess
from types import ModuleType

import torch

from pyg_bemap_lab.running.provenance import _commit, provenance


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
    assert found['pyg-bemap'] == importlib.metadata.version('pyg-bemap')
    assert 'no-such-distribution' not in found


def test_the_commit_of_a_checkout_and_its_changes(tmp_path):
    module = _module_in(tmp_path)
    assert _commit(module) is None  # not a checkout
    _git(tmp_path, 'init', '-q')
    (tmp_path / '__init__.py').write_text('x = 1\n')
    _git(tmp_path, 'add', '__init__.py')
    _git(tmp_path, 'commit', '-q', '-m', 'first')
    head = _git(tmp_path, 'rev-parse', 'HEAD')
    assert _commit(module) == head
    (tmp_path / 'untracked.txt').write_text('not part of the code\n')
    assert _commit(module) == head
    (tmp_path / '__init__.py').write_text('x = 2\n')
    assert _commit(module) == f'{head}+changes'


def test_the_commits_are_those_of_the_code_imported(monkeypatch):
    # read as the process imports the code: a commit made while a run
    # trains is not the code the run used (they were read at its end)
    from pyg_bemap_lab.running import provenance as module

    before = provenance()
    monkeypatch.setattr(module, '_commit', lambda m: 'committed-since')
    assert provenance() == before
    assert all(v != 'committed-since' for v in before.values())
