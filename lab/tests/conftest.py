import pytest

from pyg_bemap_lab.running import provenance


@pytest.fixture(autouse=True)
def code_outside_a_checkout(monkeypatch):
    r"""The tests store runs whatever state the checkout they run from is
    in (a developer's tree has changes): the code counts as installed, not
    from a checkout. The refusal of uncommitted code is tested on its own
    (running/test_provenance.py)."""
    outside = {'commit': None, 'clean': None}
    monkeypatch.setattr(
        provenance, '_COMMITS', {'library': outside, 'lab': outside}
    )
