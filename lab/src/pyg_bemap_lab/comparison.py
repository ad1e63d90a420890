r"""A paired comparison of a vanilla model and its BeMap version over
several seeds, on one dataset, with the hyper-parameters the default
protocol chose, and its summary for an 80-column terminal."""

import textwrap
from collections.abc import Callable
from typing import Any

from pyg_bemap_lab.execution import run_protocol
from pyg_bemap_lab.models import BACKBONES
from pyg_bemap_lab.protocols import PROTOCOLS, Job, Protocol
from pyg_bemap_lab.selection import (
    DEFAULT_RULE,
    RULES,
    STORED_RULES,
    check_rule,
)
from pyg_bemap_lab.store import RunStore
from pyg_bemap_lab.tables import Chosen, paired_differences, seed_values
from pyg_bemap_lab.verdicts import (
    METRICS,
    format_difference,
    format_mean_std,
    verdict,
)

#: The hyper-parameters the default protocol chose on validation, per
#: (dataset, backbone) (see ``lab/results/evaluation/default.md``;
#: a test checks them against the stored runs).
TUNED: dict[tuple[str, str], dict[str, Any]] = {
    ('nba', 'GCN'): dict(lr=1e-2, hidden=16, dropout=0.5, scale=True),
    ('nba', 'SAGE'): dict(lr=1e-2, hidden=128, dropout=0.5, scale=True),
    ('nba', 'GAT'): dict(lr=1e-2, hidden=16, dropout=0.0, scale=True),
    ('german', 'GCN'): dict(lr=1e-2, hidden=128, dropout=0.5, scale=True),
    ('german', 'SAGE'): dict(lr=1e-2, hidden=16, dropout=0.0, scale=True),
    ('german', 'GAT'): dict(lr=1e-2, hidden=128, dropout=0.5, scale=True),
    ('recidivism', 'GCN'): dict(lr=1e-2, hidden=128, dropout=0.0, scale=True),
    ('recidivism', 'SAGE'): dict(
        lr=1e-3, hidden=128, dropout=0.0, scale=False
    ),
    ('recidivism', 'GAT'): dict(lr=1e-2, hidden=16, dropout=0.0, scale=True),
    ('credit', 'GCN'): dict(lr=1e-2, hidden=16, dropout=0.0, scale=True),
    ('credit', 'SAGE'): dict(lr=1e-3, hidden=128, dropout=0.0, scale=True),
    ('credit', 'GAT'): dict(lr=1e-2, hidden=16, dropout=0.0, scale=True),
}

#: The settings used where no tuned choice exists (the quick protocol's).
UNTUNED = dict(lr=1e-2, hidden=16, dropout=0.5, scale=True)


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
    fixed = {
        k: v
        for k, v in PROTOCOLS['default'].config.items()
        if k in ('weight_decay', 'beta', 'min_keep')
    }
    return Protocol(
        name=f'compare-max{max_epochs}-patience{patience}',
        description=f'{method} against {backbone}, paired seeds',
        datasets=(dataset,),
        methods=(backbone, method),
        seeds=tuple(range(seeds)),
        max_epochs=max_epochs,
        patience=patience,
        config={**fixed, **TUNED.get((dataset, backbone), UNTUNED)},
    )


def run_comparison(
    protocol: Protocol,
    root: str,
    store: RunStore,
    jobs: int = 1,
    on_run: Callable[[Job], None] | None = None,
    rule: str = DEFAULT_RULE,
) -> str:
    r"""Trains what :obj:`store` lacks of a
    :func:`comparison_protocol` and returns :func:`comparison_summary`."""
    chosen = run_protocol(protocol, root, store, jobs, on_run)
    return comparison_summary(protocol, store, chosen, rule=rule)


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
    differences with 95 % intervals, and a one-line verdict counting marked
    differences only."""
    check_rule(rule, STORED_RULES)
    (dataset,) = protocol.datasets
    backbone, method = protocol.methods
    diffs = paired_differences(
        protocol, store, chosen, dataset, (backbone, method), rule
    )
    config = ', '.join(
        f'{k}={protocol.config[k]}'
        for k in ('lr', 'hidden', 'dropout', 'scale')
    )
    intro = (
        f'{method} against {backbone} on {dataset}: '
        f'{diffs["acc"].seeds} paired seeds (same split and initial '
        f'weights), {config}, epoch of the {RULES[rule]}; test metrics, '
        'mean ± standard deviation over the seeds.'
    )
    lines = textwrap.wrap(intro, width) + ['']
    lines.append(f'{"test (%)":<18}' + _cells(METRICS.values()))
    for name in (backbone, method):
        values = seed_values(protocol, store, chosen, dataset, name, rule)
        cells = [
            format_mean_std([100 * v[m] for v in values.values()])
            for m in METRICS
        ]
        lines.append(f'{name:<18}' + _cells(cells))
    lines += ['', f'{method} - {backbone}, points, 95 % interval:']
    for metric, title in METRICS.items():
        lines.append(f'  {title:<10}{format_difference(diffs[metric])}')
    lines += [
        '',
        *textwrap.wrap(
            'A * marks a difference whose interval excludes 0 and whose '
            'exact paired test gives p < 0.05; lower gaps are fairer.',
            width,
        ),
        '',
        *textwrap.wrap(f'Verdict: {verdict(diffs)}.', width),
    ]
    return '\n'.join(lines)


def _cells(cells: Any) -> str:
    return ''.join(f'{c:>15}' for c in cells)
