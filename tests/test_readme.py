import os.path as osp
import re

import torch

README = osp.join(osp.dirname(__file__), '..', 'README.md')


def readme() -> str:
    with open(README) as handle:
        return handle.read()


def test_the_two_line_snippet_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.setenv('PYG_BEMAP_DATA', str(tmp_path))
    snippet = re.search(r'```python\n(.*?)```', readme(), re.S).group(1)
    scope: dict = {}
    exec(compile(snippet, 'README.md', 'exec'), scope)
    assert scope['out'].shape == (scope['data'].num_nodes, 2)
    assert torch.isfinite(scope['out']).all()


def test_links_to_files_exist():
    links = re.findall(r'\]\(([^)#]+)\)', readme())
    local = [link for link in links if not link.startswith('http')]
    assert local, 'the README links into the docs'
    root = osp.dirname(README)
    assert [
        link for link in local if not osp.exists(osp.join(root, link))
    ] == []


def test_the_readme_stays_short():
    assert len(readme().splitlines()) <= 200
