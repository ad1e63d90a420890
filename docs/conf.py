"""Sphinx configuration of the pyg-bemap documentation."""

import datetime
import os.path as osp
import shutil

import pyg_bemap

project = 'pyg-bemap'
author = 'pyg-bemap developers'
copyright = f'{datetime.date.today().year}, {author}'
version = release = pyg_bemap.__version__

extensions = [
    'sphinx.ext.autodoc',
    'sphinx.ext.doctest',
    'sphinx.ext.mathjax',
    'sphinx.ext.napoleon',
    'sphinx.ext.viewcode',
    'sphinx-mathjax-offline',  # MathJax from _static: math renders offline
    'sphinxarg.ext',  # the command-line reference, from the parser itself
    'myst_nb',  # Markdown pages and the example notebooks
]
myst_enable_extensions = ['dollarmath', 'amsmath']
myst_heading_anchors = 3
exclude_patterns = ['_build', 'jupyter_execute']

# The example notebooks are rendered with their committed outputs (the tests
# execute them); they live in examples/notebooks/ and are copied here.
nb_execution_mode = 'off'
_NOTEBOOKS = osp.join(osp.dirname(__file__), 'notebooks')
shutil.rmtree(_NOTEBOOKS, ignore_errors=True)
shutil.copytree(
    osp.join(osp.dirname(__file__), '..', 'examples', 'notebooks'),
    _NOTEBOOKS,
    ignore=lambda folder, names: [
        n for n in names if not n.endswith('.ipynb') or n.startswith('.')
    ],
)

# Google-style docstrings, as in PyG.
napoleon_google_docstring = True
napoleon_numpy_docstring = False
autodoc_member_order = 'bysource'
autodoc_typehints = 'none'  # the docstrings name every type
# Our docstrings only: no PyG or torch boilerplate inherited by overrides,
# and defaults as written in the source (256 * 2**20, not 268435456).
autodoc_inherit_docstrings = False
autodoc_preserve_defaults = True
# Each directive lists its members: the public API, not the internals.
autodoc_default_options = {'show-inheritance': False}

# Every reference inside pyg_bemap must resolve; the build runs with -W.
# Names of other packages are not linked (no network for intersphinx here).
nitpicky = True
nitpick_ignore_regex = [
    # PyG's docstring style writes literals as :obj:`...`.
    (r'py:obj', r'(?!pyg_bemap\.).*'),
    (
        r'py:.*',
        r'(torch|torch_geometric|torch_sparse|numpy|matplotlib|scipy)\b.*',
    ),
    (
        r'py:.*',
        r'(Tensor|SparseTensor|Data|HeteroData|Generator|Module|'
        r'MessagePassing|BaseTransform|InMemoryDataset|NamedTuple)',
    ),
    # Inherited methods of torch.Tensor and MessagePassing, and the stdlib.
    (
        r'py:(meth|func)',
        r'(clone|to|cpu|cuda|detach|contiguous|pin_memory|'
        r'message|aggregate|copy\.deepcopy)',
    ),
    (r'py:.*', r'(optional|callable|str|int|float|bool|list|tuple|dict)'),
]

doctest_global_setup = """
import os, tempfile, warnings
os.environ.setdefault('PYG_BEMAP_DATA', tempfile.mkdtemp())
warnings.simplefilter('ignore')
import torch
from torch_geometric.typing import WITH_PYG_LIB, WITH_TORCH_SPARSE
torch.manual_seed(0)
"""

html_theme = 'furo'
html_title = f'pyg-bemap {release}'
html_static_path = ['_static']
html_css_files = ['tables.css']
