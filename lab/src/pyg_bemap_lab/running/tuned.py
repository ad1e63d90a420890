r"""The hyper-parameters that the default protocol chose on validation,
which the comparisons, the sweeps and the confirmatory protocol reuse."""

from typing import Any

#: The hyper-parameters the default protocol chose on validation, per
#: (dataset, backbone), from the runs stored in
#: ``lab/results/evaluation/runs/`` (a test checks them against the
#: stored runs). Every backbone's is chosen on the whole grid, input
#: dropout included.
TUNED: dict[tuple[str, str], dict[str, Any]] = {
    ('nba', 'MLP'): dict(
        lr=1e-2, hidden=128, dropout=0.0, input_dropout=0.5, scale=True
    ),
    ('german', 'MLP'): dict(
        lr=1e-2, hidden=16, dropout=0.5, input_dropout=0.0, scale=True
    ),
    ('recidivism', 'MLP'): dict(
        lr=1e-2, hidden=128, dropout=0.0, input_dropout=0.0, scale=False
    ),
    ('credit', 'MLP'): dict(
        lr=1e-3, hidden=128, dropout=0.0, input_dropout=0.0, scale=True
    ),
    ('nba', 'GCN'): dict(
        lr=1e-2, hidden=16, dropout=0.5, input_dropout=0.0, scale=False
    ),
    ('nba', 'SAGE'): dict(
        lr=1e-2, hidden=128, dropout=0.0, input_dropout=0.5, scale=True
    ),
    ('nba', 'GAT'): dict(
        lr=1e-2, hidden=16, dropout=0.0, input_dropout=0.0, scale=True
    ),
    ('german', 'GCN'): dict(
        lr=1e-2, hidden=16, dropout=0.5, input_dropout=0.0, scale=True
    ),
    ('german', 'SAGE'): dict(
        lr=1e-3, hidden=16, dropout=0.5, input_dropout=0.0, scale=True
    ),
    ('german', 'GAT'): dict(
        lr=1e-2, hidden=128, dropout=0.5, input_dropout=0.5, scale=True
    ),
    ('recidivism', 'GCN'): dict(
        lr=1e-2, hidden=128, dropout=0.0, input_dropout=0.0, scale=True
    ),
    ('recidivism', 'SAGE'): dict(
        lr=1e-3, hidden=128, dropout=0.0, input_dropout=0.0, scale=False
    ),
    ('recidivism', 'GAT'): dict(
        lr=1e-2, hidden=16, dropout=0.0, input_dropout=0.0, scale=True
    ),
    ('credit', 'GCN'): dict(
        lr=1e-2, hidden=128, dropout=0.5, input_dropout=0.0, scale=True
    ),
    ('credit', 'SAGE'): dict(
        lr=1e-2, hidden=128, dropout=0.5, input_dropout=0.0, scale=True
    ),
    ('credit', 'GAT'): dict(
        lr=1e-2, hidden=16, dropout=0.0, input_dropout=0.0, scale=True
    ),
}

#: The settings used where no tuned choice exists (the quick protocol's).
UNTUNED = dict(lr=1e-2, hidden=16, dropout=0.5, input_dropout=0.0, scale=True)
