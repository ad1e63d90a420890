r"""One frozen value holds BeMap's hyper-parameters for every entry point."""

import dataclasses

import pytest
import torch
from torch_geometric.nn import GCNConv
from torch_geometric.nn.models import GCN

from pyg_bemap import (
    BalanceAwareSampling,
    BeMapConv,
    BeMapGCN,
    SamplerSettings,
    balanced_edge_sample,
    to_bemap,
)
from tests.conftest import random_graph


def test_settings_are_frozen_and_checked_once_built():
    settings = SamplerSettings(beta=0.5, min_keep=2, num_hops=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.beta = 0.1  # type: ignore[misc]
    assert settings.draw_key == (0.5, 2, 'balance')
    assert repr(settings) == (
        "SamplerSettings(beta=0.5, min_keep=2, strategy='balance', "
        'num_hops=3, delta=1.0)'
    )


@pytest.mark.parametrize(
    'kwargs, match',
    [
        (dict(beta=1.5), "'beta' must be a number in"),
        (dict(min_keep=-1), "'min_keep' must be an integer"),
        (dict(strategy='random'), "'strategy' must be one of"),
        (dict(num_hops=1.5), "'num_hops' must be an integer"),
        (dict(delta=0), "'delta' must be a finite number above 0"),
    ],
)
def test_bad_settings_are_refused_with_the_field_named(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SamplerSettings(**kwargs)


def test_every_entry_point_takes_the_same_value():
    settings = SamplerSettings(beta=0.5, min_keep=2, num_hops=3, delta=0.5)
    transform = BalanceAwareSampling(settings=settings)
    assert (transform.num_hops, transform.delta) == (3, 0.5)
    data = transform(random_graph(40, 300, 2, 0))
    assert BeMapConv(GCNConv(4, 4), settings=settings).settings is settings
    model = to_bemap(GCN(4, 8, 2, 2), settings=settings)
    assert all(
        m.settings is settings
        for m in model.modules()
        if isinstance(m, BeMapConv)
    )
    assert BeMapGCN(4, 8, 2, settings=settings).convs[0].settings is settings
    by_value = balanced_edge_sample(
        data.edge_index,
        data.s,
        data.bemap_balance,
        settings=settings,
        generator=torch.Generator().manual_seed(1),
    )[1]
    by_keywords = balanced_edge_sample(
        data.edge_index,
        data.s,
        data.bemap_balance,
        beta=0.5,
        min_keep=2,
        generator=torch.Generator().manual_seed(1),
    )[1]
    assert torch.equal(by_value, by_keywords)


def test_keywords_build_the_same_settings():
    conv = BeMapConv(GCNConv(4, 4), beta=0.5, strategy='degree')
    assert conv.settings == SamplerSettings(beta=0.5, strategy='degree')
    assert (conv.beta, conv.min_keep, conv.strategy) == (0.5, 4, 'degree')
    transform = BalanceAwareSampling(num_hops=3)
    assert transform.settings == SamplerSettings(num_hops=3)


@pytest.mark.parametrize(
    'build',
    [
        lambda s: BeMapConv(GCNConv(4, 4), beta=0.5, settings=s),
        lambda s: to_bemap(GCN(4, 8, 2, 2), min_keep=1, settings=s),
        lambda s: BalanceAwareSampling(delta=2.0, settings=s),
    ],
)
def test_settings_and_keywords_together_are_refused(build):
    with pytest.raises(ValueError, match='Pass either settings='):
        build(SamplerSettings())


def test_settings_of_another_type_are_refused():
    with pytest.raises(ValueError, match="'settings' must be a Sampler"):
        BeMapConv(GCNConv(4, 4), settings={'beta': 0.5})  # type: ignore


def test_numpy_scalars_are_accepted_and_stored_as_python_numbers():
    import numpy as np

    settings = SamplerSettings(
        beta=np.float32(0.5), min_keep=np.int64(2), num_hops=np.int8(1),
        delta=np.float64(0.5),
    )  # fmt: skip
    assert settings == SamplerSettings(
        beta=0.5, min_keep=2, num_hops=1, delta=0.5
    )
    assert type(settings.min_keep) is int and type(settings.beta) is float
