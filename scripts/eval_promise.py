r"""Measures the promise of ``tests/nn/test_eval_promise.py`` on the named
graph cases and prints it as Markdown tables: the largest |BeMapConv - inner
conv| in evaluation and |layout - edge list| in training, per conv family
and dtype, and per graph case and layout (each over the rest). A dash means
the inner conv itself cannot run in that dtype here (BeMapConv raises the
same error). Run it in each install (with and without torch-sparse):

    python scripts/eval_promise.py [--csv FILE]
"""

import argparse
import csv
import os
import sys
import warnings

import torch
from torch_geometric.typing import WITH_TORCH_SPARSE

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))
from pyg_bemap.nn.bemap_conv import LAYOUTS  # noqa: E402
from tests.nn.test_eval_promise import (  # noqa: E402
    CASES,
    DTYPES,
    FAMILIES,
    TOLERANCE,
    case_graph,
    edge_level,
    eval_difference,
    train_difference,
)

SHORT = {
    torch.float16: 'f16',
    torch.bfloat16: 'bf16',
    torch.float32: 'f32',
    torch.float64: 'f64',
}


def measure() -> list[dict]:
    rows = []
    for case in CASES:
        data = case_graph(case)
        for name in FAMILIES:
            for dtype in DTYPES:
                extra = edge_level(name, data, dtype, case == 'edge-level')
                for layout in LAYOUTS:
                    rows.append(
                        dict(
                            case=case,
                            family=name,
                            dtype=SHORT[dtype],
                            layout=layout,
                            eval=eval_difference(
                                name, data, layout, dtype, extra
                            ),
                            train=train_difference(
                                name, data, layout, dtype, extra
                            ),
                        )
                    )
    return rows


def largest(rows: list[dict], column: str) -> str:
    values = [r[column] for r in rows if isinstance(r[column], float)]
    if not values:
        return '-'
    top = max(values)
    return '0' if top == 0 else f'{top:.0e}'


def table(rows: list[dict], key: str, column: str) -> list[str]:
    names = list(dict.fromkeys(r[key] for r in rows))
    dtypes = list(SHORT.values())
    lines = [
        f'| {key} | ' + ' | '.join(dtypes) + ' |',
        '|---' * (len(dtypes) + 1) + '|',
    ]
    for name in names:
        cells = [
            largest(
                [r for r in rows if r[key] == name and r['dtype'] == d],
                column,
            )
            for d in dtypes
        ]
        lines.append(f'| {name} | ' + ' | '.join(cells) + ' |')
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--csv', help='also write every measurement here')
    args = parser.parse_args()
    warnings.simplefilter('ignore')
    rows = measure()
    install = 'with' if WITH_TORCH_SPARSE else 'without'
    print(f'Install: {install} torch-sparse; {len(rows)} measurements.')
    limits = ', '.join(f'{SHORT[d]} {t:.0e}' for d, t in TOLERANCE.items())
    print(f'Tolerances (x10 in the test): {limits}.\n')
    for column, what in (('eval', 'evaluation'), ('train', 'training')):
        for key in ('family', 'case', 'layout'):
            print(f'Largest difference in {what}, per {key}:\n')
            print('\n'.join(table(rows, key, column)) + '\n')
    limit = {SHORT[d]: 10 * t for d, t in TOLERANCE.items()}
    over = [
        r
        for r in rows
        for c in ('eval', 'train')
        if isinstance(r[c], float) and r[c] > limit[r['dtype']]
    ]
    print(f'Measurements over tolerance: {len(over)}')
    if args.csv:
        with open(args.csv, 'w', newline='') as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)


if __name__ == '__main__':
    main()
