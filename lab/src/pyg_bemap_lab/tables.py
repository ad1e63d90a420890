r"""Reports built from stored runs alone: verdicts, paired differences
between methods, per-method means and the chosen hyper-parameters, per
dataset and reporting rule."""

import dataclasses
import math
import statistics
from typing import Any

from pyg_bemap_lab.protocols import (
    Protocol,
    chosen_runs,
    datasets_with_runs,
    missing_runs,
)
from pyg_bemap_lab.statistics import (
    PairedDifference,
    paired_difference,
)
from pyg_bemap_lab.store import RunStore
from pyg_bemap_lab.training import BACKBONES

#: The column title of each reported metric, by its stored name.
METRICS = {'acc': 'acc', 'auc': 'AUC', 'sp': 'delta_sp', 'eo': 'delta_eo'}

#: Rules on the validation split, in the order the tables show them.
RULES = {
    'val-loss': 'lowest validation loss',
    'val-fair': 'fairness-aware (validation)',
}

#: The reference code's rule, which selects on the test split. It is shown
#: in the per-method means only, labelled, for comparison with the paper.
TEST_SPLIT_RULE = {
    'test-fair': "the reference code's rule, selected on the TEST split "
    '(for comparison only)',
}

Chosen = dict[tuple[str, str], dict[str, Any]]

#: The level of the exact paired test behind a mark.
SIGNIFICANCE = 0.05

#: The rule of the verdicts, fixed before any result of BeMap or FairDrop
#: was seen.
PRIMARY_RULE = 'val-loss'


def seed_values(
    protocol: Protocol,
    store: RunStore,
    chosen: Chosen,
    dataset: str,
    method: str,
    rule: str,
) -> dict[int, dict[str, float]]:
    r"""Seed -> the test metrics at the epoch :obj:`rule` picked (seeds
    where the rule picked none are left out)."""
    runs = chosen_runs(protocol, store, chosen, dataset, method)
    return {
        run['seed']: run['test'][rule]
        for run in runs
        if run['test'].get(rule) is not None
    }


def reported_rules(protocol: Protocol) -> dict[str, str]:
    r"""Rule -> title, of the rules whose verdicts and paired differences
    a protocol reports, the primary rule first: the validation rules, or,
    for a protocol with :obj:`test_selection`, the test-split rule."""
    if protocol.test_selection:
        return dict(TEST_SPLIT_RULE)
    return dict(RULES)


def primary_rule(protocol: Protocol) -> str:
    r"""The rule of a protocol's verdicts."""
    return next(iter(reported_rules(protocol)))


def method_table(protocol: Protocol, store: RunStore, chosen: Chosen) -> str:
    r"""Mean ± standard deviation over seeds, in %, per rule (the
    reported rules, then the test-split rule, labelled)."""
    lines = []
    for rule, title in {**reported_rules(protocol), **TEST_SPLIT_RULE}.items():
        lines += _head(f'Test metrics (%), epoch by {title}', 'method')
        for dataset in protocol.datasets:
            for method in protocol.methods:
                values = seed_values(
                    protocol, store, chosen, dataset, method, rule
                )
                cells = [
                    format_mean_std([100 * v[m] for v in values.values()])
                    for m in METRICS
                ]
                lines.append(
                    f'| {dataset} | {method} | {len(values)} | '
                    + ' | '.join(cells)
                    + ' |'
                )
        lines.append('')
    return '\n'.join(lines)


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
    for rule, title in reported_rules(protocol).items():
        lines += _head(
            f'Paired differences (points), epoch by {title}',
            'compared - reference',
        )
        for dataset in protocol.datasets:
            for reference, method in comparisons(protocol):
                diffs = paired_differences(
                    protocol, store, chosen, dataset, (reference, method), rule
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
    rule: str = PRIMARY_RULE,
) -> dict[str, PairedDifference]:
    r"""Metric -> the paired difference :obj:`pair[1]` minus
    :obj:`pair[0]` in percentage points, on the seeds both have."""
    reference, method = pair
    a = seed_values(protocol, store, chosen, dataset, reference, rule)
    b = seed_values(protocol, store, chosen, dataset, method, rule)
    seeds = sorted(set(a) & set(b))
    return {
        metric: paired_difference(
            [100 * a[s][metric] for s in seeds],
            [100 * b[s][metric] for s in seeds],
        )
        for metric in METRICS
    }


def significant(diff: PairedDifference) -> bool:
    r"""Whether a difference is marked: its interval excludes 0 and its
    exact test gives :math:`p <` :obj:`SIGNIFICANCE`."""
    return diff.excludes_zero and diff.p_value < SIGNIFICANCE


def fewest_seeds() -> int:
    r"""The fewest paired seeds with which the exact sign-flip test can
    reach :math:`p <` :obj:`SIGNIFICANCE` (its smallest two-sided p-value
    is :math:`2 / 2^n`)."""
    return math.floor(1 - math.log2(SIGNIFICANCE)) + 1


def verdict(diffs: dict[str, PairedDifference]) -> str:
    r"""One sentence on a paired comparison: what happened to the two gaps
    and to accuracy and AUC, counting only marked differences; or why there
    is no verdict (no paired runs, or too few seeds for any mark)."""
    seeds = diffs['acc'].seeds
    if seeds == 0:
        return 'no verdict: no paired runs yet'
    if seeds < fewest_seeds():
        return (
            f'no verdict: {seeds} paired seeds, a mark needs at least '
            f'{fewest_seeds()}'
        )
    fairer = [m for m in ('sp', 'eo') if significant(diffs[m])]
    lower = [m for m in fairer if diffs[m].mean < 0]
    higher = [m for m in fairer if diffs[m].mean > 0]
    if lower and higher:
        fairness = 'mixed: ' + _listed(diffs, lower + higher)
    elif lower:
        fairness = 'fairer: ' + _listed(diffs, lower)
    elif higher:
        fairness = 'less fair: ' + _listed(diffs, higher)
    else:
        fairness = 'no significant change in either gap'
    costs = [m for m in ('acc', 'auc') if significant(diffs[m])]
    if costs:
        utility = _listed(diffs, costs)
    else:
        utility = 'no significant change in accuracy or AUC'
    return f'{fairness}; {utility}'


def _listed(diffs: dict[str, PairedDifference], metrics: list[str]) -> str:
    return ', '.join(
        f'{METRICS[m]} {diffs[m].mean:+.1f} '
        f'[{diffs[m].low:+.1f}, {diffs[m].high:+.1f}]'
        for m in metrics
    )


def verdict_table(protocol: Protocol, store: RunStore, chosen: Chosen) -> str:
    r"""The verdict of every comparison (see :func:`comparisons`) at the
    protocol's :func:`primary_rule`, per dataset."""
    rule = primary_rule(protocol)
    lines = [
        f'### Verdicts, epoch by {reported_rules(protocol)[rule]}',
        '',
        'Differences in points (compared minus reference), 95 % interval; '
        'only marked differences count.',
        '',
        '| dataset | compared - reference | verdict |',
        '|---|---|---|',
    ]
    for dataset in protocol.datasets:
        for pair in comparisons(protocol):
            diffs = paired_differences(
                protocol, store, chosen, dataset, pair, rule
            )
            lines.append(
                f'| {dataset} | {pair[1]} - {pair[0]} | {verdict(diffs)} |'
            )
    return '\n'.join(lines) + '\n'


def _head(title: str, column: str) -> list[str]:
    return [
        f'### {title}',
        '',
        f'| dataset | {column} | seeds | '
        + ' | '.join(METRICS.values())
        + ' |',
        '|---|---|---|' + '---|' * len(METRICS),
    ]


def format_mean_std(values: list[float]) -> str:
    r"""Mean ± sample standard deviation to 2 decimals, NaN left out;
    :obj:`n/a` without values."""
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return 'n/a'
    if len(values) == 1:
        return f'{values[0]:.2f}'
    return f'{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}'


def format_difference(diff: PairedDifference) -> str:
    r"""A paired difference as :obj:`mean [low, high]`, with :obj:`*` where
    the interval excludes 0 and the exact test gives
    :math:`p <` :obj:`SIGNIFICANCE`."""
    if math.isnan(diff.mean):
        return 'n/a'
    if math.isnan(diff.low):
        return f'{diff.mean:+.2f}'
    mark = '*' if significant(diff) else ''
    return f'{diff.mean:+.2f} [{diff.low:+.2f}, {diff.high:+.2f}]{mark}'


def relevant_settings(method: str, config: dict[str, Any]) -> dict[str, Any]:
    r"""The settings of :obj:`config` that :obj:`method` uses: BeMap's
    :obj:`beta` and :obj:`min_keep` for BeMap only, :obj:`delta` for
    FairDrop only."""
    unused = set()
    if not method.startswith('BeMap'):
        unused |= {'beta', 'min_keep'}
    if method != 'FairDrop':
        unused.add('delta')
    return {k: v for k, v in config.items() if k not in unused}


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
        'reference': "the reference loaders' fixed split",
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
    'without a real effect is marked by chance. The rule of the verdicts '
    f'({RULES[PRIMARY_RULE]}) and the comparisons were fixed before any '
    'result of BeMap or FairDrop was seen; read the other rule and single '
    'marks with care.'
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
