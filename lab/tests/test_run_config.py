import json

import numpy as np
import pytest

from pyg_bemap import SamplerSettings
from pyg_bemap_lab.run_config import REQUIRED, SAMPLER_NAMES, RunConfig


def test_a_flat_configuration_and_back():
    values = dict(
        lr=0.01,
        hidden=16,
        dropout=0.0,
        input_dropout=0.0,
        beta=0.5,
        scale=True,
    )
    config = RunConfig.from_dict(values)
    assert (config.lr, config.hidden, config.dropout) == (0.01, 16, 0.0)
    assert config.sampler.beta == 0.5
    assert config.sampler.min_keep == RunConfig().sampler.min_keep
    assert config.sampler_settings('degree') == SamplerSettings(
        beta=0.5, min_keep=4, strategy='degree'
    )
    flat = config.as_dict()
    assert set(flat) == {
        *REQUIRED,
        'weight_decay',
        'scale',
        'head',
        'fairdrop_delta',
        *SAMPLER_NAMES,
    }
    assert RunConfig.from_dict(flat) == config
    assert json.loads(json.dumps(flat)) == flat  # what a stored run keeps


def test_a_configuration_is_frozen_and_hashable():
    config = RunConfig()
    with pytest.raises(AttributeError):
        config.lr = 0.1  # type: ignore[misc]
    assert len({config, RunConfig(), config.replace(hidden=16)}) == 2


def test_the_two_deltas_are_apart():
    config = RunConfig().replace(balance_delta=0.5, fairdrop_delta=0.3)
    assert config.sampler.delta == 0.5 and config.fairdrop_delta == 0.3
    assert config.as_dict()['balance_delta'] == 0.5


def test_spellings_of_one_number_are_one_configuration():
    a = RunConfig.from_dict(
        dict(lr=0.01, hidden=16, dropout=0, input_dropout=0, beta=1)
    )
    b = RunConfig.from_dict(
        dict(lr=0.01, hidden=16.0, dropout=0.0, input_dropout=0.0, beta=1.0)
    )
    assert a == b
    assert json.dumps(a.as_dict()) == json.dumps(b.as_dict())


def test_a_stored_configuration_names_the_required_settings():
    with pytest.raises(ValueError, match='needs input_dropout'):
        RunConfig.from_dict(dict(lr=0.01, hidden=16, dropout=0.5))


@pytest.mark.parametrize(
    'change, error, match',
    [
        (dict(delta=0.1), ValueError, 'unknown run setting.*delta'),
        (dict(hidden='16'), TypeError, 'hidden must be of type int'),
        (dict(scale=1), TypeError, 'scale must be of type bool'),
        (dict(lr=True), TypeError, 'lr must be of type float'),
        (dict(beta=2.0), ValueError, 'beta'),
        # the held-out cases of issue Evaluation IV
        (dict(dropout=1.5), ValueError, r'dropout must be a number in \[0'),
        (dict(hidden=0), ValueError, 'hidden must be an integer >= 1'),
        (dict(lr=0), ValueError, 'lr must be a number > 0'),
        (dict(hidden=16.7), ValueError, 'hidden must be a whole number'),
        (dict(input_dropout=1), ValueError, r'input_dropout.*1\.0\)'),
        (dict(weight_decay=-1e-5), ValueError, 'weight_decay must be'),
        (dict(lr=float('nan')), ValueError, 'lr must be'),
        (dict(fairdrop_delta=1.5), ValueError, 'fairdrop_delta must be'),
    ],
)
def test_bad_settings_are_refused(change, error, match):
    with pytest.raises(error, match=match):
        RunConfig().replace(**change)


def test_numpy_numbers_are_taken_as_python_numbers():
    config = RunConfig(hidden=np.int64(16), lr=np.float64(0.01))
    assert config.hidden == 16 and type(config.hidden) is int
    assert config.lr == 0.01 and type(config.lr) is float
    assert RunConfig(scale=np.bool_(False)).scale is False
