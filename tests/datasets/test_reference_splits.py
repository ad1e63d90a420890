import os.path as osp
import random

import pytest
import torch

from pyg_bemap.datasets import FairGraphDataset
from pyg_bemap.datasets.fair_graph import PROCESSED_FORMAT
from pyg_bemap.datasets.reference_splits import (
    labelled_split,
    per_class_split,
    reference_split,
)

from .test_fair_graph import needs_published, with_raw

# Python's random.Random(20) shuffles the class-0 nodes [0, 3, 5, 7, 8, 11]
# to [8, 0, 7, 5, 3, 11] and then, continuing, the class-1 nodes
# [1, 2, 6, 9, 10] to [10, 9, 1, 2, 6].
Y_CLASSES = torch.tensor([0, 1, 1, 0, -1, 0, 1, 0, 0, 1, 1, 0])
# It shuffles the labelled nodes [0, 1, 3, 4, 5, 6, 8, 9] of this graph to
# [1, 5, 4, 8, 0, 6, 9, 3].
Y_LABELLED = torch.tensor([1, 0, -1, 1, 0, 0, 1, -1, 0, 1])


def nodes(mask):
    return mask.nonzero().view(-1).tolist()


def test_per_class_split_by_hand():
    # class 0 (6 nodes): train the first min(3, 4 // 2) = 2, validate [3:4],
    # test [4:]; class 1 (5 nodes): train min(2, 2) = 2, validate [2:3],
    # test [3:].
    train, val, test = per_class_split(Y_CLASSES, label_budget=4)
    assert nodes(train) == [0, 8, 9, 10]
    assert nodes(val) == [1, 5]
    assert nodes(test) == [2, 3, 6, 11]
    # a large budget is capped at half of each class
    train, _, _ = per_class_split(Y_CLASSES, label_budget=100)
    assert nodes(train) == [0, 7, 8, 9, 10]


def test_labelled_split_by_hand():
    # 8 labelled nodes: train min(4, 3) = 3, validate [4:6], test [6:]
    train, val, test = labelled_split(Y_LABELLED, label_budget=3)
    assert nodes(train) == [1, 4, 5]
    assert nodes(val) == [0, 6]
    assert nodes(test) == [3, 9]
    # NBA's loader: every node after the first 3 tests, and validates
    train, val, test = labelled_split(
        Y_LABELLED, label_budget=3, validation_is_test=True
    )
    assert nodes(train) == [1, 4, 5]
    assert nodes(test) == [0, 3, 6, 8, 9]
    assert torch.equal(val, test)
    train, _, _ = labelled_split(Y_LABELLED, label_budget=10)
    assert nodes(train) == [1, 4, 5, 8]


def test_the_splits_replay_the_reference_shuffle_of_numpy_arrays():
    # The reference loaders shuffle numpy arrays with the global generator.
    np = pytest.importorskip('numpy')
    y = torch.randint(0, 2, (200,), generator=torch.Generator().manual_seed(0))
    state = random.getstate()
    random.seed(7)
    zeros, ones = np.where(y.numpy() == 0)[0], np.where(y.numpy() == 1)[0]
    random.shuffle(zeros)
    random.shuffle(ones)
    random.setstate(state)
    train, val, test = per_class_split(y, label_budget=40, seed=7)
    expected_train = sorted([*zeros[:20], *ones[:20]])
    assert nodes(train) == expected_train
    half0, half1 = len(zeros) // 2, len(ones) // 2
    quarter0, quarter1 = 3 * len(zeros) // 4, 3 * len(ones) // 4
    assert nodes(val) == sorted(
        [*zeros[half0:quarter0], *ones[half1:quarter1]]
    )
    assert nodes(test) == sorted([*zeros[quarter0:], *ones[quarter1:]])


def test_the_global_generator_is_left_alone():
    state = random.getstate()
    per_class_split(Y_CLASSES, 4)
    labelled_split(Y_LABELLED, 3)
    assert random.getstate() == state


def test_bad_input_is_a_clear_error():
    with pytest.raises(ValueError, match='label_budget'):
        per_class_split(Y_CLASSES, 0)
    with pytest.raises(ValueError, match='label_budget'):
        labelled_split(Y_LABELLED, 2.5)
    with pytest.raises(ValueError, match="'y'"):
        per_class_split(Y_CLASSES.float(), 4)
    with pytest.raises(ValueError, match='split kind'):
        reference_split(Y_CLASSES, 'stratified', 4)


def test_nba_reference_split(tmp_path):
    data = FairGraphDataset(str(tmp_path), 'nba', split='reference')[0]
    assert int(data.train_mask.sum()) == 100
    assert int(data.test_mask.sum()) == 213
    assert torch.equal(data.val_mask, data.test_mask)
    assert not bool((data.train_mask & data.test_mask).any())
    expected = labelled_split(data.y, 100, 20, validation_is_test=True)
    assert torch.equal(data.train_mask, expected[0])
    other = FairGraphDataset(
        str(tmp_path), 'nba', split='reference', split_seed=21
    )[0]
    assert not torch.equal(other.train_mask, data.train_mask)
    with pytest.raises(ValueError, match="'split'"):
        FairGraphDataset(str(tmp_path), 'nba', split='stratified')


@pytest.mark.parametrize(
    'name, sizes',
    [
        # per class: min(n/2, budget/2) train, n/2 to 3n/4 validate
        pytest.param(
            'recidivism',
            (100, 2943 + 1776, 2943 + 1776),
            marks=needs_published('recidivism'),
        ),
        pytest.param(
            'credit',
            (6000, 1659 + 5841, 1659 + 5841),
            marks=needs_published('credit'),
        ),
    ],
)
def test_per_class_reference_splits_of_the_real_graphs(tmp_path, name, sizes):
    data = FairGraphDataset(
        with_raw(str(tmp_path), name), name, split='reference'
    )[0]
    masks = (data.train_mask, data.val_mask, data.test_mask)
    assert tuple(int(m.sum()) for m in masks) == sizes
    for mask in masks[:1]:
        assert int((data.y[mask] == 0).sum()) == int((data.y[mask] == 1).sum())
    assert bool((torch.stack(masks).sum(0) <= 1).all())
    folder = osp.dirname(
        FairGraphDataset(
            str(tmp_path), name, split='reference'
        ).processed_paths[0]
    )
    assert osp.basename(folder).startswith(
        f'format{PROCESSED_FORMAT}_reference20_budget'
    )


def test_a_per_class_budget_below_2_is_refused(tmp_path):
    # it trains label_budget // 2 nodes of each class: none with 1
    y = torch.tensor([0, 1] * 20)
    with pytest.raises(ValueError, match="none with 'label_budget=1'"):
        per_class_split(y, 1)
    assert int(per_class_split(y, 2)[0].sum()) == 2
    with pytest.raises(ValueError, match='pass at least 2'):
        FairGraphDataset(str(tmp_path), 'german', 1, 1, split='reference')
    assert not list(tmp_path.iterdir())
    nba = FairGraphDataset(str(tmp_path), 'nba', label_budget=1)[0]
    assert int(nba.train_mask.sum()) == 1  # no classes to halve it
