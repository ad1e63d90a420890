import os
import os.path as osp
import shutil

import pytest

from tests.conftest import run_python

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))
SCRIPT = osp.join(ROOT, 'scripts', 'check_docs_layout.py')
pytestmark = pytest.mark.skipif(
    os.environ.get('PYG_BEMAP_REQUIRE_BROWSER') != '1'
    and not (shutil.which('chromium') and shutil.which('chromedriver')),
    reason='the layout check needs Chromium (apt-get install chromium '
    'chromium-driver)',
)
pytest.importorskip('selenium')

PAGE = """<html><body><article style="width: 400px">
<p>A column of 400 px.</p>
<div class="highlight"><pre>{code}</pre></div>
<mjx-container display="true" style="display: block">
<mjx-math style="display: inline-block; width: {math}px">x</mjx-math>
</mjx-container>
</article></body></html>"""


def check(folder):
    return run_python(SCRIPT, str(folder), '--width', '800')


def test_a_formula_or_code_block_wider_than_its_column_fails(tmp_path):
    (tmp_path / 'fits.html').write_text(PAGE.format(code='x = 1', math=100))
    proc = check(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert '1 pages at 800 px, 0 too wide' in proc.stdout

    (tmp_path / 'wide.html').write_text(
        PAGE.format(code='x = ' + '1' * 200, math=900)
    )
    proc = check(tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[-1].endswith('2 pages at 800 px, 2 too wide')
    problems = sorted(lines[:-1])
    assert problems[0].startswith('wide.html: code block ')
    assert problems[0].endswith('px column: x = ' + '1' * 46)
    assert problems[1].startswith('wide.html: formula 900 px wide')
