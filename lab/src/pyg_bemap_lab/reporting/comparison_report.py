r"""What a paired comparison of a model and its BeMap version shows: its
runs, one record per seed and model, the paired differences with and
without degenerate runs, the verdict, and the summary for an 80-column
terminal or as Markdown."""

import math
import re
import textwrap
from dataclasses import dataclass
from typing import Any

from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.reporting.report import Report, Writer, text_file
from pyg_bemap_lab.reporting.statistics import PairedDifference
from pyg_bemap_lab.reporting.tables import (
    full_verdict,
    paired_differences,
    seed_values,
    unreported_seeds,
)
from pyg_bemap_lab.reporting.verdicts import (
    INTERVALS,
    METRICS,
    format_difference,
    format_mean_std,
)
from pyg_bemap_lab.run_config import Chosen
from pyg_bemap_lab.running.degenerate import KINDS, degenerate
from pyg_bemap_lab.running.planning import chosen_runs
from pyg_bemap_lab.running.protocols import Protocol
from pyg_bemap_lab.selection import (
    DEFAULT_RULE,
    RULES,
    STORED_RULES,
    check_rule,
)

#: The names of a comparison record's test metrics, by stored name.
RECORD_NAMES = {
    'acc': 'acc',
    'auc': 'auc',
    'sp': 'delta_sp',
    'eo': 'delta_eo',
    'prob': 'delta_prob',
}


def comparison_runs(
    protocol: Protocol, store: RunStore, chosen: Chosen, rule: str
) -> list[dict[str, Any]]:
    r"""One record per seed and model: :obj:`seed`, :obj:`model`, the test
    :obj:`acc`, :obj:`auc`, :obj:`delta_sp`, :obj:`delta_eo` and
    :obj:`delta_prob` (NaN for runs stored before it was measured) at the
    epoch :obj:`rule` picked, the validation metrics of that epoch
    (:obj:`val_acc`, :obj:`val_auc`, :obj:`val_delta_sp`,
    :obj:`val_delta_eo`, :obj:`val_delta_prob`), the :obj:`epoch`
    (0-based),
    and :obj:`degenerate` (:obj:`None`, or why the run is degenerate, see
    :mod:`~pyg_bemap_lab.running.degenerate`). Runs where the rule picked
    no epoch are left out."""
    (dataset,) = protocol.datasets
    records = []
    for model in protocol.methods:
        for run in chosen_runs(protocol, store, chosen, dataset, model):
            picked = run['test'].get(rule)
            if picked is None:
                continue
            epoch = picked['epoch']
            record: dict[str, Any] = dict(seed=run['seed'], model=model)
            curve = run['curve']
            for stored, name in RECORD_NAMES.items():
                record[name] = picked.get(stored, math.nan)
                record[f'val_{name}'] = (
                    curve[stored][epoch] if stored in curve else math.nan
                )
            record.update(epoch=epoch, degenerate=degenerate(run, rule))
            records.append(record)
    order = protocol.methods.index
    return sorted(records, key=lambda r: (r['seed'], order(r['model'])))


def degenerate_seeds(runs: list[dict[str, Any]]) -> dict[str, list[int]]:
    r"""Model -> the seeds of its degenerate runs, among :obj:`runs` (see
    :func:`comparison_runs`)."""
    found: dict[str, list[int]] = {}
    for run in runs:
        if run['degenerate']:
            found.setdefault(run['model'], []).append(run['seed'])
    return found


def comparison_verdict(
    protocol: Protocol, store: RunStore, chosen: Chosen, rule: str
) -> str:
    r"""The verdict over every paired seed and, if some hold a degenerate
    run, how many and the verdict without them (see
    :func:`~pyg_bemap_lab.reporting.tables.full_verdict`)."""
    (dataset,) = protocol.datasets
    backbone, method = protocol.methods
    return full_verdict(
        protocol, store, chosen, dataset, (backbone, method), rule
    )


def comparison_summary(
    protocol: Protocol,
    store: RunStore,
    chosen: Chosen,
    width: int = 80,
    rule: str = DEFAULT_RULE,
) -> str:
    r"""The comparison as plain text at most :obj:`width` columns wide: the
    test metrics of both models at the epoch :obj:`rule` picks (a rule of
    :obj:`~pyg_bemap_lab.selection.STORED_RULES`), their paired
    differences with 95 % percentile-bootstrap intervals (also without
    degenerate runs, if there are any), what those intervals and marks
    are, and a one-line verdict counting marked differences
    only."""
    check_rule(rule, STORED_RULES)
    (dataset,) = protocol.datasets
    backbone, method = protocol.methods
    pair = (backbone, method)
    diffs = paired_differences(protocol, store, chosen, dataset, pair, rule)
    config = ', '.join(
        f'{k}={getattr(chosen[dataset, backbone], k)}'
        for k in ('lr', 'hidden', 'dropout', 'input_dropout', 'scale')
    )
    same = 'split' if method == 'BeMap(row)' else 'split and initial weights'
    intro = (
        f'{method} against {backbone} on {dataset}: '
        f'{diffs["acc"].seeds} paired seeds (same {same}), {config}, epoch '
        f'of the {RULES[rule]}; test metrics, mean ± standard deviation '
        'over the seeds.'
    )
    lines = textwrap.wrap(intro, width) + ['']
    lines.append(_row('test (%)', METRICS.values()))
    values = _paired_values(protocol, store, chosen, rule)
    for name in pair:
        cells = [
            format_mean_std([100 * v[m] for v in values[name]])
            for m in METRICS
        ]
        lines.append(_row(name, cells))
    lines += ['', f'{method} - {backbone}, points, 95 % interval:']
    lines += _difference_lines(diffs)
    left = {
        m: unreported_seeds(protocol, store, chosen, dataset, m, rule)
        for m in pair
    }
    left = {m: seeds for m, seeds in left.items() if seeds}
    if left:
        title = 'No epoch to report, left out'
        lines += ['', *_seed_lines(title, left, width)]
    found = degenerate_seeds(comparison_runs(protocol, store, chosen, rule))
    found = {m: found[m] for m in protocol.methods if m in found}
    if found:
        kinds = '; '.join(KINDS.values())
        lines += ['', *_seed_lines(f'Degenerate runs ({kinds})', found, width)]
        healthy = paired_differences(
            protocol, store, chosen, dataset, pair, rule, healthy_only=True
        )
        lines.append(f'Without them ({healthy["acc"].seeds} paired seeds):')
        lines += _difference_lines(healthy)
    lines += [
        '',
        *textwrap.wrap(
            f'Intervals: {INTERVALS}; lower gaps are fairer.',
            width,
        ),
        '',
        *textwrap.wrap(
            f'Verdict: {comparison_verdict(protocol, store, chosen, rule)}.',
            width,
        ),
    ]
    return '\n'.join(lines)


def comparison_markdown(
    protocol: Protocol, store: RunStore, chosen: Chosen, rule: str
) -> str:
    r"""The paired table as Markdown: per metric, the mean ± standard
    deviation of both models and their paired difference, over every
    paired seed and without degenerate runs."""
    (dataset,) = protocol.datasets
    backbone, method = protocol.methods
    pair = (backbone, method)
    every = paired_differences(protocol, store, chosen, dataset, pair, rule)
    healthy = paired_differences(
        protocol, store, chosen, dataset, pair, rule, healthy_only=True
    )
    values = _paired_values(protocol, store, chosen, rule)
    lines = [
        f'{method} against {backbone} on {dataset}, test metrics (%), '
        f'epoch of the {RULES[rule]}.',
        '',
        f'| metric | {backbone} | {method} | {method} - {backbone} | '
        'without degenerate runs |',
        '|---|---|---|---|---|',
    ]
    for metric, title in METRICS.items():
        means = [
            format_mean_std([100 * v[metric] for v in values[n]]) for n in pair
        ]
        lines.append(
            f'| {title} | {means[0]} | {means[1]} | '
            f'{format_difference(every[metric])} | '
            f'{format_difference(healthy[metric])} |'
        )
    verdict_text = comparison_verdict(protocol, store, chosen, rule)
    return '\n'.join([*lines, '', f'Verdict: {verdict_text}.', ''])


def _paired_values(
    protocol: Protocol, store: RunStore, chosen: Chosen, rule: str
) -> dict[str, list[dict[str, float]]]:
    r"""Each model's test metrics on the paired seeds (those where both
    have a report), the seeds the differences are over."""
    (dataset,) = protocol.datasets
    values = {
        name: seed_values(protocol, store, chosen, dataset, name, rule)
        for name in protocol.methods
    }
    paired = set.intersection(*(set(v) for v in values.values()))
    return {
        name: [v for seed, v in by_seed.items() if seed in paired]
        for name, by_seed in values.items()
    }


def _difference_lines(diffs: dict[str, PairedDifference]) -> list[str]:
    return [
        f'  {title:<11}{format_difference(diffs[metric])}'
        for metric, title in METRICS.items()
    ]


def _seed_lines(
    title: str, found: dict[str, list[int]], width: int
) -> list[str]:
    runs = '; '.join(
        f'{model} seed{"s" if len(seeds) > 1 else ""} '
        + ', '.join(map(str, seeds))
        for model, seeds in found.items()
    )
    return textwrap.wrap(f'{title}: {runs}.', width)


def _row(name: str, cells: Any) -> str:
    # 80 columns: a name of up to 10 characters and five cells such as
    # '16.12 ± 11.13'
    return f'{name:<10} ' + ' '.join(f'{c:>13}' for c in cells)


@dataclass
class ComparisonResult(Report):
    r"""A finished paired comparison (see
    :func:`~pyg_bemap_lab.comparison.compare`): its runs, verdict and
    summary, and the file :obj:`comparison_GRAPH.md`
    (:meth:`to_markdown`).

    Attributes:
        rule (str): The selection rule of the reported epoch.
    """

    rule: str = DEFAULT_RULE

    @property
    def runs(self) -> list[dict[str, Any]]:
        r"""One record per seed and model (see
        :func:`~pyg_bemap_lab.reporting.comparison_report.comparison_runs`)."""
        return comparison_runs(
            self.protocol, self.store, self.chosen, self.rule
        )

    @property
    def verdict(self) -> str:
        r"""The verdict, with the number of seeds that hold a degenerate
        run and the verdict without them."""
        return comparison_verdict(
            self.protocol, self.store, self.chosen, self.rule
        )

    def to_markdown(self) -> str:
        r"""The paired table as Markdown."""
        return comparison_markdown(
            self.protocol, self.store, self.chosen, self.rule
        )

    def files(self) -> dict[str, Writer]:
        (graph,) = self.protocol.datasets
        method = re.sub('[^a-z0-9]+', '-', self.protocol.methods[1].lower())
        name = f'comparison_{graph}_{method.strip("-")}.md'  # bemap-sym
        return {name: text_file(self.to_markdown)}

    def __str__(self) -> str:
        return comparison_summary(
            self.protocol, self.store, self.chosen, rule=self.rule
        )
