import pytest
import torch
from scipy import stats

from pyg_bemap_lab.running.fairdrop import fairdrop_edge
from tests.conftest import random_graph


@pytest.mark.parametrize('delta', [0.0, 0.16, 0.5])
def test_keep_probabilities(delta):
    data = random_graph(40, 400, 2, seed=1)
    src, dst = data.edge_index
    cross = data.s[src] != data.s[dst]
    loop = src == dst
    generator = torch.Generator().manual_seed(0)
    draws = 2000
    kept = torch.zeros(data.edge_index.size(1))
    for _ in range(draws):
        out, mask = fairdrop_edge(
            data.edge_index, data.s, delta, generator=generator
        )
        assert torch.equal(out, data.edge_index[:, mask])
        kept += mask
    assert bool((kept[loop] == draws).all())  # self-loops always kept
    for edges, p in (
        (cross & ~loop, 0.5 + delta),
        (~cross & ~loop, 0.5 - delta),
    ):
        observed = kept[edges].sum().item()
        total = draws * int(edges.sum())
        if p in (0.0, 1.0):
            assert observed == p * total
            continue
        chi2 = stats.chisquare(
            [observed, total - observed], [p * total, (1 - p) * total]
        )
        assert chi2.pvalue > 1e-3, (delta, p, observed / total)


def test_evaluation_and_bad_inputs():
    data = random_graph(20, 80)
    out, mask = fairdrop_edge(data.edge_index, data.s, training=False)
    assert out is data.edge_index and bool(mask.all())
    with pytest.raises(
        ValueError, match=r"'delta' must be a number in \[0, 0.5\]"
    ):
        fairdrop_edge(data.edge_index, data.s, 0.7)
    with pytest.raises(ValueError, match="'generator'"):
        fairdrop_edge(data.edge_index, data.s, generator=1)


def test_seeded_draws_repeat():
    data = random_graph(20, 80)
    masks = [
        fairdrop_edge(
            data.edge_index, data.s, generator=torch.Generator().manual_seed(3)
        )[1]
        for _ in range(2)
    ]
    assert torch.equal(*masks)
