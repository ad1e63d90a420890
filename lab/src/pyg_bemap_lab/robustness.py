r"""How much the headline, BeMap(sym) against GCN, rests on choices that
are not BeMap: the input features' dropout and the epoch-selection rule.

The study is the default protocol's headline pair (the same training,
tuning grid, split and stored runs), trained on more paired seeds and with
the input dropout both off and on at GCN's otherwise chosen
hyper-parameters; every run records the test report at each candidate
rule's epoch, so one set of runs answers every combination."""

import dataclasses
from typing import Any

from pyg_bemap_lab.protocols import PROTOCOLS, Protocol

#: The pair whose difference is the headline.
HEADLINE = ('GCN', 'BeMap(sym)')

#: The input dropout rates compared.
INPUT_DROPOUTS = (0.0, 0.5)

#: The paired seeds of the study, and the smaller count shown beside it.
SEEDS = (10, 30)

#: The candidate selection rules (see :mod:`~pyg_bemap_lab.selection`).
CANDIDATE_RULES = ('val-loss', 'val-loss-learned', 'val-loss-late', 'val-auc')


def robustness_protocol(seeds: int = max(SEEDS)) -> Protocol:
    r"""The default protocol restricted to :obj:`HEADLINE` on :obj:`seeds`
    paired seeds, with both :obj:`INPUT_DROPOUTS` at GCN's chosen
    hyper-parameters. Its name stays :obj:`'default'`: its runs are the
    default protocol's runs, and the two share them in one store."""
    arms = tuple({'input_dropout': rate} for rate in INPUT_DROPOUTS)
    return dataclasses.replace(
        PROTOCOLS['default'],
        description=f'{HEADLINE[1]} against {HEADLINE[0]}, {seeds} paired '
        'seeds, input dropout off and on',
        methods=HEADLINE,
        seeds=tuple(range(seeds)),
        sweep={method: arms for method in HEADLINE},
        sweep_seeds=tuple(range(seeds)),
    )


def arm(
    chosen: dict[tuple[str, str], dict[str, Any]], rate: float
) -> dict[tuple[str, str], dict[str, Any]]:
    r"""The chosen configurations with the input dropout set to
    :obj:`rate`."""
    return {key: {**c, 'input_dropout': rate} for key, c in chosen.items()}
