import torch

import pyg_bemap.rules.reachability as reachability
from pyg_bemap.rules.counts import hop_group_counts
from pyg_bemap.rules.reachability import (
    _chunk_end,
    _product_pattern,
    _reach_bound,
    _reach_csr,
    _sorted_unique_,
)
from tests.conftest import random_graph


def test_exact_counts_with_int64_indices_and_capped_chunks(monkeypatch):
    data = random_graph(50, 400, 3, seed=9)
    expected = hop_group_counts(data.edge_index, data.s, num_hops=3)
    monkeypatch.setattr(reachability, 'index_dtype', lambda *args: torch.long)
    assert torch.equal(
        hop_group_counts(data.edge_index, data.s, num_hops=3), expected
    )
    # keys N * row + column that fit 2 rows per chunk
    monkeypatch.undo()
    monkeypatch.setattr(reachability, '_index_max', lambda dtype: 2 * 50)
    rows = []
    original = reachability._product_pattern

    def spy(block_crow, *args):
        rows.append(block_crow.numel() - 1)
        return original(block_crow, *args)

    monkeypatch.setattr(reachability, '_product_pattern', spy)
    assert torch.equal(
        hop_group_counts(data.edge_index, data.s, num_hops=3), expected
    )
    assert max(rows) == 2


def test_chunks_respect_the_budget():
    bound = torch.tensor([3.0, 5.0, 2.0, 9.0, 1.0, 1.0, 12.0, 2.0])
    total = bound.cumsum(0)
    chunks, start = [], 0
    while start < 8:
        end = _chunk_end(total, start, 10)
        chunks.append((start, end))
        start = end
    for start, end in chunks:
        assert bound[start:end].sum() <= 10 or end == start + 1
    assert chunks == [(0, 3), (3, 5), (5, 6), (6, 7), (7, 8)]


def test_reach_csr_holds_distinct_sources_and_the_node_itself():
    # 0 -> 2, 1 -> 2 (twice), 3 -> 0, 2 -> 2 (self-loop), 0 -> 4
    edge_index = torch.tensor([[0, 1, 1, 3, 2, 0], [2, 2, 2, 0, 2, 4]])
    crow, col = _reach_csr(edge_index.int(), 5)
    rows = [col[crow[i] : crow[i + 1]].tolist() for i in range(5)]
    assert rows == [[0, 3], [1], [0, 1, 2], [3], [0, 4]]
    assert edge_index.tolist()[1] == [2, 2, 2, 0, 2, 4]  # input untouched


def test_sorted_unique_matches_torch_unique():
    key = torch.randint(
        0, 50, (300,), generator=torch.Generator().manual_seed(0)
    )
    assert torch.equal(_sorted_unique_(key.clone()), torch.unique(key))


def test_product_pattern_is_the_pattern_of_the_sparse_product():
    data = random_graph(30, 150, 2, seed=5)
    crow, col = _reach_csr(data.edge_index, 30)
    dense = torch.zeros(30, 30)
    dense[torch.repeat_interleave(crow.diff()), col] = 1.0
    block_crow, block_col = crow[10:21] - crow[10], col[crow[10] : crow[20]]
    got_crow, got_col = _product_pattern(block_crow, block_col, crow, col)
    got_row = torch.repeat_interleave(got_crow.diff())
    expected = (dense[10:20] @ dense).nonzero()  # row-major order
    assert torch.equal(torch.stack([got_row, got_col], 1), expected)


def test_reach_bound_is_an_upper_bound():
    data = random_graph(40, 300, 2, seed=4)
    crow, col = _reach_csr(data.edge_index, 40)
    bound = _reach_bound(crow, col, 2)
    exact = hop_group_counts(data.edge_index, data.s, num_hops=2).sum(1)
    assert bool((bound >= exact).all()) and bool((bound <= 40).all())
