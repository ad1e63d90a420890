r"""Fails when a rendered formula or code block is wider than its column.

    python scripts/check_docs_layout.py [BUILD_DIR] [--width PX]

Serves the built HTML documentation on localhost, opens every page in
headless Chromium (Debian's ``chromium`` and ``chromium-driver``) through
Selenium at a desktop window width, waits for MathJax to typeset, and
measures every display formula and every code block (notebook cells and
their outputs included) against the box the page gives it, which is the
width of the text column. Without Chromium it says so and exits 0, unless
``PYG_BEMAP_REQUIRE_BROWSER=1`` (CI), which makes a missing browser an error.
"""

import argparse
import contextlib
import functools
import http.server
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

BROWSER = ('chromium', 'chromedriver')
GENERATED = ('genindex.html', 'search.html', 'py-modindex.html')
FLAGS = [  # a closed network: no background connections, no sandbox as root
    '--headless=new',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
]
# Overflowing elements, as [kind, text, content width, box width].
MEASURE = """
const done = arguments[arguments.length - 1];
const mathjax = window.MathJax && window.MathJax.startup;
(mathjax ? mathjax.promise : Promise.resolve()).then(() => {
  const found = [];
  const article = document.querySelector('article') || document.body;
  for (const math of article.querySelectorAll('mjx-container[display]')) {
    const inner = math.firstElementChild;
    const width = inner ? inner.getBoundingClientRect().width : 0;
    const box = math.getBoundingClientRect().width;
    if (Math.max(width, math.scrollWidth) > box + 1) {
      found.push(['formula', math.textContent, Math.max(width,
                  math.scrollWidth), box]);
    }
  }
  for (const pre of article.querySelectorAll('div.highlight pre')) {
    if (pre.scrollWidth > pre.clientWidth + 1) {
      found.push(['code block', pre.textContent, pre.scrollWidth,
                  pre.clientWidth]);
    }
  }
  done(found);
});
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('build', nargs='?', default='docs/_build/html')
    parser.add_argument(
        '--width', type=int, default=1400, help='window width in pixels'
    )
    args = parser.parse_args()
    missing = [name for name in BROWSER if shutil.which(name) is None]
    if missing:
        required = os.environ.get('PYG_BEMAP_REQUIRE_BROWSER') == '1'
        print(
            f'docs layout: not checked (no {" or ".join(missing)}: '
            'apt-get install chromium chromium-driver)',
            file=sys.stderr if required else sys.stdout,
        )
        return 1 if required else 0
    pages = sorted(
        str(path.relative_to(args.build))
        for path in Path(args.build).rglob('*.html')
        if not path.relative_to(args.build).parts[0].startswith('_')
        and path.name not in GENERATED
    )
    problems = []
    with _served(args.build) as url, _browser(args.width) as driver:
        for page in pages:
            driver.get(f'{url}/{page}')
            for kind, text, width, box in driver.execute_async_script(MEASURE):
                snippet = ' '.join(text.split())[:50]
                problems.append(
                    f'{page}: {kind} {width:.0f} px wide in a {box:.0f} px '
                    f'column: {snippet}'
                )
    if problems:
        print('\n'.join(problems))
    print(
        f'docs layout: {len(pages)} pages at {args.width} px, '
        f'{len(problems)} too wide'
    )
    return 1 if problems else 0


@contextlib.contextmanager
def _served(directory: str) -> Iterator[str]:
    handler = functools.partial(
        _QuietHandler, directory=os.path.abspath(directory)
    )
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f'http://127.0.0.1:{server.server_address[1]}'
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def _browser(width: int) -> Iterator['webdriver.Chrome']:  # noqa: F821
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory() as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = shutil.which('chromium') or ''
        for flag in [*FLAGS, f'--user-data-dir={profile}']:
            options.add_argument(flag)
        options.add_argument(f'--window-size={width},1000')
        service = Service(executable_path=shutil.which('chromedriver'))
        driver = webdriver.Chrome(options=options, service=service)
        driver.set_script_timeout(60)
        try:
            yield driver
        finally:
            driver.quit()


if __name__ == '__main__':
    sys.exit(main())
