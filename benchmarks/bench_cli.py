r"""How fast the command line answers before any work: the wall time of
:obj:`pyg-bemap --help` and of each command's :obj:`--help` (the median of
5 runs, each a fresh process). Target: within 1 s."""

import argparse
import statistics
import subprocess
import sys
import time

COMMANDS = ([], ['compare'], ['sweep'], ['diagnose'], ['train'], ['reproduce'])


def seconds(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, '-m', 'pyg_bemap_lab.cli', *argv, '--help'],
            check=True,
            capture_output=True,
        )
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--runs', type=int, default=5)
    args = parser.parse_args()
    worst = 0.0
    for argv in COMMANDS:
        median = seconds(argv, args.runs)
        worst = max(worst, median)
        name = ' '.join(['pyg-bemap', *argv, '--help'])
        print(f'{name:<32}{median:7.2f} s')
    print(f'target <= 1 s: {"met" if worst <= 1 else "MISSED"}')


if __name__ == '__main__':
    main()
