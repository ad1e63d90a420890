r"""The options several :obj:`pyg-bemap` commands share, and the types
that check their values."""

import argparse
import os
from collections.abc import Callable

from pyg_bemap_lab import values
from pyg_bemap_lab.names import (
    METHOD_ALIASES,
    bemap_method,
    default_data_root,
    leaves_a_test_split,
)
from pyg_bemap_lab.selection import DEFAULT_RULE, RULES


def seed(text: str) -> int:
    r"""A seed: an integer from 0 to 2**63 - 1, as the library takes
    (:obj:`pyg_bemap.infra.checks.MAX_SEED`; not imported, as it loads
    torch, and arguments are checked before anything loads)."""
    try:
        value = int(text)
    except ValueError:
        value = -1  # not an integer: the same message
    if not 0 <= value <= 2**63 - 1:
        raise argparse.ArgumentTypeError(
            f'must be an integer from 0 to 2**63 - 1 (got {text!r})'
        )
    return value


def int_at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            return values.whole_number('it', int(text), minimum)
        except ValueError:  # not an integer: the same message
            raise argparse.ArgumentTypeError(
                f'must be an integer of at least {minimum} (got {text!r})'
            ) from None

    return parse


positive_int = int_at_least(1)
non_negative_int = int_at_least(0)


def share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float('nan')  # not a number: the same message
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(
            f'must be a number in [0, 1] (got {text!r})'
        )
    return value


def fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float('nan')
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(
            f'must be a number between 0 and 1 (got {text!r})'
        )
    return value


def out_folder(text: str) -> str:
    r"""A folder to write to (see :func:`~pyg_bemap_lab.values.out_folder`)."""
    try:
        return values.out_folder('it', text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            str(error).removeprefix('it ')
        ) from None


def check_fraction_options(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> None:
    r"""Exits as argparse does unless the training and validation
    fractions (where the command has them) leave a test split."""
    train = getattr(args, 'train_fraction', None)
    val = getattr(args, 'val_fraction', None)
    if (
        train is not None
        and val is not None
        and not leaves_a_test_split(train, val)
    ):
        parser.error(
            f'--train-fraction {train} and --val-fraction {val} leave no '
            'test split: their sum must be below 1'
        )


def bemap_method_type(text: str) -> str:
    try:
        return bemap_method(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def add_dataset(
    parser: argparse.ArgumentParser, choices: list[str], note: str = ''
) -> None:
    parser.add_argument(
        '--dataset',
        choices=choices,
        default='nba',
        metavar='NAME',
        help=f'the dataset: {", ".join(choices)}{note} (default: '
        '%(default)s, bundled)',
    )


def add_method(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--method',
        type=bemap_method_type,
        default='BeMap(sym)',
        metavar='{' + ','.join(METHOD_ALIASES) + '}',
        help='the BeMap method, compared with its backbone (row, sym: GCN; '
        'sage: GraphSAGE; gat: GAT; sym-uniform, sym-degree: ablations; '
        'default: sym)',
    )


def add_selection(
    parser: argparse.ArgumentParser, rules: tuple[str, ...]
) -> None:
    parser.add_argument(
        '--selection',
        choices=rules,
        metavar='RULE',
        default=DEFAULT_RULE,
        help='the reported epoch: '
        + '; '.join(f'{rule}: {RULES[rule]}' for rule in rules)
        + ' (default: %(default)s)',
    )


def add_epochs(
    parser: argparse.ArgumentParser, epochs: int, patience: int
) -> None:
    parser.add_argument(
        '--epochs',
        type=positive_int,
        default=epochs,
        help='maximum epochs (default: %(default)s)',
    )
    parser.add_argument(
        '--patience',
        type=positive_int,
        default=patience,
        help='stop after this many epochs without a lower validation '
        'loss (default: %(default)s)',
    )


def add_jobs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--jobs',
        type=positive_int,
        default=os.cpu_count() or 1,
        help='runs trained in parallel, one process with one torch thread '
        'each (default: the number of cores)',
    )


def add_exploratory(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--exploratory',
        action='store_true',
        help='store runs of code with uncommitted changes, marked '
        'exploratory (without it such runs are refused: they could name no '
        'code)',
    )


def add_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        '--root',
        default=default_data_root(),
        help='dataset directory (default: $PYG_BEMAP_DATA, else '
        '~/.cache/pyg_bemap)',
    )
