import pytest
import torch

from pyg_bemap.rules.groups import (
    check_edge_index,
    check_same_device,
    sensitive_groups,
)


@pytest.mark.parametrize(
    'sens',
    [
        torch.tensor([0, 1, 1, 0]),
        torch.tensor([False, True, True, False]),
        torch.tensor([0.0, 1.0, 1.0, 0.0]),
        torch.tensor([0, 1, 1, 0], dtype=torch.int32),
    ],
)
def test_sensitive_groups_accepts_integral_values(sens):
    out, num_groups = sensitive_groups(sens, 4)
    assert out.dtype == torch.long
    assert out.tolist() == [0, 1, 1, 0]
    assert num_groups == 2


def test_sensitive_groups_infers_or_takes_num_groups():
    sens = torch.tensor([0, 2, 1])
    assert sensitive_groups(sens, 3)[1] == 3
    assert sensitive_groups(sens, 3, num_groups=5)[1] == 5


def test_sensitive_groups_does_not_modify_input():
    sens = torch.tensor([0.0, 1.0])
    out, _ = sensitive_groups(sens, 2)
    out[0] = 7
    assert sens.tolist() == [0.0, 1.0]


@pytest.mark.parametrize(
    'sens, num_groups, match',
    [
        (None, None, 'missing'),
        ([0, 1, 0], None, 'torch.Tensor'),
        (torch.tensor([0, 1]), None, 'one entry per node'),
        (torch.tensor([[0, 1, 0]]), None, 'one entry per node'),
        (torch.tensor([0.0, 0.5, 1.0]), None, 'non-integral'),
        (torch.tensor([0.0, float('nan'), 1.0]), None, 'NaN'),
        (torch.tensor([0.0, float('inf'), 1.0]), None, 'NaN or infinite'),
        (torch.tensor([0, -1, 1]), None, 'negative'),
        (torch.tensor([0, 2, 1]), 2, "'num_groups' is 2"),
        (torch.tensor([0, 1, 1]), 0, 'positive integer'),
        (torch.tensor([0, 1, 1], dtype=torch.complex64), None, 'real'),
        (torch.tensor([0.0, 1e20, 1.0]), None, r'values of 2\*\*62 or'),
        (torch.tensor([0, 1, 0, 1]), None, "set 'data.num_nodes'"),
        (torch.tensor([1, 2, 2]), None, 'without members'),  # no group 0
    ],
)
def test_sensitive_groups_rejects_bad_input(sens, num_groups, match):
    with pytest.raises(ValueError, match=match):
        sensitive_groups(sens, 3, num_groups)


def test_check_edge_index():
    assert check_edge_index(torch.tensor([[0, 1], [1, 2]]), None) == 3
    assert check_edge_index(torch.tensor([[0, 1], [1, 2]]), 5) == 5
    assert check_edge_index(torch.empty(2, 0, dtype=torch.long), 4) == 4
    with pytest.raises(ValueError, match='shape'):
        check_edge_index(torch.tensor([0, 1]), None)
    with pytest.raises(ValueError, match='node ids'):
        check_edge_index(torch.tensor([[0.0, 1.0], [1.0, 0.0]]), None)
    with pytest.raises(ValueError, match='negative'):
        check_edge_index(torch.tensor([[0, -1], [1, 0]]), None)
    with pytest.raises(ValueError, match='only 2 nodes'):
        check_edge_index(torch.tensor([[0, 2], [1, 0]]), 2)
    with pytest.raises(ValueError, match='torch.Tensor'):
        check_edge_index([[0, 1], [1, 0]], None)


def test_check_same_device():
    check_same_device(a=torch.zeros(1), b=None, c=torch.ones(2))
    with pytest.raises(ValueError, match='same device'):
        check_same_device(a=torch.zeros(1), b=torch.zeros(1, device='meta'))


def test_a_graph_without_nodes_has_one_group():
    empty = torch.zeros(0, dtype=torch.long)
    assert sensitive_groups(empty, 0)[1] == 1
