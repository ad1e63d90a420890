r"""The test command: lint, format, types, documentation (with its code
snippets executed), the test suite with coverage, then a one-line summary.

    python scripts/check.py [pytest arguments]
"""

import re
import subprocess
import sys
from collections.abc import Sequence

PY = sys.executable
SOURCES = ['src', 'tests', 'benchmarks', 'examples', 'scripts', 'docs']
MIN_COVERAGE = 90


def run(name: str, command: Sequence[str]) -> tuple[bool, str]:
    print(f'\n=== {name}: {" ".join(command)}', flush=True)
    proc = subprocess.run(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    print(proc.stdout, end='', flush=True)
    return proc.returncode == 0, proc.stdout


def _read(path: str) -> str:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return ''


def main() -> int:
    results = {}
    results['ruff'], _ = run('lint', [PY, '-m', 'ruff', 'check', *SOURCES])
    ok, _ = run('format', [PY, '-m', 'ruff', 'format', '--check', *SOURCES])
    results['ruff'] = results['ruff'] and ok
    results['mypy'], _ = run('types', [PY, '-m', 'mypy'])
    sphinx = [PY, '-m', 'sphinx', '-W', '--keep-going', '-q']
    results['docs'], _ = run(
        'docs', [*sphinx, '-b', 'html', 'docs', 'docs/_build/html']
    )
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
            '--cov-report=term',
            f'--cov-fail-under={MIN_COVERAGE}',
            *sys.argv[1:],
        ],
    )
    final = re.findall(r'^=+ (.*) in [\d.]+s', out, re.MULTILINE)
    counts = re.findall(
        r'(\d+) (passed|failed|skipped|errors?)', final[-1] if final else ''
    )
    coverage = re.search(r'^TOTAL\s.*\s(\d+(?:\.\d+)?)%', out, re.MULTILINE)

    summary = [
        'tests '
        + (', '.join(f'{n} {what}' for n, what in counts) or 'did not run'),
        'docs '
        + ('built' if results['docs'] else 'FAILED')
        + (f' ({snippets.group(1)} snippets run)' if snippets else ''),
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
