r"""How much the headline, BeMap(sym) against GCN, rests on choices that
are not BeMap: the input features' dropout and the epoch-selection rule.

The study is the default protocol's headline pair (the same training,
tuning grid, split and stored runs), trained on more paired seeds and with
the input dropout both off and on at GCN's otherwise chosen
hyper-parameters; every run records the test report at each candidate
rule's epoch, so one set of runs answers every combination."""

import dataclasses
import functools
import itertools
import math
import statistics
from dataclasses import dataclass
from typing import Any

from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.reporting.figures import save_png
from pyg_bemap_lab.reporting.report import Report, Writer, text_file
from pyg_bemap_lab.reporting.statistics import (
    EXACT_UP_TO,
    RANDOM_FLIPS,
    PairedDifference,
)
from pyg_bemap_lab.reporting.tables import paired_differences, unreported
from pyg_bemap_lab.reporting.verdicts import COVERAGE, format_difference
from pyg_bemap_lab.run_config import Chosen, RunConfig
from pyg_bemap_lab.running.degenerate import KINDS, degenerate, one_class
from pyg_bemap_lab.running.planning import (
    chosen_runs,
    datasets_with_runs,
    missing_runs,
)
from pyg_bemap_lab.running.protocols import PROTOCOLS, Protocol
from pyg_bemap_lab.selection import DEFAULT_RULE, NEAR_CONSTANT

#: The pair whose difference is the headline.
HEADLINE = ('GCN', 'BeMap(sym)')

#: The input dropout rates compared.
INPUT_DROPOUTS = (0.0, 0.5)

#: The paired seeds of the study.
SEEDS = 30

#: The smaller number of seeds shown beside all of them (the default
#: protocol's).
FEWER_SEEDS = 10

#: The candidate selection rules (see :mod:`~pyg_bemap_lab.selection`).
CANDIDATE_RULES = ('val-loss', 'val-loss-learned', 'val-loss-late', 'val-auc')

#: How the default rule is marked in the tables.
DEFAULT_MARK = ' (default)'


def robustness_protocol(
    seeds: int = SEEDS, base: Protocol = PROTOCOLS['default']
) -> Protocol:
    r"""The :obj:`base` protocol restricted to :obj:`HEADLINE` on
    :obj:`seeds` paired seeds, with both :obj:`INPUT_DROPOUTS` at GCN's
    chosen hyper-parameters. Its name stays the base's: its runs are the
    base protocol's runs, and the two share them in one store."""
    arms = tuple({'input_dropout': rate} for rate in INPUT_DROPOUTS)
    return dataclasses.replace(
        base,
        description=f'{HEADLINE[1]} against {HEADLINE[0]}, {seeds} paired '
        'seeds, input dropout off and on',
        methods=HEADLINE,
        seeds=tuple(range(seeds)),
        sweep={method: arms for method in HEADLINE},
        sweep_seeds=tuple(range(seeds)),
    )


def arm(chosen: Chosen, rate: float) -> Chosen:
    r"""The chosen configurations with the input dropout set to
    :obj:`rate`."""
    return {key: c.replace(input_dropout=rate) for key, c in chosen.items()}


@dataclass(frozen=True)
class Combination:
    r"""One combination of the study on one dataset: the input dropout
    rate, the selection rule and the number of paired seeds, with the
    paired differences :obj:`HEADLINE[1]` minus :obj:`HEADLINE[0]` (in
    points, per metric of :obj:`~pyg_bemap_lab.reporting.verdicts.METRICS`)
    and the number of degenerate runs of each model."""

    input_dropout: float
    rule: str
    seeds: int
    diffs: dict[str, PairedDifference]
    degenerate: tuple[int, int]


def seed_counts(protocol: Protocol) -> tuple[int, ...]:
    r"""The numbers of paired seeds shown: :obj:`FEWER_SEEDS` (if fewer
    than the study's) and all of the study's."""
    seeds = len(protocol.seeds)
    return (FEWER_SEEDS, seeds) if seeds > FEWER_SEEDS else (seeds,)


def stored_seed_counts(
    protocol: Protocol, store: RunStore, chosen: Chosen, dataset: str
) -> tuple[int, ...]:
    r"""The :func:`seed_counts` shown on :obj:`dataset`: all of the
    study's seeds only once both models have a run on a seed beyond the
    first :obj:`FEWER_SEEDS` (else its rows would repeat the first ones')."""
    counts = seed_counts(protocol)
    later = dataclasses.replace(protocol, seeds=protocol.seeds[counts[0] :])
    for rate in INPUT_DROPOUTS:
        gcn, bemap = (
            chosen_runs(later, store, arm(chosen, rate), dataset, m)
            for m in HEADLINE
        )
        if {r['seed'] for r in gcn} & {r['seed'] for r in bemap}:
            return counts
    return counts[:1]


def combinations(
    protocol: Protocol, store: RunStore, chosen: Chosen, dataset: str
) -> list[Combination]:
    r"""Every combination of :obj:`INPUT_DROPOUTS`, :obj:`CANDIDATE_RULES`
    and :func:`stored_seed_counts` on :obj:`dataset`, from the stored runs
    of the study :obj:`protocol`."""
    found = []
    for rate, rule, seeds in itertools.product(
        INPUT_DROPOUTS,
        CANDIDATE_RULES,
        stored_seed_counts(protocol, store, chosen, dataset),
    ):
        first = dataclasses.replace(protocol, seeds=protocol.seeds[:seeds])
        configs = arm(chosen, rate)
        diffs = paired_differences(
            first, store, configs, dataset, HEADLINE, rule
        )
        gcn, bemap = (
            sum(
                bool(degenerate(run, rule))
                for run in chosen_runs(first, store, configs, dataset, m)
            )
            for m in HEADLINE
        )
        found.append(Combination(rate, rule, seeds, diffs, (gcn, bemap)))
    return found


@dataclass(frozen=True)
class RuleRecord:
    r"""What a selection rule did on one dataset, over the runs of both
    models and both input dropout rates at the most seeds.

    Args:
        rule (str): The rule.
        runs (int): The runs read.
        unpicked (int): The runs in which the rule picked no epoch (under
            :obj:`'val-loss-learned'`: no epoch learned anything on the
            validation split), left out of every comparison.
        degenerate (dict): Kind
            (:obj:`~pyg_bemap_lab.running.degenerate.KINDS`) -> the runs
            whose picked epoch is degenerate so.
        auc_sd (float): The standard deviation of the test AUC across
            seeds (points), averaged over the four model and dropout arms.
        val_one_class (int): The runs whose picked epoch predicts one class
            for all but fewer than
            :obj:`~pyg_bemap_lab.selection.NEAR_CONSTANT` of the
            validation nodes (:obj:`degenerate`'s first two kinds, on the
            validation split).
        val_auc_sd (float): :obj:`auc_sd` of the validation AUC.
        agreement (float): The share of runs in which another candidate
            rule picks the same epoch, averaged over the other rules.

    The degenerate kinds and :obj:`auc_sd` are test-split diagnostics;
    :obj:`val_one_class` and :obj:`val_auc_sd` ask the same of the
    validation split, which is what a choice of rule may rest on.
    """

    rule: str
    runs: int
    unpicked: int
    degenerate: dict[str, int]
    auc_sd: float
    val_one_class: int
    val_auc_sd: float
    agreement: float


def rule_records(
    protocol: Protocol, store: RunStore, chosen: Chosen, dataset: str
) -> list[RuleRecord]:
    r"""One :class:`RuleRecord` per rule of :obj:`CANDIDATE_RULES` on
    :obj:`dataset`, from the stored runs of the study :obj:`protocol`."""
    arms = [
        chosen_runs(protocol, store, arm(chosen, rate), dataset, method)
        for rate in INPUT_DROPOUTS
        for method in HEADLINE
    ]
    runs = [run for group in arms for run in group]
    records = []
    for rule in CANDIDATE_RULES:
        kinds = [degenerate(run, rule) for run in runs]
        sds = [
            statistics.stdev(aucs)
            for group in arms
            if len(aucs := _aucs(group, rule)) > 1
        ]
        validation = [
            [v for run in group if (v := _validation(run, rule))]
            for group in arms
        ]
        val_sds = [
            statistics.stdev(100 * auc for auc, _ in group)
            for group in validation
            if len(group) > 1
        ]
        val_shares = [share for group in validation for _, share in group]
        others = [r for r in CANDIDATE_RULES if r != rule]
        same = [
            statistics.mean(
                _epoch(run, rule) == _epoch(run, o) for run in runs
            )
            for o in others
        ]
        records.append(
            RuleRecord(
                rule=rule,
                runs=len(runs),
                unpicked=sum(unreported(run, rule) for run in runs),
                degenerate={k: kinds.count(k) for k in KINDS},
                auc_sd=statistics.mean(sds) if sds else math.nan,
                val_one_class=sum(map(one_class, val_shares)),
                val_auc_sd=statistics.mean(val_sds) if val_sds else math.nan,
                agreement=statistics.mean(same) if runs else math.nan,
            )
        )
    return records


def _aucs(runs: list[dict[str, Any]], rule: str) -> list[float]:
    return [
        100 * run['test'][rule]['auc']
        for run in runs
        if run['test'].get(rule) is not None
        and not math.isnan(run['test'][rule]['auc'])
    ]


def _validation(run: dict[str, Any], rule: str) -> tuple[float, float] | None:
    r"""The validation AUC and share of positive predictions at the epoch
    :obj:`rule` picked, where the run picked one and records both."""
    epoch = _epoch(run, rule)
    curve = run['curve']
    if epoch is None or 'pos' not in curve or math.isnan(curve['auc'][epoch]):
        return None
    return curve['auc'][epoch], curve['pos'][epoch]


def _epoch(run: dict[str, Any], rule: str) -> int | None:
    picked = run['test'].get(rule)
    return None if picked is None else picked['epoch']


@dataclass(frozen=True)
class DatasetStudy:
    r"""The study on one dataset: GCN's chosen configuration, every
    :class:`Combination` and every :class:`RuleRecord`."""

    dataset: str
    config: RunConfig
    combinations: list[Combination]
    records: list[RuleRecord]


def dataset_studies(
    protocol: Protocol, store: RunStore, chosen: Chosen
) -> list[DatasetStudy]:
    r"""One :class:`DatasetStudy` per dataset with stored runs of the
    study :obj:`protocol`."""
    return [
        DatasetStudy(
            dataset=dataset,
            config=chosen[dataset, HEADLINE[0]],
            combinations=combinations(protocol, store, chosen, dataset),
            records=rule_records(protocol, store, chosen, dataset),
        )
        for dataset in datasets_with_runs(protocol, store)
    ]


def robustness_report(
    protocol: Protocol, store: RunStore, chosen: Chosen
) -> str:
    r"""Markdown: per dataset, the paired differences of every combination
    (:func:`combinations`) and what each candidate rule did
    (:func:`rule_records`), from the stored runs of the study
    :obj:`protocol`."""
    return _markdown(protocol, store, dataset_studies(protocol, store, chosen))


def _markdown(
    protocol: Protocol, store: RunStore, studies: list[DatasetStudy]
) -> str:
    counts = seed_counts(protocol)
    missing = {d: n for d, n in missing_runs(protocol, store).items() if n}
    lines = [
        f'## Robustness of {HEADLINE[1]} - {HEADLINE[0]}',
        '',
        f"The {protocol.name!r} protocol's runs of the pair (its tuning "
        'grid, split, early stopping and stored runs), with the input '
        "features' dropout off and on at GCN's otherwise chosen "
        'hyper-parameters (the rate chosen on validation is marked *), '
        'under each candidate selection rule (the default one marked so), '
        f'on the first {counts[0]} and all '
        f'{counts[-1]} paired seeds. Differences in points, {COVERAGE}; '
        'a * after an interval marks a difference whose '
        'interval excludes 0 and whose paired sign-flip test gives p < '
        f'0.05 (exact up to {EXACT_UP_TO} seeds; beyond, '
        f'{RANDOM_FLIPS:,} seeded random flips). '
        'Degenerate runs: '
        + '; '.join(f'{k}: {v}' for k, v in KINDS.items())
        + '. No epoch: runs in which the rule picked none (under '
        'val-loss-learned, no epoch learned anything on the validation '
        'split), left out of the differences. The degenerate kinds and the '
        'AUC sd (across seeds) are test-split diagnostics; val. one-class '
        '(one class predicted for all but fewer than '
        f'{NEAR_CONSTANT:.0%} of the validation nodes) and val. AUC sd ask '
        'the same of the validation split.',
        '',
    ]
    if missing:
        still = ', '.join(f'{d} {n}' for d, n in missing.items())
        lines += [f'**Incomplete**: runs still missing ({still}).', '']
    for study in studies:
        lines += _dataset_section(study)
    return '\n'.join(lines)


def _rule_label(rule: str) -> str:
    return rule + (DEFAULT_MARK if rule == DEFAULT_RULE else '')


def _dataset_section(study: DatasetStudy) -> list[str]:
    config = study.config
    shown = ', '.join(
        f'{k}={getattr(config, k)}'
        for k in ('lr', 'hidden', 'dropout', 'scale')
    )
    lines = [
        f'### {study.dataset}',
        '',
        f'GCN chosen on validation: {shown}, input_dropout='
        f'{config.input_dropout}.',
        '',
        '| input dropout | rule | seeds | delta_sp | delta_eo | delta_prob '
        '| AUC | degenerate (GCN, BeMap) |',
        '|---|---|---|---|---|---|---|---|',
    ]
    for c in study.combinations:
        mark = ' *' if c.input_dropout == config.input_dropout else ''
        cells = [
            format_difference(c.diffs[m]) for m in ('sp', 'eo', 'prob', 'auc')
        ]
        lines.append(
            f'| {c.input_dropout}{mark} | {_rule_label(c.rule)} | '
            f'{c.diffs["sp"].seeds} of {c.seeds} | '
            + ' | '.join(cells)
            + f' | {c.degenerate[0]}, {c.degenerate[1]} |'
        )
    lines += [
        '',
        '| rule | runs | no epoch | '
        + ' | '.join(KINDS)
        + ' | AUC sd | val. one-class | val. AUC sd | agreement |',
        '|---|---|---|' + '---|' * len(KINDS) + '---|---|---|---|',
    ]
    for r in study.records:
        counts = ' | '.join(str(r.degenerate[k]) for k in KINDS)
        lines.append(
            f'| {_rule_label(r.rule)} | {r.runs} | {r.unpicked} | {counts} '
            f'| {r.auc_sd:.2f} | {r.val_one_class} | {r.val_auc_sd:.2f} '
            f'| {r.agreement:.0%} |'
        )
    return lines + ['']


def plot_robustness(
    protocol: Protocol, store: RunStore, chosen: Chosen, path: str
) -> None:
    r"""Saves a PNG of every combination's paired difference in
    :math:`\Delta_{SP}` (left) and AUC (right) with its 95 % interval, one
    row of panels per dataset with runs; hollow markers: the first
    :obj:`FEWER_SEEDS` seeds, filled: all the study's."""
    _plot(protocol, dataset_studies(protocol, store, chosen), path)


def _plot(protocol: Protocol, studies: list[DatasetStudy], path: str) -> None:
    from matplotlib.figure import Figure  # no pyplot: no global backend

    counts = seed_counts(protocol)
    labels = [
        f'in-drop {rate}, {rule}'
        for rate, rule in itertools.product(INPUT_DROPOUTS, CANDIDATE_RULES)
    ]
    fig = Figure(figsize=(8.5, 2.6 * max(1, len(studies)) + 1.2))
    axes = fig.subplots(max(1, len(studies)), 2, squeeze=False)
    for row, study in enumerate(studies):
        for ax, metric, title in zip(
            axes[row], ('sp', 'auc'), ('delta_sp', 'AUC')
        ):
            for c in study.combinations:
                _draw(ax, c, labels, metric, counts)
            ax.axvline(0, color='grey', lw=1)
            ax.set_yticks(range(len(labels)), labels, fontsize=8)
            ax.set_ylim(len(labels) - 0.5, -0.5)
            ax.grid(axis='x', alpha=0.3)
            ax.set_title(f'{study.dataset}: {title}', fontsize=10)
        axes[row, 1].set_yticklabels([])
    axes[-1, 0].set_xlabel('delta_sp difference (points), < 0 is fairer')
    axes[-1, 1].set_xlabel('AUC difference (points)')
    fig.suptitle(
        f'{HEADLINE[1]} minus {HEADLINE[0]}, paired seeds, 95 % intervals\n'
        f'hollow: the first {counts[0]} seeds, filled: all stored (at most '
        f'{counts[-1]})',
        fontsize=11,
    )
    fig.tight_layout()
    save_png(fig, path, dpi=130)


def _draw(
    ax: Any,
    c: Combination,
    labels: list[str],
    metric: str,
    counts: tuple[int, ...],
) -> None:
    diff = c.diffs[metric]
    if diff.seeds < 2:
        return
    shift = 0.0
    if len(counts) > 1:  # fewer seeds above, all of them below
        shift = 0.15 if c.seeds == counts[-1] else -0.15
    y = labels.index(f'in-drop {c.input_dropout}, {c.rule}') + shift
    ax.errorbar(
        diff.mean,
        y,
        xerr=[[diff.mean - diff.low], [diff.high - diff.mean]],
        fmt='o',
        ms=4,
        color='black',
        mfc='black' if c.seeds == counts[-1] else 'white',
        capsize=2,
    )


@dataclass
class RobustnessReport(Report):
    r"""The robustness study's report: :obj:`robustness.md`
    (:func:`robustness_report`) and :obj:`robustness.png`
    (:func:`plot_robustness`), from one reading of the stored runs."""

    def files(self) -> dict[str, Writer]:
        protocol, store = self.protocol, self.store
        studies = functools.cache(
            lambda: dataset_studies(protocol, store, self.chosen)
        )
        return {
            'robustness.md': text_file(
                lambda: _markdown(protocol, store, studies())
            ),
            'robustness.png': lambda path: _plot(protocol, studies(), path),
        }
