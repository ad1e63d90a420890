r"""The graph's sampler plans once, draws by seed, and hands out samples that
carry their own adjacency."""

import pytest
import torch

from pyg_bemap import BalanceAwareSampling, SamplerSettings
from pyg_bemap.sampler import GraphSampler
from tests.conftest import random_graph


@pytest.fixture
def sampler() -> GraphSampler:
    data = BalanceAwareSampling()(random_graph(50, 500, 2, 0))
    edges = data.edge_index
    return edges.bemap.sampler(edges, edges.as_tensor())


def test_a_seed_decides_the_sample(sampler):
    settings = SamplerSettings()
    first = sampler.draw(settings, 7)
    assert sampler.draw(settings, 7) is first  # the layers of one pass
    other = sampler.draw(settings, 8)
    assert not torch.equal(other.mask, first.mask)
    again = sampler.draw(settings, 7)  # drawn anew, the same neighbourhood
    assert again is not first and torch.equal(again.mask, first.mask)


def test_one_plan_per_draw_key(sampler):
    plan = sampler.plan(SamplerSettings())
    assert sampler.plan(SamplerSettings(num_hops=3, delta=0.5)) is plan
    assert sampler.plan(SamplerSettings(beta=0.5)) is not plan


@pytest.mark.parametrize('dtype', [torch.float32, torch.float64])
def test_a_sample_carries_its_adjacency(sampler, dtype):
    sample = sampler.draw(SamplerSettings(), 3)
    adj = sample.adjacency(dtype)
    assert sample.adjacency(dtype) is adj  # built once per dtype
    x = torch.randn(sampler.sens.numel(), 3, dtype=dtype)
    src, dst = sampler.edge_index[:, sample.mask]
    expected = torch.zeros_like(x).index_add_(0, dst, x[src])
    torch.testing.assert_close(adj @ x, expected)
    assert 'seed=3' in repr(sample)
