import math

import pytest
import torch
from torch_geometric.nn import GCNConv
from torch_geometric.utils import (
    erdos_renyi_graph,
    stochastic_blockmodel_graph,
)

from pyg_bemap import (
    BalanceAwareSampling,
    BeMapConv,
    balanced_edge_sample,
    to_bemap,
)
from pyg_bemap.datasets import biased_sbm
from pyg_bemap.metrics import (
    distance_bias,
    layerwise_distance_bias,
    majority_ratio,
    propagate,
)


def test_distance_bias_definition():
    h = torch.tensor([[0.0, 0.0], [2.0, 0.0], [10.0, 10.0], [10.0, 12.0]])
    sens = torch.tensor([0, 0, 1, 1])
    out = distance_bias(h, sens)
    # every node sits at distance 1 from its centroid: bias = 1 / 1
    assert out.bias == pytest.approx(1.0)
    assert out.centroid_gap == pytest.approx(math.dist((1, 0), (10, 11)))
    three = distance_bias(
        torch.tensor([[0.0], [1.0], [5.0]]), torch.tensor([0, 1, 2])
    )
    assert three.bias == math.inf
    assert three.centroid_gap == pytest.approx(5.0)
    with pytest.raises(ValueError, match='2-D'):
        distance_bias(torch.zeros(3), torch.tensor([0, 1, 0]))


def test_propagate_is_the_mean_over_node_and_neighbours():
    x = torch.tensor([[1.0], [2.0], [4.0], [8.0]])
    edge_index = torch.tensor([[1, 2, 0, 0], [0, 0, 0, 3]])  # with a loop
    assert propagate(x, edge_index).view(-1).tolist() == pytest.approx(
        [7 / 3, 2.0, 4.0, 4.5]
    )


def test_theorem_1_propagation_shrinks_distances_by_expected_inverse_degree():
    # i.i.d. residuals around equal group means on a Gilbert graph: one
    # row-normalised step multiplies the mean squared distance to the group
    # centroid by E[1 / (d + 1)] (self-augmented degree).
    num_nodes, dim = 3000, 32
    torch.manual_seed(0)
    edge_index = erdos_renyi_graph(num_nodes, 0.004)
    gen = torch.Generator().manual_seed(1)
    sens = torch.randint(0, 2, (num_nodes,), generator=gen)
    h = torch.randn(num_nodes, dim, generator=gen, dtype=torch.float64)
    before = distance_bias(h, sens).bias
    after = distance_bias(propagate(h, edge_index), sens).bias
    degree = torch.bincount(edge_index[1], minlength=num_nodes).double()
    expected = (1.0 / (degree + 1)).mean().item()
    assert before / after == pytest.approx(expected, rel=0.03)


@pytest.mark.parametrize('homophilous', [False, True])
def test_lemma_2_balanced_neighbourhoods_make_centroids_consistent(
    homophilous,
):
    # Groups with different means: one step over BeMap's balanced
    # neighbourhoods moves both group centroids to the same point; a vanilla
    # step keeps them apart (by the self term on a Gilbert graph, by far on a
    # homophilous one).
    num_nodes, dim = 3000, 2
    gen = torch.Generator().manual_seed(3)
    sens = torch.cat([torch.zeros(2100), torch.ones(900)]).long()
    torch.manual_seed(2)
    if homophilous:
        edge_index = stochastic_blockmodel_graph(
            [2100, 900], [[0.01, 0.005], [0.005, 0.01]]
        )
    else:
        edge_index = erdos_renyi_graph(num_nodes, 0.01)
    mean = torch.zeros(2, dim, dtype=torch.float64)
    mean[1, 0] = 4.0
    h = mean[sens] + torch.randn(
        num_nodes, dim, generator=gen, dtype=torch.float64
    )
    gap = distance_bias(h, sens).centroid_gap
    vanilla = distance_bias(propagate(h, edge_index), sens).centroid_gap
    balanced_edges, _ = balanced_edge_sample(
        edge_index,
        sens,
        torch.ones(num_nodes),
        generator=torch.Generator().manual_seed(4),
    )
    balanced = distance_bias(propagate(h, balanced_edges), sens).centroid_gap
    assert gap == pytest.approx(4.0, rel=0.05)
    assert vanilla > (0.25 if homophilous else 0.02) * gap
    assert balanced < 0.05 * gap
    assert balanced < 0.3 * vanilla


def test_layerwise_distance_bias_with_and_without_bemap():
    data = BalanceAwareSampling()(biased_sbm(300, seed=1))

    class Net(torch.nn.Module):
        def __init__(self, wrap):
            super().__init__()
            make = (lambda c: BeMapConv(c)) if wrap else (lambda c: c)
            self.conv1 = make(GCNConv(data.num_features, 16))
            self.conv2 = make(GCNConv(16, 8))
            self.dropout = torch.nn.Dropout(0.5)

        def forward(self, x, edge_index):
            x = self.dropout(self.conv1(x, edge_index).relu())
            return self.conv2(x, edge_index)

    torch.manual_seed(0)
    vanilla, fair = Net(False), Net(True)
    fair.conv1.conv.load_state_dict(vanilla.conv1.state_dict())
    fair.conv2.conv.load_state_dict(vanilla.conv2.state_dict())
    fair.train()
    rows = layerwise_distance_bias(vanilla, data.x, data.edge_index, data.s)
    assert [name for name, _ in rows] == ['input', 'conv1', 'conv2']
    same = layerwise_distance_bias(fair, data.x, data.edge_index, data.s)
    assert [n for n, _ in same] == ['input', 'conv1', 'conv2']
    # eval mode: BeMap is the vanilla model (on a sparse adjacency, equal up
    # to the order of floating-point sums)
    for (_, a), (_, b) in zip(same, rows):
        assert a.bias == pytest.approx(b.bias, rel=1e-6)
        assert a.centroid_gap == pytest.approx(b.centroid_gap, rel=1e-6)
    assert fair.training and fair.conv1.training  # modes restored
    sampled = layerwise_distance_bias(
        fair, data.x, data.edge_index, data.s, sampled=True
    )
    assert sampled[1][1] != rows[1][1]
    chosen = layerwise_distance_bias(
        vanilla, data.x, data.edge_index, data.s, layers=['conv2']
    )
    assert [n for n, _ in chosen] == ['input', 'conv2']
    with pytest.raises(ValueError, match='No module'):
        layerwise_distance_bias(
            vanilla, data.x, data.edge_index, data.s, layers=['conv9']
        )


def test_majority_ratio():
    edge_index = torch.tensor([[1, 2, 3, 0, 0], [0, 0, 0, 1, 0]])
    sens = torch.tensor([0, 0, 1, 1, 0])
    ratio = majority_ratio(edge_index, sens)
    assert ratio[0].item() == pytest.approx(1 / 3)
    assert ratio[1].item() == 1.0
    assert math.isnan(ratio[2].item()) and math.isnan(ratio[4].item())


def test_a_centroid_gap_with_one_group_present_is_nan_with_a_warning():
    h = torch.randn(5, 2)
    with pytest.warns(UserWarning, match='needs two groups with members'):
        out = distance_bias(h, torch.zeros(5, dtype=torch.long), num_groups=2)
    assert math.isnan(out.centroid_gap)
    assert out.bias > 0


@pytest.mark.parametrize('seeded', [True, False], ids=['generator', 'global'])
def test_measuring_sampled_bias_changes_nothing_of_training(seeded):
    data = BalanceAwareSampling()(biased_sbm(num_nodes=300, avg_degree=12))

    def second_step(measure):
        torch.manual_seed(0)
        generator = torch.Generator().manual_seed(9) if seeded else None
        model = to_bemap(GCNConv(data.num_features, 2), generator=generator)
        model.train()
        model(data.x, data.edge_index)  # a training step
        if measure:
            layerwise_distance_bias(
                model, data.x, data.edge_index, data.s, sampled=True
            )
        return model(data.x, data.edge_index), torch.rand(3)

    (before, after) = second_step(False), second_step(True)
    assert torch.equal(before[0], after[0]) and torch.equal(
        before[1], after[1]
    )
