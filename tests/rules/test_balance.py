r"""Rule 3: balance scores from group counts."""

import pytest
import torch

from pyg_bemap.rules.balance import balance_score
from tests.reference import reference_balance


def test_balance_two_groups_is_inverse_absolute_difference():
    count = torch.tensor([[3, 1], [2, 2], [0, 5]])
    assert balance_score(count).tolist() == pytest.approx([1 / 3, 1.0, 1 / 6])
    assert balance_score(count, delta=0.5).tolist() == pytest.approx(
        [1 / 2.5, 2.0, 1 / 5.5]
    )
    assert balance_score(count).dtype == torch.get_default_dtype()


@pytest.mark.parametrize('num_groups', [1, 2, 3, 4])
def test_balance_matches_pairwise_rms_reference(num_groups):
    count = torch.randint(
        0, 30, (50, num_groups), generator=torch.Generator().manual_seed(0)
    )
    expected = reference_balance(count, 0.7)
    assert torch.allclose(
        balance_score(count, 0.7).double(), expected, rtol=1e-6
    )


def test_balance_three_groups_example():
    # pairs (4-1, 4-1, 1-1): sqrt((9 + 9 + 0) / 3) = sqrt(6)
    out = balance_score(torch.tensor([[4, 1, 1]]))
    assert out.item() == pytest.approx(1 / (6**0.5 + 1))


def test_balance_rejects_bad_arguments():
    with pytest.raises(ValueError, match='delta'):
        balance_score(torch.ones(2, 2), delta=0.0)
    with pytest.raises(ValueError, match='2-D'):
        balance_score(torch.ones(4))


def test_large_counts_keep_their_differences():
    # G * sum c^2 - (sum c)^2 cancelled to 0 here: b was 1, not 1/2
    count = torch.tensor([[10**8, 10**8 + 1], [10**9, 10**9]])
    assert balance_score(count).tolist() == [0.5, 1.0]
    three = torch.tensor([[10**8 + 3, 10**8, 10**8]])  # sqrt((9 + 9) / 3)
    assert balance_score(three).item() == pytest.approx(1 / (6**0.5 + 1))


def test_a_delta_whose_scores_leave_the_dtype_is_refused():
    from torch_geometric.data import Data

    from pyg_bemap import BalanceAwareSampling

    data = Data(edge_index=torch.tensor([[0, 1], [1, 0]]), s=torch.arange(2))
    with pytest.raises(ValueError, match="'delta' = 1e-40 gives balance"):
        balance_score(torch.tensor([[1, 1]]), delta=1e-40)
    with pytest.raises(ValueError, match='choose a larger delta'):
        BalanceAwareSampling(delta=1e-40)(data)
    # scores that round to 0: every key +inf, the draw no longer random
    with pytest.raises(ValueError, match=r"'delta' = 1e\+300 .* round to 0"):
        balance_score(torch.tensor([[1, 1]]), delta=1e300)
    with pytest.raises(ValueError, match='choose a smaller delta'):
        BalanceAwareSampling(delta=1e300)(data)
