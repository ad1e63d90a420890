r"""The distributions as users get them: builds the library's and the lab's
wheel and sdist, checks them with twine and checks their file lists, then
installs the two wheels (not editable) into a fresh virtual environment
and runs the README's quick start, ``pyg-bemap --help`` and a two-seed
``pyg-bemap compare --dataset nba`` from them; ends with one line.

    python scripts/check_wheels.py [--torch 'torch==2.13.0'] [--keep DIR]
"""

import argparse
import os
import os.path as osp
import re
import subprocess
import sys
import tarfile
import tempfile
import venv
import zipfile

ROOT = osp.dirname(osp.dirname(osp.abspath(__file__)))

#: What each distribution must hold, by the start of the name in it.
WHEEL_HOLDS = {
    'pyg_bemap': (
        'pyg_bemap/py.typed',
        'pyg_bemap/datasets/data/nba/nba.csv.xz',
        'pyg_bemap/datasets/data/german/german_edges.txt.xz',
    ),
    'pyg_bemap_lab': ('pyg_bemap_lab/cli.py',),
}
SDIST_HOLDS = {
    'pyg_bemap': ('LICENSE', 'README.md', 'tests/infra/test_sparse.py'),
    'pyg_bemap_lab': ('LICENSE', 'README.md', 'tests/test_cli.py'),
}


def sh(*command: str, cwd: str | None = None) -> str:
    print('$', ' '.join(command), flush=True)
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f'{command[0]} failed:\n{done.stdout}{done.stderr}')
    return done.stdout


def build(out: str) -> list[str]:
    for folder in (ROOT, osp.join(ROOT, 'lab')):
        sh(sys.executable, '-m', 'build', '--outdir', out, folder)
    files = sorted(os.listdir(out))
    sh(sys.executable, '-m', 'twine', 'check', '--strict',
       *(osp.join(out, f) for f in files))  # fmt: skip
    return files


def check_contents(out: str, files: list[str]) -> None:
    for name in files:
        project = re.match(r'(pyg_bemap(?:_lab)?)-', name).group(1)
        path = osp.join(out, name)
        if name.endswith('.whl'):
            held = zipfile.ZipFile(path).namelist()
            wanted = WHEEL_HOLDS[project]
        else:
            held = [n.split('/', 1)[-1] for n in tarfile.open(path).getnames()]
            wanted = SDIST_HOLDS[project]
        missing = [w for w in wanted if w not in held]
        if missing:
            sys.exit(f'{name} lacks {missing}')
        print(f'{name}: {len(held)} files, holds {", ".join(wanted)}')


def install_and_run(out: str, files: list[str], torch: str) -> None:
    env_dir = osp.join(out, 'venv')
    venv.create(env_dir, with_pip=True)
    py = osp.join(env_dir, 'bin', 'python')
    sh(py, '-m', 'pip', 'install', '--quiet', torch)
    wheels = [osp.join(out, f) for f in files if f.endswith('.whl')]
    sh(py, '-m', 'pip', 'install', '--quiet', *wheels)
    with open(osp.join(ROOT, 'README.md')) as handle:
        snippet = re.search(r'```python\n(.*?)```', handle.read(), re.S)
    elsewhere = osp.join(out, 'elsewhere')  # not the source tree: the wheel's
    os.makedirs(elsewhere, exist_ok=True)
    sh(py, '-c', snippet.group(1), cwd=elsewhere)
    cli = osp.join(env_dir, 'bin', 'pyg-bemap')
    sh(cli, '--help', cwd=elsewhere)
    compared = sh(cli, 'compare', '--dataset', 'nba', '--seeds', '2',
                  cwd=elsewhere)  # fmt: skip
    if 'Verdict:' not in compared:
        sys.exit(f'compare printed no verdict:\n{compared}')


def check(out: str, torch: str) -> int:
    files = build(out)
    check_contents(out, files)
    install_and_run(out, files, torch)
    return len(files)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--torch', default='torch==2.13.0')
    parser.add_argument('--keep', help='build here instead of a temp dir')
    args = parser.parse_args()
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        count = check(args.keep, args.torch)
    else:  # the virtual environment takes gigabytes: never left behind
        with tempfile.TemporaryDirectory(prefix='pyg-bemap-dist-') as out:
            count = check(out, args.torch)
    print(
        f'WHEELS [OK]: {count} distributions build, pass twine check, '
        'hold their data and tests; the wheels install and run'
    )
    return 0


if __name__ == '__main__':
    sys.exit(main())
