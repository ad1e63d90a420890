import math
from collections import Counter

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import chisquare

import pyg_bemap.infra.threads as threads_module
import pyg_bemap.rules.draw as sampling_module
from pyg_bemap.functional import balanced_edge_sample
from pyg_bemap.rules.draw import (
    _segmented_argsort,
    fair_quotas,
    group_edges,
    neighbour_weights,
    sampling_plan,
)
from pyg_bemap.rules.quotas import STRATEGIES
from tests.conftest import random_graph
from tests.reference import (
    assert_rule_4,
    in_neighbours,
    inclusion_probabilities,
    reference_quota,
    reference_sample,
)

# Segments are sorted in blocks of rows of their own size (as on the CPU),
# in blocks of rows padded to powers of two up to 16 and the longer ones in
# the segmented "tail" sort (as on other devices), or all in the tail.
LAYOUTS = ['blocks', 'padded', 'tail']
# Keys from one generator, or in chunks of 1000 with their own generators
# (as on graphs with more than threads.CHUNK sampled edges), and block
# rows sorted in pieces of about 1000 entries.
CHUNKS = {'one-generator': threads_module.CHUNK, 'chunked': 1000}


def use_layout(monkeypatch, layout: str) -> None:
    r"""Plans on the CPU lay segments out as :obj:`layout` says."""
    padded = layout == 'padded'
    monkeypatch.setattr(sampling_module, '_pads_rows', lambda device: padded)
    monkeypatch.setattr(sampling_module, '_MAX_ROW_WIDTH', 16)
    rows = 1 if layout == 'blocks' else 10**9
    monkeypatch.setattr(sampling_module, '_MIN_BLOCK_ROWS', rows)


def test_fair_quotas_examples():
    # node 0 (group 0): neighbours 5 x group 0, 2 x group 1 -> t = 2
    # node 1 (group 1): neighbours 8 x group 1 only -> max(4, ceil(2)) = 4
    # node 2 (group 0): neighbours 3 x group 1 only -> t = 1: one of group 1
    # node 3 (group 1): no neighbours
    # node 4 (group 0): 20 x group 0 -> ceil(0.25 * 20) = 5
    count = torch.tensor([[5, 2], [0, 8], [0, 3], [0, 0], [20, 0]])
    sens = torch.tensor([0, 1, 0, 1, 0])
    quota = fair_quotas(count, sens, beta=0.25, min_keep=4)
    assert quota.tolist() == [[1, 2], [0, 4], [0, 1], [0, 0], [5, 0]]
    # one group with fewer neighbours than min_keep keeps them all
    assert fair_quotas(torch.tensor([[2, 0]]), torch.tensor([0])).tolist() == [
        [2, 0]
    ]
    # an m beyond int64 is min(d, m) = d too (it overflowed)
    for huge in (10**30, 2**63):
        every = fair_quotas(count, sens, beta=0.25, min_keep=huge)
        assert every.tolist() == [[1, 2], [0, 8], [0, 1], [0, 0], [20, 0]]


def test_fair_quotas_three_groups():
    count = torch.tensor([[6, 3, 4], [6, 0, 4]])
    sens = torch.tensor([1, 2])
    # node 0: with self (6, 4, 4) -> t = 4; node 1: (6, 0, 5) -> t = 5
    quota = fair_quotas(count, sens)
    assert quota.tolist() == [[4, 3, 4], [5, 0, 4]]


@given(
    num_nodes=st.integers(1, 20),
    num_edges=st.integers(0, 120),
    num_groups=st.sampled_from([2, 3]),
    seed=st.integers(0, 2**16),
    beta=st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0]),
    min_keep=st.integers(0, 6),
    strategy=st.sampled_from(STRATEGIES),
)
def test_rule_4_property(
    num_nodes, num_edges, num_groups, seed, beta, min_keep, strategy
):
    data = random_graph(num_nodes, num_edges, num_groups, seed)
    balance = (
        torch.rand(num_nodes, generator=torch.Generator().manual_seed(seed))
        + 0.01
    )
    out, mask = balanced_edge_sample(
        data.edge_index,
        data.s,
        balance,
        num_groups=num_groups,  # a random draw may miss a group
        beta=beta,
        min_keep=min_keep,
        strategy=strategy,
    )
    assert mask.dtype == torch.bool and mask.shape == (num_edges,)
    assert torch.equal(out, data.edge_index[:, mask])
    assert_rule_4(data.edge_index, mask, data.s, beta, min_keep)


def test_fair_quotas_match_reference_on_a_larger_graph():
    data = random_graph(200, 3000, 3, seed=5)
    grouping = group_edges(data.edge_index, data.s, 3)
    quota = fair_quotas(grouping.neighbour_count, data.s, 0.3, 2)
    nbrs = in_neighbours(data.edge_index, 200)
    for i in range(200):
        expected = reference_quota(
            data.s[nbrs[i]].tolist(), data.s[i].item(), 0.3, 2
        )
        row = {g: k for g, k in enumerate(quota[i].tolist()) if k > 0}
        assert row == {g: k for g, k in expected.items() if k > 0}


def test_ceil_follows_python_float_arithmetic():
    # 0.55 * 100 = 55.00000000000001 in float64, so ceil gives 56
    count = torch.tensor([[100, 0]])
    quota = fair_quotas(count, torch.tensor([0]), beta=0.55, min_keep=0)
    assert quota[0, 0].item() == math.ceil(0.55 * 100) == 56


@pytest.mark.parametrize('num_groups', [2, 3])
@pytest.mark.parametrize('seed', range(5))
def test_reference_sampler_obeys_rule_4(num_groups, seed):
    data = random_graph(30, 150, num_groups, seed=seed)
    mask = reference_sample(data.edge_index, data.s.tolist(), [1.0] * 30)
    assert_rule_4(data.edge_index, mask, data.s)


@pytest.mark.parametrize('chunks', list(CHUNKS))
@pytest.mark.parametrize('layout', LAYOUTS)
@pytest.mark.parametrize('seed', range(4))
def test_rule_4_in_every_layout(monkeypatch, layout, seed, chunks):
    use_layout(monkeypatch, layout)
    monkeypatch.setattr(threads_module, 'CHUNK', CHUNKS[chunks])
    data = random_graph(60, 900, 3, seed)
    balance = torch.rand(60, generator=torch.Generator().manual_seed(seed))
    _, mask = balanced_edge_sample(data.edge_index, data.s, balance + 0.01)
    assert_rule_4(data.edge_index, mask, data.s)


def test_keys_are_float32_under_a_float64_default(monkeypatch):
    use_layout(monkeypatch, 'tail')
    data = random_graph(60, 900, 2, 1)
    balance = torch.rand(60, generator=torch.Generator().manual_seed(1))
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        _, mask = balanced_edge_sample(data.edge_index, data.s, balance + 0.01)
    finally:
        torch.set_default_dtype(default)
    assert_rule_4(data.edge_index, mask, data.s)


def test_segmented_argsort_sorts_inside_segments():
    gen = torch.Generator().manual_seed(0)
    key = torch.rand(500, generator=gen)
    key[::7] = torch.inf  # what -log(0) gives
    segment = torch.randint(0, 40, (500,), generator=gen).sort().values
    order = _segmented_argsort(key, segment)
    expected = np.lexsort((key.numpy(), segment.numpy()))
    assert torch.equal(order, torch.from_numpy(expected))


def test_not_training_returns_input_unchanged():
    data = random_graph()
    out, mask = balanced_edge_sample(
        data.edge_index, data.s, torch.ones(30), training=False
    )
    assert out is data.edge_index
    assert bool(mask.all()) and mask.numel() == data.edge_index.size(1)


def test_same_seed_same_sample():
    data = random_graph(60, 800)
    balance = torch.rand(60) + 0.1
    torch.manual_seed(12)
    _, a = balanced_edge_sample(data.edge_index, data.s, balance)
    torch.manual_seed(12)
    _, b = balanced_edge_sample(data.edge_index, data.s, balance)
    _, c = balanced_edge_sample(data.edge_index, data.s, balance)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)
    gen = torch.Generator().manual_seed(3)
    _, d = balanced_edge_sample(
        data.edge_index, data.s, balance, generator=gen
    )
    _, e = balanced_edge_sample(
        data.edge_index,
        data.s,
        balance,
        generator=torch.Generator().manual_seed(3),
    )
    assert torch.equal(d, e)


def test_inputs_are_not_modified():
    data = random_graph(60, 800)
    balance = torch.rand(60) + 0.1
    copies = [t.clone() for t in (data.edge_index, data.s, balance)]
    balanced_edge_sample(data.edge_index, data.s, balance)
    for before, after in zip(copies, (data.edge_index, data.s, balance)):
        assert torch.equal(before, after)


def test_int32_edge_index_and_bool_groups():
    data = random_graph(40, 300)
    out, mask = balanced_edge_sample(
        data.edge_index.int(), data.s.bool(), torch.ones(40)
    )
    assert out.dtype == torch.int32
    assert_rule_4(data.edge_index, mask, data.s)


def star_graph(num_targets, group0_weights, num_group1):
    r"""Targets of group 0, each with the same group-0 neighbours (weights
    given) and its own ``num_group1`` neighbours of group 1.
    """
    n0 = len(group0_weights)
    targets = torch.arange(num_targets) + n0
    first_g1 = n0 + num_targets
    src = [torch.arange(n0).repeat(num_targets)]
    dst = [targets.repeat_interleave(n0)]
    src.append(torch.arange(num_targets * num_group1) + first_g1)
    dst.append(targets.repeat_interleave(num_group1))
    num_nodes = first_g1 + num_targets * num_group1
    sens = torch.zeros(num_nodes, dtype=torch.long)
    sens[first_g1:] = 1
    balance = torch.ones(num_nodes)
    balance[:n0] = torch.tensor(group0_weights)
    return torch.stack([torch.cat(src), torch.cat(dst)]), sens, balance


@pytest.mark.parametrize('chunks', list(CHUNKS))
@pytest.mark.parametrize('layout', LAYOUTS)
@pytest.mark.parametrize('strategy', ['balance', 'uniform'])
def test_inclusion_frequencies_match_successive_sampling(
    monkeypatch, strategy, layout, chunks
):
    use_layout(monkeypatch, layout)
    monkeypatch.setattr(threads_module, 'CHUNK', CHUNKS[chunks])
    assert_successive_sampling(strategy, 'cpu')


def assert_successive_sampling(strategy: str, device: str) -> None:
    r"""Rule 4's draw on :obj:`device` keeps every pair of weighted
    neighbours as often as successive sampling would."""
    # With self, group 0 has 6 members and group 1 has 3, so every target
    # keeps 2 of the 5 weighted group-0 neighbours: 10 possible pairs.
    weights = [1.0, 0.5, 0.25, 0.2, 0.1]
    num_targets = 20000
    edge_index, sens, balance = star_graph(num_targets, weights, 3)
    _, mask = balanced_edge_sample(
        edge_index.to(device),
        sens.to(device),
        balance.to(device),
        strategy=strategy,
        generator=torch.Generator(device).manual_seed(0),
    )
    mask = mask.cpu()
    chosen = edge_index[0, mask & (sens[edge_index[0]] == 0)]
    pairs = chosen.view(num_targets, 2).sort(dim=1).values
    observed = Counter(map(tuple, pairs.tolist()))
    w = weights if strategy == 'balance' else [1.0] * 5
    exact = inclusion_probabilities(w, 2)
    keys = sorted(exact)
    assert set(observed) <= set(keys)
    f_obs = np.array([observed[k] for k in keys], dtype=float)
    f_exp = np.array([exact[k] for k in keys]) * num_targets
    assert chisquare(f_obs, f_exp).pvalue > 1e-3
    # every group-1 neighbour is kept
    assert int((mask & (sens[edge_index[0]] == 1)).sum()) == 3 * num_targets


@pytest.mark.parametrize('layout', LAYOUTS)
@pytest.mark.parametrize('scale', [1e-40, 1e-30, 1e30, 1e300])
def test_the_draw_does_not_depend_on_the_scale_of_the_weights(
    monkeypatch, layout, scale
):
    # float32 keys of -1/w overflowed or underflowed for such weights:
    # every key tied and the draw kept the first edges of every segment
    use_layout(monkeypatch, layout)
    weights = [1.0, 0.5, 0.25, 0.2, 0.1]
    edge_index, sens, balance = star_graph(50, weights, 3)

    def mask(balance):
        generator = torch.Generator().manual_seed(3)
        return balanced_edge_sample(
            edge_index, sens, balance, generator=generator
        )[1]

    expected = mask(balance.double())
    assert torch.equal(mask(balance.double() * scale), expected)
    assert torch.equal(mask(balance.double() * 2.0**-140), expected)
    # subnormal float32 weights (2**130 overflows float32)
    tiny = balance.float() * 2.0**-130
    assert torch.equal(mask(tiny), mask(tiny.double()))


@pytest.mark.parametrize('chunks', list(CHUNKS))
@pytest.mark.parametrize('layout', LAYOUTS)
def test_inclusion_frequencies_match_numpy_choice(monkeypatch, layout, chunks):
    use_layout(monkeypatch, layout)
    monkeypatch.setattr(threads_module, 'CHUNK', CHUNKS[chunks])
    weights = np.array([3.0, 1.0, 1.0, 0.5])
    edge_index, sens, balance = star_graph(20000, weights.tolist(), 2)
    _, mask = balanced_edge_sample(
        edge_index, sens, balance, generator=torch.Generator().manual_seed(1)
    )
    # 5 group-0 members with self, 2 of group 1: keep 1 group-0 neighbour
    ours = np.bincount(
        edge_index[0, mask & (sens[edge_index[0]] == 0)], minlength=4
    )
    rng = np.random.default_rng(0)
    theirs = np.bincount(
        [rng.choice(4, 1, p=weights / weights.sum())[0] for _ in range(20000)],
        minlength=4,
    )
    table = np.stack([ours, theirs])
    from scipy.stats import chi2_contingency

    assert chi2_contingency(table).pvalue > 1e-3


def test_degree_weights_use_out_degree_to_the_three_quarters():
    edge_index = torch.tensor([[0, 0, 0, 1, 2, 2], [1, 2, 3, 0, 0, 2]])
    grouping = group_edges(edge_index, torch.tensor([0, 0, 1, 1]), 2)
    assert grouping.out_degree.tolist() == [3, 1, 1, 0]  # self-loop dropped
    balance = torch.ones(4)
    w = neighbour_weights('degree', balance, grouping.out_degree)
    assert torch.allclose(w, torch.tensor([3.0, 1.0, 1.0, 0.0]).pow(0.75))
    assert neighbour_weights('uniform', balance, grouping.out_degree) is None
    assert (
        neighbour_weights('balance', balance, grouping.out_degree) is balance
    )
    for dtype in (torch.float64, torch.float16, torch.bfloat16):
        # the scores' dtype, which 'degree' does not use, changes nothing
        other = neighbour_weights(
            'degree', balance.to(dtype), grouping.out_degree
        )
        assert torch.equal(other, w)
    with pytest.raises(
        ValueError, match=r"'strategy' must be one of .*'degre'"
    ):
        neighbour_weights('degre', balance, grouping.out_degree)


def test_degree_strategy_prefers_high_degree_neighbours():
    # Every target keeps 1 of its 2 group-0 neighbours (nodes 0 and 1); node
    # 0 also points to 400 extra nodes, so its degree is 4400 against 4000.
    edge_index, sens, _ = star_graph(4000, [1.0, 1.0], 2)
    num_nodes = sens.numel()
    extra = torch.stack(
        [
            torch.zeros(400, dtype=torch.long),
            torch.arange(num_nodes, num_nodes + 400),
        ]
    )
    edge_index = torch.cat([edge_index, extra], 1)
    sens = torch.cat([sens, torch.ones(400, dtype=torch.long)])
    _, mask = balanced_edge_sample(
        edge_index,
        sens,
        torch.ones(sens.numel()),
        strategy='degree',
        generator=torch.Generator().manual_seed(0),
    )
    targets = torch.arange(4000) + 2
    picked = edge_index[
        0,
        mask & torch.isin(edge_index[1], targets) & (sens[edge_index[0]] == 0),
    ]
    assert picked.numel() == 4000
    p0 = 4400**0.75 / (4400**0.75 + 4000**0.75)
    share = (picked == 0).double().mean().item()
    assert abs(share - p0) < 4 * math.sqrt(p0 * (1 - p0) / 4000)
    assert share > 0.5


@pytest.mark.parametrize(
    'kwargs, match',
    [
        (dict(beta=1.5), 'beta'),
        (dict(beta=-0.1), 'beta'),
        (dict(min_keep=-1), 'min_keep'),
        (dict(min_keep=2.5), 'min_keep'),
        (dict(strategy='random'), 'strategy'),
    ],
)
def test_bad_sampler_arguments(kwargs, match):
    data = random_graph()
    with pytest.raises(ValueError, match=match):
        balanced_edge_sample(data.edge_index, data.s, torch.ones(30), **kwargs)


@pytest.mark.parametrize(
    'balance, match',
    [
        (torch.ones(29), 'shape'),
        (torch.zeros(30), 'positive'),
        (torch.full((30,), float('nan')), 'positive'),
        ([1.0] * 30, 'torch.Tensor'),
    ],
)
def test_bad_balance(balance, match):
    data = random_graph()
    with pytest.raises(ValueError, match=match):
        balanced_edge_sample(data.edge_index, data.s, balance)


def test_bad_groups_and_edges():
    data = random_graph()
    with pytest.raises(ValueError, match='non-integral'):
        balanced_edge_sample(data.edge_index, data.s + 0.5, torch.ones(30))
    with pytest.raises(ValueError, match='only 30 nodes'):
        balanced_edge_sample(data.edge_index + 1, data.s, torch.ones(30))
    with pytest.raises(ValueError, match="same device.*'balance' on meta"):
        balanced_edge_sample(
            data.edge_index, data.s, torch.ones(30, device='meta')
        )
    with pytest.raises(ValueError, match='same device'):
        balanced_edge_sample(
            data.edge_index, data.s.to('meta'), torch.ones(30)
        )


def test_empty_graphs():
    out, mask = balanced_edge_sample(
        torch.empty(2, 0, dtype=torch.long),
        torch.empty(0, dtype=torch.long),
        torch.empty(0),
        num_groups=2,
    )
    assert out.shape == (2, 0) and mask.shape == (0,)
    out, mask = balanced_edge_sample(
        torch.empty(2, 0, dtype=torch.long),
        torch.tensor([0, 1]),
        torch.ones(2),
    )
    assert mask.numel() == 0


def test_a_padded_plan_lays_segments_in_rows_of_powers_of_two(monkeypatch):
    use_layout(monkeypatch, 'padded')
    data = random_graph(80, 2000, 2, seed=3)
    grouping = group_edges(data.edge_index, data.s, 2)
    plan = sampling_plan(
        data.edge_index,
        grouping,
        data.s,
        torch.rand(80) + 0.1,
        0.25,
        4,
        'balance',
    )
    size = grouping.neighbour_count.view(-1)
    padding = plan.key_scale.isinf()
    assert plan.blocks and padding.any()
    end = 0
    for offset, rows, width in plan.blocks:
        assert offset == end and width & (width - 1) == 0 and width <= 16
        end = offset + rows * width
        block = plan.edge_id[offset:end].view(rows, width)
        real = ~padding[offset:end].view(rows, width)
        # a row holds one segment, of more than half its width, padded
        for row, is_real in zip(block, real):
            n = int(is_real.sum())
            assert width // 2 < n == int(is_real[:n].sum())
            src, dst = data.edge_index[:, row[:n]]
            segment = set((dst * 2 + data.s[src]).tolist())
            assert len(segment) == 1 and size[segment.pop()] == n
    # the longer segments after the blocks, unpadded, in the tail sort
    assert torch.equal(plan.tail_slot, torch.arange(end, padding.numel()))
    assert not padding[end:].any()
    tail = plan.edge_id[end:]
    src, dst = data.edge_index[:, tail]
    assert (size[dst * 2 + data.s[src]] > 16).all()
    assert plan.edge_id.numel() - int(padding.sum()) == len(
        set(plan.edge_id[~padding].tolist())
    )


@pytest.mark.parametrize('layout', LAYOUTS)
def test_tied_keys_fall_to_the_input_order(monkeypatch, layout):
    use_layout(monkeypatch, layout)
    plan = assert_ties_fall_to_the_input_order('cpu')
    assert (len(plan.blocks) > 0) == (layout != 'tail')


def assert_ties_fall_to_the_input_order(device):
    r"""Draws keys with many ties on :obj:`device` and checks that every
    segment keeps its quota of smallest (key, input edge); returns the
    plan (``tests/test_cuda.py`` runs it on the GPU's own layout)."""
    data = random_graph(80, 2000, 2, seed=3).to(device)
    grouping = group_edges(data.edge_index, data.s, 2)
    ones = torch.ones(80, device=device)
    plan = sampling_plan(
        data.edge_index, grouping, data.s, ones, 0.25, 4, 'uniform'
    )
    # keys from 4 values: most segments hold ties; padding's keys are +inf
    gen = torch.Generator().manual_seed(0)
    key = torch.randint(4, (plan.edge_id.numel(),), generator=gen).float()
    padding = torch.zeros_like(key, dtype=torch.bool)
    if plan.key_scale is not None:
        padding = plan.key_scale.isinf().cpu()
    key[padding] = torch.inf
    order = sampling_module._order_in_segments(plan, key.to(device))
    kept = plan.edge_id[order[plan.keep] & sampling_module._SLOT_MASK].cpu()
    # reference: in every segment, the quota smallest (key, input edge)
    edge_id, keep = plan.edge_id.cpu()[~padding], plan.keep.cpu()
    key, data = key[~padding], data.cpu()
    src, dst = data.edge_index[:, edge_id]
    segment = dst * 2 + data.s[src]
    quota = Counter(segment[keep - padding.cumsum(0)[keep]].tolist())
    ranked = np.lexsort((edge_id, key, segment))
    place = Counter()
    expected = []
    for i in ranked.tolist():
        g = int(segment[i])
        if place[g] < quota[g]:
            expected.append(int(edge_id[i]))
        place[g] += 1
    assert sorted(kept.tolist()) == sorted(expected)
    return plan


def test_every_draw_of_one_plan_keeps_its_size():
    data = random_graph(80, 2000, 2, seed=4)
    grouping = group_edges(data.edge_index, data.s, 2)
    plan = sampling_plan(
        data.edge_index, grouping, data.s, torch.rand(80) + 0.1, 0.5, 2,
        'balance',
    )  # fmt: skip
    gen = torch.Generator().manual_seed(0)
    masks = [sampling_module.draw_edge_mask(plan, gen) for _ in range(3)]
    assert [int(m.sum()) for m in masks] == [plan.num_kept] * 3
    assert not torch.equal(masks[0], masks[1])
