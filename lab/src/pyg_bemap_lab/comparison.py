r"""A paired comparison of a vanilla model and its BeMap version over
several seeds, on a named dataset (with the hyper-parameters the default
protocol chose) or on a graph of one's own (with a small tuning grid):
:func:`compare`, and the :obj:`pyg-bemap compare` command's protocols."""

import os.path as osp
import tempfile
import warnings
from collections.abc import Callable

from torch_geometric.data import Data

from pyg_bemap.datasets import default_root
from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.io.user_graphs import (
    DEFAULT_FRACTIONS,
    check_fractions,
    graph_for_runs,
)
from pyg_bemap_lab.methods import BACKBONES
from pyg_bemap_lab.names import bemap_method, default_results
from pyg_bemap_lab.reporting.comparison_report import ComparisonResult
from pyg_bemap_lab.run_config import RunConfig
from pyg_bemap_lab.running.execution import run_protocol
from pyg_bemap_lab.running.protocols import Job, Protocol
from pyg_bemap_lab.running.tuned import TUNED, UNTUNED
from pyg_bemap_lab.selection import DEFAULT_RULE, STORED_RULES, check_rule
from pyg_bemap_lab.values import out_folder, run_counts


def backbone_config(dataset: str, backbone: str) -> RunConfig:
    r"""The hyper-parameters of :obj:`backbone` on the named
    :obj:`dataset`: those the default protocol chose on validation
    (:obj:`TUNED`), or :obj:`UNTUNED`, with a warning that says so, where
    it never ran (Pokec-z and Pokec-n, the synthetic graph)."""
    tuned = TUNED.get((dataset, backbone))
    if tuned is None:
        warn_untuned(dataset, backbone)
        tuned = UNTUNED
    return RunConfig.from_dict(tuned)


def warn_untuned(dataset: str, what: str) -> None:
    r"""Warns that :obj:`what` trains on :obj:`dataset` with
    :obj:`UNTUNED`, which nothing chose on validation."""
    shown = ', '.join(f'{k}={v}' for k, v in UNTUNED.items())
    warnings.warn(
        f'{dataset}: the default protocol chose no hyper-parameters of '
        f'{what} here, so it trains with untuned defaults ({shown}); '
        'to tune them, save the graph with torch.save and run '
        "'pyg-bemap compare --graph FILE'",
        stacklevel=3,
    )


def comparison_protocol(
    dataset: str,
    method: str,
    seeds: int,
    max_epochs: int = 1000,
    patience: int = 100,
) -> Protocol:
    r"""The protocol of a paired comparison of :obj:`method` (a BeMap
    method) with its backbone on :obj:`dataset`: :obj:`seeds` paired seeds
    (the same split and initial weights for both), the backbone's
    :obj:`TUNED` hyper-parameters (else :obj:`UNTUNED`), BeMap's default
    :math:`\beta` and :obj:`min_keep`, early stopping on the validation
    loss."""
    if method not in BACKBONES or not method.startswith('BeMap'):
        raise ValueError(f'{method!r} is not a BeMap method')
    if seeds < 1:
        raise ValueError(f'seeds must be at least 1 (got {seeds})')
    backbone = BACKBONES[method]
    return Protocol(
        name=f'compare-max{max_epochs}-patience{patience}',
        description=f'{method} against {backbone}, paired seeds',
        datasets=(dataset,),
        methods=(backbone, method),
        seeds=tuple(range(seeds)),
        max_epochs=max_epochs,
        patience=patience,
        config=backbone_config(dataset, backbone),
    )


#: The grid on which :func:`compare` tunes the backbone on a graph of one's
#: own (every combination, each trained with :obj:`GRAPH_GRID_SEEDS`, the
#: lowest mean validation loss chosen; features scaled to [-1, 1]).
GRAPH_GRID = dict(
    lr=(1e-3, 1e-2),
    hidden=(16, 128),
    dropout=(0.0, 0.5),
    input_dropout=(0.0, 0.5),
)

#: The seeds of the tuning runs on a graph of one's own.
GRAPH_GRID_SEEDS = (0, 1)


def graph_protocol(
    name: str,
    path: str,
    method: str,
    seeds: int,
    max_epochs: int = 1000,
    patience: int = 100,
    fractions: tuple[float, float] = DEFAULT_FRACTIONS,
) -> Protocol:
    r"""The protocol of a paired comparison on a graph of one's own, saved
    at :obj:`path` under the name :obj:`name`: the backbone tuned on
    :obj:`GRAPH_GRID`, then :obj:`seeds` paired seeds of both models, the
    graph's own split masks or a stratified split per seed with the
    training and validation :obj:`fractions`."""
    backbone = BACKBONES[bemap_method(method)]
    if seeds < 1:
        raise ValueError(f'seeds must be at least 1 (got {seeds})')
    train, val = check_fractions(fractions)
    return Protocol(
        name=f'graph-max{max_epochs}-patience{patience}-split{train}-{val}',
        description=f"{method} against {backbone} on a graph of one's own",
        datasets=(name,),
        methods=(backbone, bemap_method(method)),
        seeds=tuple(range(seeds)),
        max_epochs=max_epochs,
        patience=patience,
        config=RunConfig.from_dict(UNTUNED),
        grid=GRAPH_GRID,
        grid_seeds=GRAPH_GRID_SEEDS,
        split='stratified',
        graphs={name: path},
        fractions=fractions,
    )


def run_comparison(
    protocol: Protocol,
    root: str,
    store: RunStore,
    jobs: int = 1,
    on_run: Callable[[Job], None] | None = None,
    rule: str = DEFAULT_RULE,
    exploratory: bool = False,
) -> ComparisonResult:
    r"""Trains what :obj:`store` lacks of a comparison's :obj:`protocol`
    (:func:`comparison_protocol` or :func:`graph_protocol`)."""
    check_rule(rule, STORED_RULES)
    chosen = run_protocol(protocol, root, store, jobs, on_run, exploratory)
    result = ComparisonResult(protocol, store, chosen, rule)
    result.write(osp.dirname(store.path))
    return result


def compare(
    data: Data | str,
    sens_attr: str = 's',
    label_attr: str = 'y',
    method: str = 'sym',
    seeds: int = 10,
    epochs: int = 1000,
    patience: int = 100,
    selection: str = DEFAULT_RULE,
    fractions: tuple[float, float] = DEFAULT_FRACTIONS,
    jobs: int = 1,
    out: str | None = None,
    root: str | None = None,
    on_run: Callable[[Job], None] | None = None,
    exploratory: bool = False,
) -> ComparisonResult:
    r"""Compares a model with its BeMap version over paired seeds (the same
    split and initial weights for both) on a graph of one's own, or on a
    named dataset: what :obj:`pyg-bemap compare` does, from Python.

    .. code-block:: python

        res = compare(data, sens_attr='s', label_attr='y', method='sym')
        print(res)  # the paired table and the verdict
        res.runs  # one record per seed and model

    On a graph of one's own, the backbone is first tuned on
    :obj:`GRAPH_GRID` (by the lowest mean validation loss); the runs are
    stored in :obj:`out` under a name drawn from the graph's content, so
    that a rerun resumes and an unchanged graph is not trained again. A
    named dataset uses the hyper-parameters the default protocol chose
    (:obj:`TUNED`).

    Raises:
        ValueError: If a value is out of its range (:obj:`seeds` below 2,
            :obj:`epochs`, :obj:`patience` or :obj:`jobs` below 1, an
            :obj:`out` that is a file), naming it.

    Args:
        data (Data or str): The graph (see
            :func:`~pyg_bemap_lab.io.user_graphs.user_graph`), or a dataset's
            name.
        sens_attr (str, optional): The sensitive attribute's name.
        label_attr (str, optional): The binary labels' name.
        method (str, optional): The BeMap method (a short name of
            :obj:`~pyg_bemap_lab.names.METHOD_ALIASES`), compared with
            its backbone. (default: :obj:`'sym'`)
        seeds (int, optional): The paired seeds. (default: :obj:`10`)
        epochs (int, optional): The most epochs of a run.
        patience (int, optional): Epochs without a lower validation loss
            before a run stops.
        selection (str, optional): The rule of the reported epoch, one of
            :obj:`~pyg_bemap_lab.selection.STORED_RULES`. (default:
            :obj:`~pyg_bemap_lab.selection.DEFAULT_RULE`)
        fractions (tuple, optional): The training and validation shares of
            the stratified split of a graph without split masks.
        jobs (int, optional): Runs trained at once, one process each.
        out (str, optional): The folder of the stored runs. (default: a
            temporary folder for a named dataset; :obj:`graphs` in
            :func:`~pyg_bemap_lab.names.default_results` for a graph)
        root (str, optional): The datasets' folder, for a named dataset.
        exploratory (bool, optional): Store the runs of code with
            uncommitted changes, marked exploratory; without it they are
            refused (see
            :func:`~pyg_bemap_lab.running.provenance.check_committed`),
            but in a temporary folder, which keeps nothing.
            (default: :obj:`False`)
    """
    check_rule(selection, STORED_RULES)
    seeds, epochs, patience, jobs = run_counts(seeds, epochs, patience, jobs)
    if out is not None:
        out = out_folder('out', out)
    kept = out is not None or not isinstance(data, str)
    if out is None:
        out = (
            tempfile.mkdtemp(prefix='pyg-bemap-compare-')
            if isinstance(data, str)
            else osp.join(default_results(), 'graphs')
        )
    name, path = graph_for_runs(data, out, sens_attr, label_attr)
    if path is None:
        protocol = comparison_protocol(
            name, bemap_method(method), seeds, epochs, patience
        )
    else:
        protocol = graph_protocol(
            name, path, method, seeds, epochs, patience, fractions
        )
    store = RunStore(osp.join(out, 'runs.jsonl'))
    return run_comparison(
        protocol,
        root or default_root(),
        store,
        jobs,
        on_run,
        selection,
        exploratory or not kept,
    )
