r"""What the command line shows before anything heavy is imported (no
torch, so that :obj:`pyg-bemap --help` answers at once): the datasets, the
protocols, the short names of the BeMap methods (from
:mod:`~pyg_bemap_lab.methods`), BeMap's default settings and the defaults
of training and of the split. Tests check each against the module that
uses it."""

import os
import os.path as osp

from pyg_bemap_lab.methods import METHOD_ALIASES

#: The named datasets (see :obj:`pyg_bemap.datasets.SPECS`).
DATASETS = ('credit', 'german', 'nba', 'pokec_n', 'pokec_z', 'recidivism')

#: Other names of datasets (see :obj:`pyg_bemap.datasets.ALIASES`).
DATASET_ALIASES = {'bail': 'recidivism'}

#: The protocols of :obj:`pyg-bemap reproduce` (see
#: :obj:`~pyg_bemap_lab.running.protocols.PROTOCOLS`).
PROTOCOL_NAMES = (
    'confirmatory',
    'default',
    'exploratory-budgets',
    'exploratory-gap',
    'quick',
    'reference',
)

#: BeMap's default :math:`\beta` and :obj:`min_keep` (see
#: :class:`pyg_bemap.SamplerSettings`), the lab's everywhere.
BEMAP_BETA = 0.25
BEMAP_MIN_KEEP = 4

#: The model behind every result, as the commands' help states it (see
#: :class:`~pyg_bemap_lab.running.models.NodeClassifier`).
MODEL_DESCRIPTION = (
    'The model: two message-passing layers and one output logit (linear '
    'layers for the MLP), dropout on the hidden layer and, at a rate of '
    'its own (input_dropout), on the input features; both rates are '
    'chosen on validation with the learning rate, the width and the '
    'feature scaling.'
)

#: How tables and plots write each knob of a run configuration, BeMap's
#: (:class:`pyg_bemap.SamplerSettings`, with :math:`\beta`, :math:`m`,
#: :math:`L` and the balance score's :math:`\delta`) and FairDrop's drop
#: rate, each under its own name.
KNOB_LABELS = {
    'beta': 'beta',
    'min_keep': 'm',
    'num_hops': 'L',
    'balance_delta': 'balance delta',
    'fairdrop_delta': 'FairDrop delta',
}

#: The most epochs, and the patience, of :obj:`pyg-bemap train`.
TRAIN_EPOCHS = 200
TRAIN_PATIENCE = 100

#: The shares of the labelled nodes in the training and validation splits
#: of a graph without masks; the rest is the test split.
DEFAULT_FRACTIONS = (0.5, 0.25)


def leaves_a_test_split(train: float, val: float) -> bool:
    r"""Whether training and validation shares are positive and leave a
    test split (the one rule of the command line and the Python API)."""
    return 0 < train and 0 < val and train + val < 1


def bemap_method(name: str) -> str:
    r"""The BeMap method a short name (a key of :obj:`METHOD_ALIASES`) or a
    full name stands for."""
    method = METHOD_ALIASES.get(name, name)
    if method not in METHOD_ALIASES.values():
        raise ValueError(
            f'unknown method {name!r}; choose from '
            + ', '.join(METHOD_ALIASES)
        )
    return method


def default_data_root() -> str:
    r"""Where datasets go unless told otherwise, as
    :func:`pyg_bemap.datasets.default_root` says: :obj:`$PYG_BEMAP_DATA`,
    or :obj:`~/.cache/pyg_bemap`."""
    return os.environ.get(
        'PYG_BEMAP_DATA', osp.join(osp.expanduser('~'), '.cache', 'pyg_bemap')
    )


def default_results() -> str:
    r"""Where :obj:`reproduce` writes unless told otherwise:
    :obj:`$PYG_BEMAP_RESULTS`, or :obj:`~/pyg-bemap-results`."""
    return os.environ.get(
        'PYG_BEMAP_RESULTS',
        osp.join(osp.expanduser('~'), 'pyg-bemap-results'),
    )
