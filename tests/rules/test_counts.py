import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from pyg_bemap.rules.counts import exact_counting_memory, hop_group_counts
from tests.conftest import random_graph
from tests.reference import (
    reference_counts,
    reference_walk_counts,
)


@pytest.mark.parametrize('num_hops', [0, 1, 2, 3])
@pytest.mark.parametrize('num_groups', [2, 3])
def test_exact_counts_match_reference(num_hops, num_groups):
    data = random_graph(40, 120, num_groups, seed=num_hops)
    count = hop_group_counts(data.edge_index, data.s, num_groups, num_hops)
    expected = reference_counts(
        data.edge_index, data.s.tolist(), num_groups, num_hops
    )
    assert count.dtype == torch.long
    assert torch.equal(count, expected)


def test_counts_follow_incoming_edges_and_count_distinct_nodes():
    # 0 -> 2, 1 -> 2 (twice), 3 -> 0, 2 -> 2 (self-loop), 0 -> 4
    edge_index = torch.tensor([[0, 1, 1, 3, 2, 0], [2, 2, 2, 0, 2, 4]])
    sens = torch.tensor([0, 1, 0, 1, 0])
    one = hop_group_counts(edge_index, sens, num_hops=1)
    assert one.tolist() == [[1, 1], [0, 1], [2, 1], [0, 1], [2, 0]]
    two = hop_group_counts(edge_index, sens, num_hops=2)
    assert two[2].tolist() == [2, 2]  # 2, 0, 1 and 3 (via 0)
    assert two[4].tolist() == [2, 1]  # 4, 0 and 3 (via 0)


@given(
    num_nodes=st.integers(1, 25),
    num_edges=st.integers(0, 80),
    num_groups=st.integers(2, 3),
    num_hops=st.integers(0, 3),
    seed=st.integers(0, 2**16),
)
def test_exact_counts_property(
    num_nodes, num_edges, num_groups, num_hops, seed
):
    data = random_graph(num_nodes, num_edges, num_groups, seed)
    count = hop_group_counts(
        data.edge_index, data.s, num_groups, num_hops, num_nodes=num_nodes
    )
    expected = reference_counts(
        data.edge_index, data.s.tolist(), num_groups, num_hops
    )
    assert torch.equal(count, expected)


@pytest.mark.parametrize('budget', [1, 48 * 60, 48 * 400, 10**4])
def test_exact_counts_are_independent_of_memory_budget(budget):
    data = random_graph(50, 400, 2, seed=3)
    small = hop_group_counts(
        data.edge_index, data.s, num_hops=3, memory_budget=budget
    )
    large = hop_group_counts(data.edge_index, data.s, num_hops=3)
    assert torch.equal(small, large)


def test_exact_counting_memory_covers_the_build_and_the_products():
    nodes, edges = 1000, 20_000
    per_node = 8 * nodes * (2 + 2) + 2 * 4 * (nodes + 1)
    # a small budget: building the pattern (17 bytes per entry) dominates
    assert exact_counting_memory(nodes, edges, 2, 1024) == (
        17 * (edges + nodes) + per_node
    )
    # on a GPU the build keeps the keys beside their sorted copy: 26 bytes
    assert exact_counting_memory(nodes, edges, 2, 1024, 'cuda') == (
        26 * (edges + nodes) + per_node
    )
    # a large budget: the products next to the pattern (int32 indices)
    assert exact_counting_memory(nodes, edges, 2, 2**28) == (
        2**28 + 4 * (edges + nodes) + per_node
    )
    # 2^31 entries or more need int64 indices
    big = exact_counting_memory(nodes, 2**31, 2, 2**40)
    per_node = 8 * nodes * (2 + 2) + 2 * 8 * (nodes + 1)
    assert big == 2**40 + 8 * (2**31 + nodes) + per_node


@pytest.mark.parametrize('num_hops', [0, 1, 2, 3])
def test_walk_counts_match_reference(num_hops):
    data = random_graph(25, 80, 3, seed=1)
    count = hop_group_counts(
        data.edge_index, data.s, 3, num_hops, counting='walks'
    )
    expected = reference_walk_counts(
        data.edge_index, data.s.tolist(), 3, num_hops
    )
    assert torch.equal(count, expected)
    exact = hop_group_counts(data.edge_index, data.s, 3, num_hops)
    assert bool((count >= exact).all())


def test_counts_handle_isolated_nodes_and_empty_graphs():
    edge_index = torch.empty(2, 0, dtype=torch.long)
    sens = torch.tensor([0, 1, 1])
    count = hop_group_counts(edge_index, sens)
    assert count.tolist() == [[1, 0], [0, 1], [0, 1]]
    empty = hop_group_counts(
        edge_index, torch.empty(0, dtype=torch.long), num_groups=2
    )
    assert empty.shape == (0, 2)


def test_counts_do_not_modify_inputs():
    data = random_graph(20, 60)
    edge_index, sens = data.edge_index.clone(), data.s.clone()
    hop_group_counts(data.edge_index, data.s)
    assert torch.equal(edge_index, data.edge_index)
    assert torch.equal(sens, data.s)


@pytest.mark.parametrize(
    'kwargs, match',
    [
        (dict(num_hops=-1), 'num_hops'),
        (dict(num_hops=1.5), 'num_hops'),
        (dict(counting='approx'), 'counting'),
        (dict(num_groups=1), "'num_groups' is 1"),
    ],
)
def test_counts_reject_bad_arguments(kwargs, match):
    data = random_graph(10, 20)
    with pytest.raises(ValueError, match=match):
        hop_group_counts(data.edge_index, data.s, **kwargs)


def test_counts_reject_edges_beyond_the_nodes():
    with pytest.raises(ValueError, match='only 2 nodes'):
        hop_group_counts(torch.tensor([[0, 2], [1, 0]]), torch.tensor([0, 1]))
