import math

import pytest
import torch
from torch_geometric.data import Data

from pyg_bemap.metrics import fairness_task

nan = math.nan


def graph(**attrs):
    edge_index = torch.tensor([[0, 1, 2, 3], [1, 0, 3, 2]])
    return Data(edge_index=edge_index, num_nodes=4, **attrs)


def test_the_parts_of_a_binary_fairness_task():
    data = graph(s=torch.tensor([0, 0, 1, 1]), y=torch.tensor([1.0, 0, -1, 1]))
    task = fairness_task(data)
    assert task.num_groups == 2 and task.sens.tolist() == [0, 0, 1, 1]
    assert task.labels.tolist() == [1, 0, -1, 1]
    assert task.labels.dtype == torch.long
    data.y = torch.tensor([1, -100, -1, 0])  # any negative is unlabelled
    assert fairness_task(data).labels.tolist() == [1, -1, -1, 0]
    data.y = torch.tensor([True, False, False, True])
    assert fairness_task(data).labels.tolist() == [1, 0, 0, 1]
    assert type(task.edge_index) is torch.Tensor


@pytest.mark.parametrize(
    'attrs, names, message',
    [
        (dict(y=torch.zeros(4)), {}, "'s' is missing"),
        (dict(s=torch.zeros(4), y=torch.zeros(4)), {}, 'one group only'),
        (dict(s=torch.tensor([0, 1, 0, 1])), {}, "one label per node in 'da"),
        (
            dict(s=torch.tensor([0, 1, 0, 1]), y=torch.tensor([0, 1, 2, 1])),
            {},
            'must be binary .* got 0, 1, 2',
        ),
        (
            dict(
                g=torch.tensor([0, 1, 0, 1]), y=torch.tensor([0.0, 0.3, 1, 1])
            ),
            dict(sens_attr='g'),
            'got 0, 0.3, 1',
        ),
        (
            dict(
                s=torch.tensor([0, 1, 0, 1]), y=torch.tensor([-0.5, 0, 1, 1])
            ),
            {},
            r'must be 0 and 1, .* \(got -0.5\); mark',
        ),
        (
            dict(s=torch.tensor([0, 1, 0, 1]), y=torch.tensor([0, nan, 1, 1])),
            {},
            r'\(got nan\); mark',
        ),
    ],
)
def test_what_is_not_a_binary_fairness_task(attrs, names, message):
    with pytest.raises(ValueError, match=message):
        fairness_task(graph(**attrs), **names)


def test_a_graph_without_edges_is_refused():
    with pytest.raises(ValueError, match="no 'edge_index'"):
        fairness_task(Data(s=torch.zeros(2), y=torch.zeros(2)))
