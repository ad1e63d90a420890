import glob
import html
import importlib
import inspect
import os.path as osp
import re
import subprocess
import sys

import pytest

pytest.importorskip('sphinx')
ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))

# a resource a browser fetches by itself: scripts, styles, images, fonts
FETCHED = re.compile(
    r'<(?:script|img|iframe)[^>]*\ssrc="(https?:)?//|'
    r'<link[^>]*\shref="(https?:)?//|'
    r'url\(["\']?(https?:)?//'
)


@pytest.fixture(scope='module')
def site(tmp_path_factory):
    out = str(tmp_path_factory.mktemp('html'))
    command = [sys.executable, '-m', 'sphinx', '-q', '-b', 'html']
    subprocess.run(
        [*command, osp.join(ROOT, 'docs'), out], check=True, timeout=600
    )
    return out


def test_the_site_needs_no_network(site):
    pages = glob.glob(osp.join(site, '**', '*.html'), recursive=True)
    styles = glob.glob(
        osp.join(site, '_static', '**', '*.css'), recursive=True
    )
    assert len(pages) > 10
    remote = []
    for path in pages + styles:
        with open(path, encoding='utf-8') as handle:
            if FETCHED.search(handle.read()):
                remote.append(osp.relpath(path, site))
    assert remote == []


def test_math_comes_from_the_site_itself(site):
    with open(osp.join(site, 'rules.html'), encoding='utf-8') as handle:
        page = handle.read()
    scripts = re.findall(r'<script[^>]*src="([^"]*mathjax[^"]*)"', page)
    assert scripts and all(not s.startswith('http') for s in scripts)
    assert osp.exists(osp.join(site, scripts[0].split('?')[0]))


def test_the_command_line_reference_is_generated(site):
    with open(osp.join(site, 'cli.html'), encoding='utf-8') as handle:
        page = handle.read()
    for option in ('--seeds', '--report-only', '--version'):
        assert option in page


LINK = re.compile(r'href="([^"#:?]*)(?:\?[^"#]*)?(?:#([^"]*))?"')


def _ids(path, cache={}):  # noqa: B006 (one build per test session)
    if path not in cache:
        with open(path, encoding='utf-8') as handle:
            cache[path] = set(re.findall(r'\sid="([^"]+)"', handle.read()))
    return cache[path]


def test_every_local_link_and_anchor_resolves(site):
    # viewcode's "[docs]" links among them: each source page links back to
    # the object's entry in the API reference
    dead = []
    for page in glob.glob(osp.join(site, '**', '*.html'), recursive=True):
        with open(page, encoding='utf-8') as handle:
            links = LINK.findall(handle.read())
        for href, anchor in links:
            target = osp.normpath(osp.join(osp.dirname(page), href))
            if href and not osp.exists(target):
                dead.append(f'{osp.relpath(page, site)} -> {href}')
            elif anchor and target.endswith('.html'):
                if html.unescape(anchor) not in _ids(target if href else page):
                    dead.append(f'{osp.relpath(page, site)} -> #{anchor}')
    assert dead == []


# the public modules of the library, each with its page under docs/api/
PUBLIC_MODULES = {
    'pyg_bemap': 'pyg_bemap',
    'pyg_bemap.settings': 'settings',
    'pyg_bemap.transforms': 'transforms',
    'pyg_bemap.nn': 'nn',
    'pyg_bemap.nn.sample_sharing': 'nn.sample_sharing',
    'pyg_bemap.routes': 'routes',
    'pyg_bemap.rules': 'rules',
    'pyg_bemap.edge_index': 'edge_index',
    'pyg_bemap.bemap_info': 'bemap_info',
    'pyg_bemap.functional': 'functional',
    'pyg_bemap.metrics': 'metrics',
    'pyg_bemap.datasets': 'datasets',
}

# names of the library that must not appear in the API reference
INTERNALS = set(
    'CallReplay pass_sample open_passes PassHooks Pass GraphInput LayerCall '
    'choose_route GraphSampler '
    'Sample SEED_RANGE git_blob_id group_edges EdgeGrouping SamplingPlan '
    'sampling_plan draw_edge_mask SeededReplay draw_seed '
    'MaskedAdjacency remembered carrier_of from_checked sampler '
    'private_api'.split()
)


def _api_pages(site):
    return sorted(glob.glob(osp.join(site, 'api', '*.html')))


def _api_names(site):
    r"""The full names of the modules and objects the API reference
    documents (e.g. 'pyg_bemap.nn', 'pyg_bemap.BeMapConv')."""
    ids = set().union(*(_ids(page) for page in _api_pages(site)))
    names = {i.removeprefix('module-') for i in ids}
    return {n for n in names if n.split('.')[0] == 'pyg_bemap'}


def _described(site):
    r"""The full names of the objects the API reference describes (an
    entry with a signature, not a mere link target)."""
    names = set()
    for page in _api_pages(site):
        with open(page, encoding='utf-8') as handle:
            names.update(SIGNATURE.findall(handle.read()))
    return names


SIGNATURE = re.compile(r'<dt class="sig sig-object py" id="([^"]+)"')


def _resolve(full_name):
    parts = full_name.split('.')
    for end in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module('.'.join(parts[:end]))
        except ImportError:
            continue
        for part in parts[end:]:
            obj = getattr(obj, part, None)
        return obj
    return None


def test_every_public_module_has_its_page(site):
    for module, page in PUBLIC_MODULES.items():
        path = osp.join(site, 'api', f'{page}.html')
        assert osp.exists(path), module
        assert f'module-{module}' in _ids(path), module
    with open(osp.join(site, 'api', 'index.html'), encoding='utf-8') as f:
        index = f.read()
    for page in PUBLIC_MODULES.values():
        assert f'href="{page}.html"' in index, page


def test_the_api_reference_shows_no_internals(site):
    for path in _api_pages(site):
        with open(path, encoding='utf-8') as handle:
            page = handle.read()
        assert 'Runs the forward pass of the module' not in page  # inherited
    names = {i.rsplit('.', 1)[-1] for i in _api_names(site)}
    assert 'BeMapConv' in names
    assert not names & INTERNALS
    assert [n for n in names if n.startswith('_')] == []


def test_the_api_reference_documents_every_public_name_once(site):
    # under the module's name, or under pyg_bemap's where it re-exports it
    full_names = _api_names(site)
    documented = {i.rsplit('.', 1)[-1] for i in full_names}
    missing = [
        f'{module}.{name}'
        for module in PUBLIC_MODULES
        for name in getattr(importlib.import_module(module), '__all__', ())
        if name != '__version__' and name not in documented
    ]
    assert missing == []
    # and described under one name only (e.g. not as pyg_bemap.X and as
    # pyg_bemap.nn.X); other names may link to the description
    described = _described(site)
    assert 'pyg_bemap.BeMapConv' in described
    seen = {}
    for full_name in sorted(described):
        obj = _resolve(full_name)
        if isinstance(obj, type) or inspect.isfunction(obj):
            seen.setdefault(obj, []).append(full_name)
    assert [names for names in seen.values() if len(names) > 1] == []
