import glob
import html
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


def test_the_api_reference_shows_no_internals(site):
    with open(osp.join(site, 'api.html'), encoding='utf-8') as handle:
        page = handle.read()
    assert 'Runs the forward pass of the module' not in page  # inherited
    names = {i.rsplit('.', 1)[-1] for i in _ids(osp.join(site, 'api.html'))}
    internals = set(
        'PassScope CallReplay layer_seed pass_scope GraphSampler '
        'SEED_RANGE git_blob_id group_edges'.split()
    )
    assert 'BeMapConv' in names and not names & internals
