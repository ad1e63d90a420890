import os

import pytest
import torch_geometric.typing as pyg_typing

import pyg_bemap


def test_top_level_exports():
    for name in ('BalanceAwareSampling', 'BeMapConv', 'balanced_edge_sample'):
        assert hasattr(pyg_bemap, name)
    assert set(pyg_bemap.__all__) <= set(dir(pyg_bemap))


@pytest.mark.skipif(
    os.environ.get('PYG_BEMAP_REQUIRE_SPARSE') != '1',
    reason='set by the test command, which installs them',
)
def test_sparse_extras_are_installed_when_required():
    # `make test` installs the `sparse` extra so that the SparseTensor paths
    # really run; fail loudly rather than skip them silently.
    assert pyg_typing.WITH_TORCH_SPARSE
    assert pyg_typing.WITH_TORCH_SCATTER


@pytest.mark.skipif(
    os.environ.get('PYG_BEMAP_REQUIRE_PLAIN') != '1',
    reason='set by the test command for its second environment',
)
def test_the_plain_install_has_no_accelerators():
    # the suite's second run must be the plain 'pip install' users get
    assert not pyg_typing.WITH_TORCH_SPARSE
    assert not pyg_typing.WITH_TORCH_SCATTER
