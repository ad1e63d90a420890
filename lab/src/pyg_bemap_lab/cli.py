r"""The :obj:`pyg-bemap` command's arguments: :obj:`compare`,
:obj:`diagnose`, :obj:`sweep`, :obj:`train`, :obj:`reproduce` and
:obj:`datasets`
(what each does: :mod:`~pyg_bemap_lab.commands`)."""

import argparse
import gc
import signal
import sys
import threading
import warnings
from importlib.metadata import version
from typing import Any, NoReturn

from pyg_bemap_lab.arguments import (
    add_dataset,
    add_epochs,
    add_exploratory,
    add_jobs,
    add_method,
    add_root,
    add_selection,
    check_fraction_options,
    int_at_least,
    non_negative_int,
    out_folder,
    positive_int,
    seed,
    share,
)
from pyg_bemap_lab.graph_inputs import add_graph_source, check_graph_options
from pyg_bemap_lab.names import (
    BEMAP_BETA,
    BEMAP_MIN_KEEP,
    DATASET_ALIASES,
    DATASETS,
    MODEL_DESCRIPTION,
    PROTOCOL_NAMES,
    TRAIN_EPOCHS,
    TRAIN_PATIENCE,
    default_results,
)
from pyg_bemap_lab.notices import pyg_loading_quietly
from pyg_bemap_lab.selection import (
    STORED_RULES,
    VALIDATION_RULES,
)

TRAIN_DATASETS = sorted(DATASETS) + sorted(DATASET_ALIASES) + ['synthetic']


EXIT_CODES = (
    'exit codes: 0 done; 1 the work could not be done (one line on '
    'standard error says why); 2 bad arguments; 130 interrupted'
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog='pyg-bemap',
        description='BeMap (balanced message passing) for fair GNNs.',
        epilog=EXIT_CODES,
    )
    parser.add_argument(
        '--version',
        action='version',
        version=f'%(prog)s {version("pyg-bemap")}',
    )
    commands = parser.add_subparsers(dest='command', required=True)
    _add_compare(commands)
    _add_diagnose(commands)
    _add_sweep(commands)
    _add_train(commands)
    _add_reproduce(commands)
    datasets = commands.add_parser(
        'datasets',
        help='list the datasets and where their files are',
        description='Lists the datasets, their raw files and whether they '
        'are present under the root directory.',
        epilog=EXIT_CODES,
    )
    add_root(datasets)
    return parser


def _add_compare(commands: Any) -> None:
    compare = commands.add_parser(
        'compare',
        help='compare a model and its BeMap version over paired seeds',
        description='Trains a vanilla model and its BeMap version on the '
        'same seeds (same split; same initial weights but for '
        "BeMap(row), whose layers are not GCN's) with the "
        'hyper-parameters the default protocol chose for the dataset '
        '(untuned defaults, with a warning, where it never ran; a graph '
        "of one's own is tuned on a small grid first), "
        'reports each at the epoch its selection rule picks (by default '
        'the lowest validation loss among the epochs that learned '
        'something; a run where none did is named and left out), and '
        'prints the paired differences of the test metrics with 95 % '
        'percentile-bootstrap intervals and a one-line verdict. '
        + MODEL_DESCRIPTION,
        epilog=EXIT_CODES,
    )
    add_graph_source(compare)
    add_method(compare)
    compare.add_argument(
        '--seeds',
        type=int_at_least(2),
        default=10,
        help='paired seeds; a mark needs at least 6 (default: %(default)s)',
    )
    add_selection(compare, STORED_RULES)
    add_epochs(compare, 1000, 100)
    add_jobs(compare)
    add_exploratory(compare)
    compare.add_argument(
        '--out',
        type=out_folder,
        help='folder of the stored runs: a rerun resumes, an unchanged '
        'graph is not trained again (default: a temporary folder for a '
        'named dataset; for a graph of your own $PYG_BEMAP_RESULTS/graphs, '
        'else ~/pyg-bemap-results/graphs)',
    )
    add_root(compare)


def _add_sweep(commands: Any) -> None:
    sweep = commands.add_parser(
        'sweep',
        help="put BeMap's knobs on a grid beside reference points",
        description="Trains BeMap's settings, one knob at a time around "
        "its defaults (beta, min_keep, the balance score's delta, the "
        'hops, the scoring and the variants row, sym, sage and gat), over '
        'paired seeds, beside the backbones, an MLP and FairDrop; writes '
        'OUT/sweep.csv (one row per setting) and OUT/pareto.png, and says '
        'which settings are on the validation frontier of accuracy against '
        'delta_sp and how they do on test. Nothing is chosen on test. A '
        'rerun resumes from the stored runs.',
        epilog=EXIT_CODES,
    )
    add_graph_source(sweep)
    sweep.add_argument(
        '--seeds',
        type=int_at_least(2),
        default=10,
        help='paired seeds of every setting (default: %(default)s)',
    )
    sweep.add_argument(
        '--quick',
        action='store_true',
        help='a small grid: 4 BeMap settings, GCN, MLP and FairDrop',
    )
    add_epochs(sweep, 1000, 100)
    add_jobs(sweep)
    add_exploratory(sweep)
    sweep.add_argument(
        '--out',
        type=out_folder,
        required=True,
        help='folder of the stored runs, sweep.csv and pareto.png',
    )
    add_root(sweep)


def _add_diagnose(commands: Any) -> None:
    diagnose = commands.add_parser(
        'diagnose',
        help='measure how much room a graph leaves BeMap, in seconds',
        description='Before any training: the homophily of the sensitive '
        'attribute, the share of one-group neighbourhoods (the only ones '
        'BeMap thins), the share of edges a sample keeps, the imbalance of '
        'the L-hop neighbourhoods and the gap of the labels themselves.',
        epilog=EXIT_CODES,
    )
    add_graph_source(diagnose, fractions=False)
    diagnose.add_argument(
        '--mlp',
        action='store_true',
        help="also train an MLP and report its predictions' gap",
    )
    diagnose.add_argument(
        '--seed',
        type=seed,
        default=0,
        help="the MLP's initial weights, and its split where the graph has "
        'no split masks (default: %(default)s)',
    )
    diagnose.add_argument(
        '--json', action='store_true', help='print the figures as JSON'
    )
    add_root(diagnose)


def _add_train(commands: Any) -> None:
    train = commands.add_parser(
        'train',
        help='train a model and its BeMap version once',
        description='Trains a vanilla model and its BeMap version on one '
        'dataset with one seed, with the hyper-parameters the default '
        'protocol chose for the dataset (untuned defaults, with a warning, '
        'where it never ran), and prints the test fairness report of '
        'each at the epoch its selection rule picks (by default the '
        'lowest validation loss among the epochs that learned something, '
        "as 'compare'). One seed says little: "
        "'pyg-bemap compare' runs paired seeds.",
        epilog=EXIT_CODES,
    )
    add_dataset(
        train,
        TRAIN_DATASETS,
        " ('synthetic': a biased stochastic block model)",
    )
    add_method(train)
    train.add_argument(
        '--seed',
        type=seed,
        default=0,
        help='the split, initial weights and sampling (default: %(default)s)',
    )
    train.add_argument(
        '--beta',
        type=share,
        default=BEMAP_BETA,
        help='share of a one-group neighbourhood kept (default: %(default)s)',
    )
    train.add_argument(
        '--min-keep',
        type=non_negative_int,
        default=BEMAP_MIN_KEEP,
        help='neighbours a one-group neighbourhood keeps at least '
        '(default: %(default)s)',
    )
    add_selection(train, VALIDATION_RULES)
    add_epochs(train, TRAIN_EPOCHS, TRAIN_PATIENCE)
    add_root(train)


def _add_reproduce(commands: Any) -> None:
    reproduce = commands.add_parser(
        'reproduce',
        help='run an evaluation protocol and write its report',
        description='Trains every method of a protocol (the default one: '
        'tuned backbones, 10 paired seeds, NBA, German, Recidivism and '
        'Credit), stores its runs in OUT/runs/ (summaries and curves), '
        'OUT/<protocol>.md (verdicts, paired differences, means), '
        'OUT/paired_<protocol>.png (the gap differences with their '
        'intervals; OUT/paired_<protocol>_sym.png: BeMap(sym) against GCN '
        'alone), for a protocol with a sweep one trade-off plot per '
        'dataset and, for a tuned protocol, '
        'OUT/tuning_<protocol>.md (every grid combination) with '
        "OUT/curves_<protocol>.png (the chosen GCN's validation curves). "
        'A rerun resumes from the stored runs. ' + MODEL_DESCRIPTION,
        epilog=EXIT_CODES,
    )
    reproduce.add_argument(
        '--out',
        type=out_folder,
        default=default_results(),
        help='folder of the stored runs and reports (default: '
        '$PYG_BEMAP_RESULTS, else ~/pyg-bemap-results)',
    )
    which = reproduce.add_mutually_exclusive_group()
    which.add_argument(
        '--protocol',
        choices=sorted(PROTOCOL_NAMES),
        metavar='NAME',
        default='default',
        help='the protocol to run: '
        + ', '.join(sorted(PROTOCOL_NAMES))
        + ' (default: %(default)s)',
    )
    which.add_argument(
        '--quick',
        action='store_true',
        help='the quick protocol: NBA and German, 3 seeds, no tuning',
    )
    which.add_argument(
        '--robustness',
        action='store_true',
        help="the robustness study of the headline: the default protocol's "
        'GCN and BeMap(sym) on 30 paired seeds, input dropout off and on, '
        'every candidate selection rule; writes OUT/robustness.md and '
        "OUT/robustness.png (its runs are the default protocol's own: "
        'give both the same OUT)',
    )
    reproduce.add_argument(
        '--max-epochs',
        type=positive_int,
        default=None,
        help="cap a protocol's epochs (a separate protocol name in the "
        "store, for smoke tests; default: the protocol's own)",
    )
    reproduce.add_argument(
        '--base-runs',
        metavar='FILE',
        help='the runs.jsonl of a store read first and never written '
        '(OUT then holds only the runs trained on top of it)',
    )
    reproduce.add_argument(
        '--report-only',
        action='store_true',
        help='rebuild the report and plots from the stored runs, training '
        'nothing (a protocol still running shows the runs it has)',
    )
    add_jobs(reproduce)
    add_exploratory(reproduce)
    add_root(reproduce)


def main(argv: list[str] | None = None) -> int:
    r"""Runs the command; returns the exit code: 0 on success, 1 when the
    work cannot be done (e.g. a dataset that cannot be downloaded, a bad
    input file; one line on standard error), 2 for bad arguments (from
    :obj:`argparse`), 130 when interrupted."""
    parser = build_parser()
    args = parser.parse_args(argv)
    check_fraction_options(parser, args)
    check_graph_options(parser, args)
    try:
        # what a command needs is imported when it runs, so that --help
        # and bad arguments answer at once
        with pyg_loading_quietly():
            from pyg_bemap_lab import commands

        with warnings.catch_warnings():  # restores showwarning after
            warnings.showwarning = _one_line_warning
            getattr(commands, f'run_{args.command}')(args)
    except KeyboardInterrupt:
        return _interrupted()
    except Exception as error:
        if _caused_by_ctrl_c(error):
            return _interrupted()
        if not isinstance(error, (ValueError, OSError)):
            raise
        print(f'pyg-bemap: error: {_one_line(error)}', file=sys.stderr)
        return 1
    return 0


def run() -> NoReturn:
    r"""The console script :obj:`pyg-bemap`: runs :func:`main` on the
    command line's arguments and exits with its code."""
    code = main()
    # Python's shutdown walks every live object in several garbage
    # collections; with torch, PyG and SciPy loaded that is some 400,000
    # objects and two seconds, after the work is done (and after Ctrl-C)
    gc.freeze()
    sys.exit(code)


def _one_line_warning(
    message: Warning | str, *args: Any, **kwargs: Any
) -> None:
    r"""Shows a warning as the command's errors are shown: one line on
    standard error, without the file, line and code it came from."""
    print(f'pyg-bemap: warning: {_one_line(message)}', file=sys.stderr)


def _one_line(said: object) -> str:
    r"""What an error or a warning says, on one line (another library's
    message may hold line breaks)."""
    return ' '.join(str(said).split())


def _interrupted() -> int:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # once is enough
    print('pyg-bemap: interrupted', file=sys.stderr)
    return 130


def _caused_by_ctrl_c(error: BaseException | None) -> bool:
    # Python wraps some exceptions raised inside others' handling, e.g. a
    # Ctrl-C during an import that defines a class becomes "RuntimeError:
    # Error calling __set_name__ ..." with the KeyboardInterrupt as cause
    while error is not None:
        if isinstance(error, KeyboardInterrupt):
            return True
        error = error.__cause__ or error.__context__
    return False


if __name__ == '__main__':  # pragma: no cover
    run()
