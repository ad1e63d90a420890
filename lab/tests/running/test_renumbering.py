import torch

from pyg_bemap import BalanceAwareSampling, balanced_edge_sample
from pyg_bemap.datasets import biased_sbm
from pyg_bemap_lab.run_config import RunConfig
from pyg_bemap_lab.running.renumbering import (
    first_appearance_ids,
    reference_edge_order,
    renumber_like_reference,
)
from pyg_bemap_lab.running.training import Trainer

# Four nodes in groups [0, 1, 0, 1]; sampled edges (source -> target):
# 1 -> 0, 2 -> 0, 3 -> 1, 0 -> 2, 1 -> 3.
SENS = torch.tensor([0, 1, 0, 1])
SAMPLED = torch.tensor([[1, 2, 3, 0, 1], [0, 0, 1, 2, 3]])


def test_edges_in_the_reference_order():
    # target by target; group 0 before group 1; the self-loop last
    assert reference_edge_order(SAMPLED, SENS).tolist() == [
        [2, 1, 0, 3, 1, 0, 2, 1, 3],
        [0, 0, 0, 1, 1, 2, 2, 3, 3],
    ]


def test_ids_by_first_appearance_sources_then_targets():
    ordered = reference_edge_order(SAMPLED, SENS)
    # sources 2, 1, 0, 3 appear in this order: old 2 -> 0, 1 -> 1, 0 -> 2
    assert first_appearance_ids(ordered, 4).tolist() == [2, 1, 0, 3]
    # node 0 first appears among the targets, after the sources 3;
    # node 2 never appears and comes last
    edges = torch.tensor([[3, 3], [0, 1]])
    assert first_appearance_ids(edges, 4).tolist() == [1, 2, 3, 0]


def test_worked_example():
    # 2 -> 0 becomes 0 -> 2, 1 -> 0 becomes 1 -> 2, and so on
    assert renumber_like_reference(SAMPLED, SENS).tolist() == [
        [0, 1, 3, 2, 1],
        [2, 2, 1, 0, 3],
    ]


def test_the_renumbered_method_trains_on_the_renumbered_sample():
    data = BalanceAwareSampling()(biased_sbm(120, seed=5))
    trainer = Trainer(data, 'BeMap(sym)-renumbered', 0, RunConfig())
    torch.manual_seed(11)
    sample = trainer._renumbered_sample()
    torch.manual_seed(11)
    kept, _ = balanced_edge_sample(
        data.edge_index, data.s, trainer.bemap.balance
    )
    expected = renumber_like_reference(kept.as_subclass(torch.Tensor), data.s)
    assert torch.equal(sample, expected)
    # the sample's edges, under other ids: same count, a different graph
    assert sample.size(1) == kept.size(1)
    assert not torch.equal(sample, kept.as_subclass(torch.Tensor))
