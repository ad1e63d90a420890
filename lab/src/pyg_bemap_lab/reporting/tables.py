r"""Reports built from stored runs alone: verdicts, paired differences
between methods, per-method means and the chosen hyper-parameters, per
dataset and reporting rule."""

import dataclasses
import itertools
import math
from typing import Any

from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.methods import BACKBONES
from pyg_bemap_lab.reporting.statistics import (
    PairedDifference,
    paired_difference,
)
from pyg_bemap_lab.reporting.verdicts import (
    INTERVALS,
    METRICS,
    format_difference,
    format_mean_std,
    marked_gaps,
    verdict,
)
from pyg_bemap_lab.run_config import SAMPLER_NAMES, Chosen, RunConfig
from pyg_bemap_lab.running.degenerate import KINDS, degenerate
from pyg_bemap_lab.running.planning import (
    chosen_runs,
    datasets_with_runs,
    missing_runs,
)
from pyg_bemap_lab.running.protocols import Protocol
from pyg_bemap_lab.selection import DEFAULT_RULE, RULES, TABLE_RULES

#: The rules on the validation split that tables show, in their order
#: (the other stored rules are candidates, compared in
#: :mod:`~pyg_bemap_lab.reporting.robustness`).
VALIDATION_TABLE_RULES = {rule: RULES[rule] for rule in TABLE_RULES}

#: The reference code's rule, which selects on the test split. It is shown
#: in the per-method means only, labelled, for comparison with the paper.
TEST_SPLIT_RULE = {'test-fair': RULES['test-fair']}

#: Every metric NaN: what a stored run's test metrics are read over.
UNRECORDED = {metric: math.nan for metric in METRICS}


def seed_values(
    protocol: Protocol,
    store: RunStore,
    chosen: Chosen,
    dataset: str,
    method: str,
    rule: str,
    healthy_only: bool = False,
) -> dict[int, dict[str, float]]:
    r"""Seed -> the test metrics at the epoch :obj:`rule` picked, NaN for
    a metric the run did not record (the threshold-free gap :obj:`prob`
    before it was measured; seeds
    where the rule picked none are left out, and, with
    :obj:`healthy_only`, seeds whose run is
    :func:`~pyg_bemap_lab.running.degenerate.degenerate`)."""
    runs = chosen_runs(protocol, store, chosen, dataset, method)
    return {
        run['seed']: UNRECORDED | run['test'][rule]
        for run in runs
        if run['test'].get(rule) is not None
        and not (healthy_only and degenerate(run, rule))
    }


def unreported_seeds(
    protocol: Protocol,
    store: RunStore,
    chosen: Chosen,
    dataset: str,
    method: str,
    rule: str,
) -> list[int]:
    r"""The seeds whose stored run of :obj:`method` has no epoch that
    :obj:`rule` may pick (under :obj:`'val-loss-learned'`: no epoch
    learned anything on the validation split), left out of every table."""
    runs = chosen_runs(protocol, store, chosen, dataset, method)
    return [run['seed'] for run in runs if unreported(run, rule)]


def unreported(run: dict[str, Any], rule: str) -> bool:
    r"""Whether :obj:`rule` picked no epoch in the stored :obj:`run` (a
    run stored before the rule was recorded is not counted)."""
    return rule in run['test'] and run['test'][rule] is None


def reported_rules(protocol: Protocol) -> dict[str, str]:
    r"""Rule -> title, of the rules whose verdicts and paired differences
    a protocol reports, the primary rule first: the validation rules, or,
    for a protocol with :obj:`test_selection`, the test-split rule."""
    if protocol.test_selection:
        return dict(TEST_SPLIT_RULE)
    return dict(VALIDATION_TABLE_RULES)


def primary_rule(protocol: Protocol) -> str:
    r"""The rule of a protocol's verdicts."""
    return next(iter(reported_rules(protocol)))


def method_table(protocol: Protocol, store: RunStore, chosen: Chosen) -> str:
    r"""Mean ± standard deviation over seeds, in %, per rule (the
    reported rules, then the test-split rule, labelled)."""
    lines = []
    for rule, title in {**reported_rules(protocol), **TEST_SPLIT_RULE}.items():
        lines += _head(
            f'Test metrics (%), epoch by {title}', 'method', 'degenerate'
        )
        for dataset in protocol.datasets:
            for method in protocol.methods:
                values = seed_values(
                    protocol, store, chosen, dataset, method, rule
                )
                bad = len(values) - len(
                    seed_values(
                        protocol, store, chosen, dataset, method, rule, True
                    )
                )
                cells = [
                    format_mean_std([100 * v[m] for v in values.values()])
                    for m in METRICS
                ]
                lines.append(
                    f'| {dataset} | {method} | {len(values)} | {bad} | '
                    + ' | '.join(cells)
                    + ' |'
                )
        lines.append('')
    return '\n'.join(lines)


#: What the tables without degenerate runs leave out, and what decides it.
LEFT_OUT = (
    'Left out: every seed where either run is degenerate at the picked '
    f'epoch ({"; ".join(KINDS.values())}). The predicted classes of the '
    'test nodes, never their labels, decide it: a check of the table '
    'above, not a selection.'
)


def comparisons(protocol: Protocol) -> list[tuple[str, str]]:
    r"""The pairs compared: each method that changes the training graph
    against its backbone, then every method against the MLP."""
    pairs = [
        (BACKBONES[m], m)
        for m in protocol.methods
        if m in BACKBONES and BACKBONES[m] in protocol.methods
    ]
    if 'MLP' in protocol.methods:
        pairs += [('MLP', m) for m in protocol.methods if m != 'MLP']
    return pairs


def paired_table(protocol: Protocol, store: RunStore, chosen: Chosen) -> str:
    r"""Mean paired differences (compared minus reference, in percentage
    points) with their 95 % bootstrap intervals; :obj:`*` marks a
    difference whose interval excludes 0 and whose exact paired test gives
    :math:`p < 0.05` (with few seeds the percentile interval is too narrow:
    with 3 seeds no sign-flip test reaches 0.05). Negative gap differences
    mean fairer."""
    lines = []
    for (rule, title), healthy in itertools.product(
        reported_rules(protocol).items(), (False, True)
    ):
        without = ' without degenerate runs' if healthy else ''
        head = _head(
            f'Paired differences{without} (points), epoch by {title}',
            'compared - reference',
        )
        if healthy:
            head[2:2] = [LEFT_OUT, '']
        lines += head
        for dataset in protocol.datasets:
            for reference, method in comparisons(protocol):
                diffs = paired_differences(
                    protocol,
                    store,
                    chosen,
                    dataset,
                    (reference, method),
                    rule,
                    healthy,
                )
                seeds = diffs['acc'].seeds
                cells = [format_difference(d) for d in diffs.values()]
                lines.append(
                    f'| {dataset} | {method} - {reference} | {seeds} | '
                    + ' | '.join(cells)
                    + ' |'
                )
        lines.append('')
    return '\n'.join(lines)


def paired_differences(
    protocol: Protocol,
    store: RunStore,
    chosen: Chosen,
    dataset: str,
    pair: tuple[str, str],
    rule: str = DEFAULT_RULE,
    healthy_only: bool = False,
) -> dict[str, PairedDifference]:
    r"""Metric -> the paired difference :obj:`pair[1]` minus
    :obj:`pair[0]` in percentage points, on the seeds both have (with
    :obj:`healthy_only`, the seeds where neither run is degenerate)."""
    a, b = (
        seed_values(protocol, store, chosen, dataset, m, rule, healthy_only)
        for m in pair
    )
    seeds = sorted(set(a) & set(b))
    return {
        metric: paired_difference(
            [100 * a[s][metric] for s in seeds],
            [100 * b[s][metric] for s in seeds],
        )
        for metric in METRICS
    }


def verdict_table(protocol: Protocol, store: RunStore, chosen: Chosen) -> str:
    r"""The verdict of every comparison (see :func:`comparisons`) at the
    protocol's :func:`primary_rule`, per dataset."""
    rule = primary_rule(protocol)
    lines = [
        f'### Verdicts, epoch by {reported_rules(protocol)[rule]}',
        '',
        'Differences in points (compared minus reference; a negative gap '
        f'difference is fairer), {INTERVALS}. Only marked differences '
        'count. A verdict starts with "rests on degenerate runs" where '
        'none of its marked gaps is marked again without the seeds that '
        'hold a degenerate run, "partly" where some are not.',
        '',
        '| dataset | compared - reference | verdict |',
        '|---|---|---|',
    ]
    for dataset in protocol.datasets:
        for pair in comparisons(protocol):
            text = full_verdict(protocol, store, chosen, dataset, pair, rule)
            lines.append(f'| {dataset} | {pair[1]} - {pair[0]} | {text} |')
    return '\n'.join(lines) + '\n'


def full_verdict(
    protocol: Protocol,
    store: RunStore,
    chosen: Chosen,
    dataset: str,
    pair: tuple[str, str],
    rule: str,
) -> str:
    r"""The verdict of :obj:`pair[1]` against :obj:`pair[0]` over every
    paired seed; if some hold a degenerate run (see
    :mod:`~pyg_bemap_lab.running.degenerate`), how many and the verdict
    without them; and how many runs were left out because the rule picked
    no epoch in them (:func:`unreported_seeds`)."""
    every = paired_differences(protocol, store, chosen, dataset, pair, rule)
    healthy = paired_differences(
        protocol, store, chosen, dataset, pair, rule, healthy_only=True
    )
    text = verdict(every)
    bad = every['acc'].seeds - healthy['acc'].seeds
    marked = marked_gaps(every)
    lost = marked - marked_gaps(healthy)
    if bad and lost:
        partly = 'partly ' if lost != marked else ''
        text = f'{partly}rests on degenerate runs: {text}'
    if bad:
        hold = 'holds' if bad == 1 else 'hold'
        text += (
            f'. {bad} of {every["acc"].seeds} paired seeds {hold} a '
            f'degenerate run; without them: {verdict(healthy)}'
        )
    left = sum(
        len(unreported_seeds(protocol, store, chosen, dataset, m, rule))
        for m in pair
    )
    if left:
        runs = 'run' if left == 1 else 'runs'
        text += f'. {left} {runs} left out, where the rule picked no epoch'
    return text


def _head(title: str, column: str, *extra: str) -> list[str]:
    columns = ['dataset', column, 'seeds', *extra, *METRICS.values()]
    return [
        f'### {title}',
        '',
        '| ' + ' | '.join(columns) + ' |',
        '|' + '---|' * len(columns),
    ]


def relevant_settings(method: str, config: RunConfig) -> dict[str, Any]:
    r"""The settings of :obj:`config` that :obj:`method` uses: BeMap's
    settings for BeMap only, :obj:`fairdrop_delta` for FairDrop only."""
    unused = set()
    if not method.startswith('BeMap'):
        unused |= set(SAMPLER_NAMES)
    if method != 'FairDrop':
        unused.add('fairdrop_delta')
    return {k: v for k, v in config.as_dict().items() if k not in unused}


def protocol_report(
    protocol: Protocol, store: RunStore, chosen: Chosen
) -> str:
    r"""The report of a protocol, as Markdown: what is still missing, the
    verdicts, the paired differences, the per-method means and the chosen
    hyper-parameters."""
    if protocol.patience >= protocol.max_epochs:
        stopping = f'{protocol.max_epochs} epochs, no early stopping'
    else:
        stopping = (
            f'at most {protocol.max_epochs} epochs, patience '
            f'{protocol.patience} on the validation loss'
        )
    split = {
        'random': 'a random 50/25/25 split per seed',
        'budgets': 'a random 50/25/25 split per class and seed, training '
        "on the reference code's class-balanced label budget",
        'reference': "the reference loaders' fixed split",
        'stratified': 'a stratified split per seed (label and group)',
    }[protocol.split]
    lines = [
        f'## Protocol {protocol.name!r}: {protocol.description}',
        '',
        f'Seeds {list(protocol.seeds)}; {split}; {stopping}.',
        '',
    ]
    missing = {d: n for d, n in missing_runs(protocol, store).items() if n}
    if missing:
        counts = ', '.join(f'{d} {n}' for d, n in missing.items())
        lines += [
            f'**Incomplete**: runs still missing ({counts}); the rows of '
            'these datasets rest on the runs there are, and their '
            'hyper-parameters may still change. Datasets without any run '
            'are left out.',
            '',
        ]
    protocol = dataclasses.replace(
        protocol, datasets=tuple(datasets_with_runs(protocol, store))
    )
    lines += [
        verdict_table(protocol, store, chosen),
        TEST_SELECTION if protocol.test_selection else MULTIPLICITY,
        '',
        paired_table(protocol, store, chosen),
        method_table(protocol, store, chosen),
        hyper_parameter_table(protocol, chosen),
    ]
    return '\n'.join(lines)


def hyper_parameter_table(protocol: Protocol, chosen: Chosen) -> str:
    r"""The settings each (dataset, method) uses."""
    lines = [
        '### Hyper-parameters',
        '',
        '| dataset | method | hyper-parameters |',
        '|---|---|---|',
    ]
    for dataset in protocol.datasets:
        for method in protocol.methods:
            config = relevant_settings(method, chosen[dataset, method])
            shown = ', '.join(f'{k}={v}' for k, v in sorted(config.items()))
            lines.append(f'| {dataset} | {method} | {shown} |')
    return '\n'.join(lines) + '\n'


#: How to read the marks, printed under the verdicts.
MULTIPLICITY = (
    'The marks are not adjusted for multiple comparisons: each table holds '
    'many tests, so at the 5 % level about one in twenty differences '
    'without a real effect is marked by chance. The comparisons were fixed '
    'before any result of BeMap or FairDrop was seen; the rule of the '
    f'verdicts ({RULES[DEFAULT_RULE]}) was chosen later, by what the '
    'candidate rules do on their own (degenerate picks, spread across '
    "seeds, measured on the test split; the validation split's "
    'diagnostics point the same way), not by the differences they give. '
    'A verdict is "fairer" or "less fair" where either of two gaps is '
    'marked, so up to about one verdict in ten without a real effect '
    'names a change by chance. Read the other rule and single marks with '
    'care.'
)

#: How to read a protocol that selects on the test split.
TEST_SELECTION = (
    '**Selected on the TEST split.** Every figure of this protocol comes '
    "from the epoch the reference code's rule picks by looking at the "
    'test split itself: the best test accuracy among epochs whose test '
    'gaps are under the budget. It reproduces how the paper selected '
    'epochs, for comparison only; it is not an estimate of how a model '
    'does on unseen data.'
)
