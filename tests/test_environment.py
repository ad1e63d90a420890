import os
import re
from pathlib import Path

import pytest
import torch_geometric.typing as pyg_typing

import pyg_bemap
from tests.conftest import run_python


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


def test_the_library_needs_neither_the_lab_nor_its_stack():
    # a fresh process in which scipy, matplotlib and the lab cannot be
    # imported: the library imports, prepares a graph and trains a step
    script = (
        'import sys\n'
        'for name in ("scipy", "matplotlib", "pyg_bemap_lab"):\n'
        '    sys.modules[name] = None\n'
        'import torch\n'
        'from torch_geometric.nn import GCN\n'
        'from pyg_bemap import BalanceAwareSampling, fairness_report, '
        'to_bemap\n'
        'from pyg_bemap.datasets import load_nba\n'
        'data = BalanceAwareSampling()(load_nba())\n'
        'model = to_bemap(GCN(data.num_features, 8, 2, 2))\n'
        'model(data.x, data.edge_index).sum().backward()\n'
        'report = fairness_report(model.eval()(data.x, data.edge_index), '
        'data.y, data.s)\n'
        'print("ok")\n'
    )
    result = run_python('-c', script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == 'ok'


def test_the_version_is_stated_once_in_the_project_file():
    import os.path as osp

    tomllib = pytest.importorskip('tomllib')  # Python 3.11 and later
    root = osp.dirname(osp.dirname(osp.abspath(__file__)))
    with open(osp.join(root, 'pyproject.toml'), 'rb') as handle:
        stated = tomllib.load(handle)['project']['version']
    assert pyg_bemap.__version__ == stated


def test_the_changelog_has_a_section_for_this_version():
    import os.path as osp

    root = osp.dirname(osp.dirname(osp.abspath(__file__)))
    with open(osp.join(root, 'CHANGELOG.md')) as handle:
        sections = re.findall(r'^## (\S+)', handle.read(), re.M)
    assert pyg_bemap.__version__ in sections
    assert len(sections) == len(set(sections))  # one section per version


CUDA_MARK = re.compile(r'^(@pytest\.mark\.cuda|pytestmark = .*\.cuda\b)', re.M)


def test_every_gpu_test_lives_where_the_gpu_check_runs_them():
    # scripts/gpu_check.sh collects tests/test_cuda.py alone: a GPU image
    # may lack what other test modules import
    root = Path(__file__).parents[1]
    marked = {
        path.relative_to(root).as_posix()
        for folder in ('tests', 'lab/tests')
        for path in (root / folder).rglob('test_*.py')
        if CUDA_MARK.search(path.read_text())
    }
    assert marked == {'tests/test_cuda.py'}
    assert 'tests/test_cuda.py' in (root / 'scripts/gpu_check.sh').read_text()
