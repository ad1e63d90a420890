r"""The functional API: balanced_edge_sample reuses the carrier's plan."""

import torch

from pyg_bemap import BalanceAwareSampling, balanced_edge_sample, sampler
from tests.conftest import random_graph


def test_functional_api_reuses_the_carried_plan(monkeypatch):
    data = BalanceAwareSampling()(random_graph(60, 600, 2, 0))
    plain = data.edge_index.as_tensor()
    calls = []
    group_edges = sampler.group_edges
    monkeypatch.setattr(
        sampler,
        'group_edges',
        lambda *args: calls.append(1) or group_edges(*args),
    )
    masks = []
    for edges in (data.edge_index, data.edge_index, plain):
        torch.manual_seed(3)
        masks.append(
            balanced_edge_sample(edges, data.s, data.bemap_balance)[1]
        )
    assert len(calls) == 1  # the plain tensor only: stateless
    assert torch.equal(masks[0], masks[1]) and torch.equal(masks[0], masks[2])
    # other scores than the carried ones: planned from scratch
    other = data.bemap_balance.flip(0)
    balanced_edge_sample(data.edge_index, data.s, other)
    assert len(calls) == 2


def test_the_carried_path_checks_nothing_again_but_edits(monkeypatch):
    import pytest

    import pyg_bemap.functional as functional

    data = BalanceAwareSampling()(random_graph(60, 600, 2, 0))
    monkeypatch.setattr(
        functional,
        'graph_groups',
        lambda *args: pytest.fail('checked again'),
    )
    kept, mask = balanced_edge_sample(
        data.edge_index, data.s, data.bemap_balance
    )
    assert type(kept) is torch.Tensor
    assert torch.equal(kept, data.edge_index.as_tensor()[:, mask])
    data.s[0] = 1 - data.s[0]  # the groups the scores describe changed
    with pytest.raises(ValueError, match="'s' was modified in place"):
        balanced_edge_sample(data.edge_index, data.s, data.bemap_balance)


def test_each_strategy_draws_with_its_own_weights_from_the_carrier():
    data = BalanceAwareSampling()(random_graph(60, 600, 2, 0))
    plain = data.edge_index.as_tensor()
    balanced_edge_sample(data.edge_index, data.s, data.bemap_balance)
    for strategy in ('degree', 'uniform', 'balance'):
        masks = [
            balanced_edge_sample(
                edges,
                data.s,
                data.bemap_balance,
                strategy=strategy,
                generator=torch.Generator().manual_seed(5),
            )[1]
            for edges in (data.edge_index, plain)  # carried and stateless
        ]
        assert torch.equal(masks[0], masks[1])
