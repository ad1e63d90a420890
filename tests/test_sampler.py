r"""The graph's sampler plans once and draws by seed; samples and the
sampler carry a memo that routes fill, and the sampler knows nothing of
layouts."""

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
    other = sampler.draw(settings, 8)
    assert not torch.equal(other.mask, first.mask)
    again = sampler.draw(settings, 7)  # drawn anew, the same neighbourhood
    assert again is not first and torch.equal(again.mask, first.mask)
    assert again.memo == {} and 'seed=7' in repr(again)


def test_one_plan_per_draw_key(sampler):
    plan = sampler.plan(SamplerSettings())
    assert sampler.plan(SamplerSettings(num_hops=3, delta=0.5)) is plan
    assert sampler.plan(SamplerSettings(beta=0.5)) is not plan
    for strategy in ('degree', 'uniform'):  # other weights, other plans
        assert sampler.plan(SamplerSettings(strategy=strategy)) is not plan


def test_the_sampler_imports_nothing_of_layouts_or_gcn():
    import ast
    import inspect

    import pyg_bemap.sampler as module

    tree = ast.parse(inspect.getsource(module))
    imported = [
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module
    ]
    allowed = (
        'pyg_bemap.rules',
        'pyg_bemap.settings',
        'pyg_bemap.infra.compat',
        'pyg_bemap.infra.private_api',
        'pyg_bemap.infra.replay',
    )
    assert all(
        name.startswith(allowed) for name in imported if 'pyg_bemap' in name
    ), imported


def test_the_grouping_waits_for_the_first_draw():
    data = random_graph(50, 500, 2, 0)
    sampler = GraphSampler(
        data.edge_index, data.edge_index, data.s, torch.rand(50) + 0.1, 2
    )
    assert sampler.memo['grouping'] is None
    sampler.draw(SamplerSettings(), 1)
    assert sampler.memo['grouping'] is not None


def test_a_samples_size_comes_from_the_plan(sampler):
    for settings in (SamplerSettings(), SamplerSettings(beta=0.6, min_keep=1)):
        plan = sampler.plan(settings)
        for seed in range(5):
            sample = sampler.draw(settings, seed)
            assert sample.num_kept == plan.num_kept == int(sample.mask.sum())


def test_the_whole_graph_is_a_sample_of_every_edge_but_self_loops(sampler):
    whole = sampler.whole()
    src, dst = sampler.edge_index
    assert torch.equal(whole.mask, src != dst)
    assert whole.num_kept == int((src != dst).sum()) and whole.seed == -1
    assert sampler.whole() is whole  # once per graph, with its memo
