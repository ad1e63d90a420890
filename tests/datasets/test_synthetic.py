import pytest
import torch
from torch_geometric.utils import contains_self_loops, is_undirected

from pyg_bemap.datasets import biased_sbm


def test_biased_sbm_is_a_clean_undirected_homophilous_graph():
    data = biased_sbm(500, avg_degree=10, homophily=0.9, seed=1)
    assert data.num_nodes == 500 and data.x.shape == (500, 32)
    assert is_undirected(data.edge_index)
    assert not contains_self_loops(data.edge_index)
    key = data.edge_index[0] * 500 + data.edge_index[1]
    assert key.unique().numel() == key.numel()
    src, dst = data.edge_index
    assert (data.s[src] == data.s[dst]).float().mean() > 0.8
    masks = (
        data.train_mask.long() + data.val_mask.long() + data.test_mask.long()
    )
    assert bool((masks == 1).all())
    assert int(data.train_mask.sum()) == 250
    assert set(data.y.unique().tolist()) == {0, 1}


def test_biased_sbm_is_seeded():
    a, b = biased_sbm(300, seed=4), biased_sbm(300, seed=4)
    assert torch.equal(a.edge_index, b.edge_index)
    assert torch.equal(a.x, b.x) and torch.equal(a.y, b.y)
    assert not torch.equal(a.edge_index, biased_sbm(300, seed=5).edge_index)


@pytest.mark.parametrize(
    'change, match',
    [
        (dict(num_nodes=-5), "'num_nodes' must be an integer of at least 1"),
        (dict(num_nodes=1.5), "'num_nodes' must be an integer"),
        (dict(avg_degree=-3), r"'avg_degree' must be a number in \[0, 1999"),
        (dict(homophily=5), r"'homophily' must be a number in \[0, 1\]"),
        (dict(homophily=float('nan')), "'homophily'"),
        (dict(minority_share=2), "'minority_share'"),
        (dict(label_bias=4), r"'label_bias' must be a number in \[-1, 1\]"),
        (dict(signal=float('inf')), "'signal' must be a finite number"),
        (dict(num_features=0), "'num_features'"),
        (dict(seed=-1), "'seed' must be a seed"),
    ],
)
def test_biased_sbm_refuses_arguments_out_of_range(change, match):
    with pytest.raises(ValueError, match=match):
        biased_sbm(**change)


def test_biased_sbm_takes_the_ends_of_its_ranges():
    data = biased_sbm(50, avg_degree=0, homophily=1, label_bias=-1)
    assert data.edge_index.size(1) == 0
    assert bool((data.y == 1 - data.s).all())  # label_bias -1: y = 1 - s
