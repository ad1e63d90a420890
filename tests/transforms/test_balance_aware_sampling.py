import sys

import pytest
import torch
from torch_geometric.data import Data, HeteroData

import pyg_bemap.rules.balance as balance
import pyg_bemap.rules.groups as groups
from pyg_bemap import BalanceAwareSampling, BeMapEdgeIndex, balance_score
from tests.conftest import random_graph
from tests.reference import reference_balance, reference_counts


def test_repr_shows_every_hyper_parameter():
    assert str(BalanceAwareSampling()) == (
        "BalanceAwareSampling(sens_attr='s', num_hops=2, delta=1.0, "
        "num_groups=None, counting='exact', memory_budget=268435456)"
    )
    assert str(BalanceAwareSampling('race', 3, 0.5, 4, 'walks', 1024)) == (
        "BalanceAwareSampling(sens_attr='race', num_hops=3, delta=0.5, "
        "num_groups=4, counting='walks', memory_budget=1024)"
    )


@pytest.mark.parametrize('num_groups', [2, 3])
def test_transform_writes_counts_balance_and_carrier(num_groups):
    data = random_graph(30, 150, num_groups)
    edge_index = data.edge_index.clone()
    out = BalanceAwareSampling()(data)
    expected = reference_counts(edge_index, data.s.tolist(), num_groups, 2)
    assert out.bemap_count.dtype == torch.long
    assert torch.equal(out.bemap_count, expected)
    assert out.bemap_balance.dtype == torch.float
    assert torch.allclose(
        out.bemap_balance.double(), reference_balance(expected, 1.0)
    )
    assert isinstance(out.edge_index, BeMapEdgeIndex)
    assert torch.equal(out.edge_index.as_tensor(), edge_index)
    assert torch.equal(out.edge_index.bemap.balance, out.bemap_balance)
    # the caller's graph is untouched (BaseTransform copies the Data)
    assert type(data.edge_index) is torch.Tensor
    assert 'bemap_count' not in data


def test_transform_options():
    data = random_graph(30, 150, 2)
    out = BalanceAwareSampling(num_hops=1, delta=0.5, num_groups=3)(data)
    expected = reference_counts(data.edge_index, data.s.tolist(), 3, 1)
    assert torch.equal(out.bemap_count, expected)
    assert torch.allclose(out.bemap_balance, balance_score(expected, 0.5))
    walks = BalanceAwareSampling(counting='walks')(data)
    assert bool((walks.bemap_count >= out.bemap_count.new_zeros(1)).all())


def test_transform_uses_the_named_attribute():
    data = random_graph(30, 150, 2)
    data.race = 1 - data.s
    del data.s
    out = BalanceAwareSampling(sens_attr='race')(data)
    assert torch.equal(out.edge_index.bemap.sens, data.race)


@pytest.mark.parametrize(
    'mutate, error, match',
    [
        (lambda d: delattr(d, 's'), ValueError, "'s' is missing"),
        (
            lambda d: setattr(d, 's', d.s[:-1]),
            ValueError,
            'one entry per node',
        ),
        (lambda d: setattr(d, 's', d.s - 1), ValueError, 'negative'),
        (lambda d: setattr(d, 's', d.s * 0.5), ValueError, 'non-integral'),
        (lambda d: delattr(d, 'edge_index'), ValueError, 'ToSparseTensor'),
    ],
)
def test_transform_rejects_bad_graphs(mutate, error, match):
    data = random_graph(30, 150, 2)
    mutate(data)
    with pytest.raises(error, match=match):
        BalanceAwareSampling()(data)


def test_transform_rejects_hetero_graphs():
    with pytest.raises(NotImplementedError, match='to_homogeneous'):
        BalanceAwareSampling()(HeteroData())


@pytest.mark.parametrize(
    'kwargs',
    [
        dict(num_hops=-1),
        dict(delta=0),
        dict(counting='fast'),
        dict(num_groups=0),
    ],
)
def test_transform_rejects_bad_hyper_parameters(kwargs):
    with pytest.raises(ValueError):
        BalanceAwareSampling(**kwargs)


def test_graph_survives_data_operations():
    import copy
    import io

    out = BalanceAwareSampling()(random_graph(30, 150, 2))
    buffer = io.BytesIO()
    torch.save(out, buffer)
    buffer.seek(0)
    for copy_ in (
        out.clone(),
        copy.deepcopy(out),
        out.to('cpu'),
        torch.load(buffer, weights_only=False),
    ):
        assert isinstance(copy_.edge_index, BeMapEdgeIndex)
        assert torch.equal(copy_.edge_index.bemap.balance, out.bemap_balance)
    assert isinstance(
        Data(edge_index=out.edge_index).edge_index, BeMapEdgeIndex
    )


def test_transform_checks_its_input_once(monkeypatch):
    # Every check of the groups, the edges and the scores, wherever a
    # module of the package imported it, is counted.
    calls: dict[str, int] = {}
    checks = {
        'sensitive_groups': groups.sensitive_groups,
        'check_edge_index': groups.check_edge_index,
        'check_balance': balance.check_balance,
    }
    for module in [m for n, m in sys.modules.items() if 'pyg_bemap' in n]:
        for name, check in checks.items():
            if getattr(module, name, None) is check:

                def counted(*args, _name=name, _check=check, **kwargs):
                    calls[_name] = calls.get(_name, 0) + 1
                    return _check(*args, **kwargs)

                monkeypatch.setattr(module, name, counted)
    BalanceAwareSampling()(random_graph(40, 300, 2, 0))
    assert calls == {'sensitive_groups': 1, 'check_edge_index': 1}
