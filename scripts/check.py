r"""The test command: lint, format, types, documentation (with its code
snippets executed, and its formulas and code blocks measured against their
column in headless Chromium), the test suite with coverage, the test suite
again in the plain install (without torch-sparse and torch-scatter) when
given its interpreter, then a one-line summary.

    python scripts/check.py [--plain-python PATH] [pytest arguments]
"""

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Sequence

PY = sys.executable
SOURCES = ['src', 'tests', 'lab', 'benchmarks', 'examples', 'scripts', 'docs']
MIN_COVERAGE = 90


def run(
    name: str, command: Sequence[str], env: dict[str, str] | None = None
) -> tuple[bool, str]:
    print(f'\n=== {name}: {" ".join(command)}', flush=True)
    proc = subprocess.run(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    print(proc.stdout, end='', flush=True)
    return proc.returncode == 0, proc.stdout


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ''


def test_counts(out: str) -> str:
    r"""'N passed, N skipped in T s' from pytest's closing line."""
    final = re.findall(r'^=+ (.*) in ([\d.]+)s', out, re.MULTILINE)
    if not final:
        return 'did not run'
    line, seconds = final[-1]
    counts = re.findall(r'(\d+) (passed|failed|skipped|errors?)', line)
    listing = ', '.join(f'{n} {what}' for n, what in counts)
    return f'{listing} in {float(seconds):.0f} s'


def versions(python: str) -> str:
    r"""'torch X, PyG Y' of the environment of :obj:`python`."""
    code = (
        'import torch, torch_geometric as g; '
        'print(f"torch {torch.__version__}, PyG {g.__version__}")'
    )
    done = subprocess.run(
        [python, '-c', code], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or 'versions unknown'


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--plain-python', help='python of the plain install')
    args, pytest_args = parser.parse_known_args()
    results = {}
    results['ruff'], _ = run('lint', [PY, '-m', 'ruff', 'check', *SOURCES])
    ok, _ = run('format', [PY, '-m', 'ruff', 'format', '--check', *SOURCES])
    results['ruff'] = results['ruff'] and ok
    results['mypy'], _ = run('types', [PY, '-m', 'mypy'])
    sphinx = [PY, '-m', 'sphinx', '-W', '--keep-going', '-q']
    results['docs'], _ = run(
        'docs', [*sphinx, '-b', 'html', 'docs', 'docs/_build/html']
    )
    ok, layout_out = run(
        'docs layout (headless Chromium)',
        [PY, 'scripts/check_docs_layout.py', 'docs/_build/html'],
    )
    results['docs'] = results['docs'] and ok
    layout = re.search(r'^docs layout: (.*)$', layout_out, re.MULTILINE)
    ok, _ = run(
        'doc snippets',
        [*sphinx, '-b', 'doctest', 'docs', 'docs/_build/doctest'],
    )
    results['docs'] = results['docs'] and ok
    snippets = re.search(
        r'^\s+(\d+) tests$',
        _read('docs/_build/doctest/output.txt'),
        re.MULTILINE,
    )
    results['pytest'], out = run(
        'tests',
        [
            PY,
            '-m',
            'pytest',
            '--cov=pyg_bemap',
            '--cov=pyg_bemap_lab',
            '--cov-report=term',
            f'--cov-fail-under={MIN_COVERAGE}',
            *pytest_args,
        ],
    )
    coverage = re.search(r'^TOTAL\s.*\s(\d+(?:\.\d+)?)%', out, re.MULTILINE)

    summary = [f'tests ({versions(PY)}) ' + test_counts(out)]
    if args.plain_python:
        env = {
            k: v
            for k, v in os.environ.items()
            if k != 'PYG_BEMAP_REQUIRE_SPARSE'
        }
        env['PYG_BEMAP_REQUIRE_PLAIN'] = '1'
        results['plain'], plain_out = run(
            'tests in the plain install (no torch-sparse, torch-scatter)',
            [args.plain_python, '-m', 'pytest', *pytest_args],
            env=env,
        )
        summary.append(
            f'plain install ({versions(args.plain_python)}): tests '
            + test_counts(plain_out)
        )
    summary += [
        'docs '
        + ('built' if results['docs'] else 'FAILED')
        + (f' ({snippets.group(1)} snippets run)' if snippets else ''),
        'layout ' + (layout.group(1) if layout else 'FAILED'),
        'ruff ' + ('clean' if results['ruff'] else 'FAILED'),
        'mypy ' + ('clean' if results['mypy'] else 'FAILED'),
        f'coverage {coverage.group(1) if coverage else "?"}% '
        f'(minimum {MIN_COVERAGE}%)',
    ]
    status = 'OK' if all(results.values()) else 'FAILED'
    print(f'\nSUMMARY [{status}]: ' + ' | '.join(summary))
    return 0 if status == 'OK' else 1


if __name__ == '__main__':
    sys.exit(main())
