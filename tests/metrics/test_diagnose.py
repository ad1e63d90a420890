r"""diagnose: what decides whether BeMap has room to act, on graphs small
enough to count by hand."""

import json
import math

import pytest
import torch
from torch_geometric.data import Data

from pyg_bemap import SamplerSettings, diagnose
from tests.conftest import random_graph


def path_graph() -> Data:
    # 0 - 1 - 2 - 3, groups 0 0 1 1, labels 1 0 1 1
    edge_index = torch.tensor([[0, 1, 1, 2, 2, 3], [1, 0, 2, 1, 3, 2]])
    return Data(
        x=torch.randn(4, 3),
        edge_index=edge_index,
        s=torch.tensor([0, 0, 1, 1]),
        y=torch.tensor([1, 0, 1, 1]),
    )


def test_the_diagnosis_of_a_path_counted_by_hand():
    d = diagnose(path_graph())
    assert (d.num_nodes, d.num_edges, d.group_sizes) == (4, 6, [2, 2])
    assert d.edge_homophily == pytest.approx(4 / 6)
    assert d.group_homophily == pytest.approx([2 / 3, 2 / 3])
    # nodes 0 and 3 see their own group only
    assert d.one_group_fraction == pytest.approx(0.5)
    # each node keeps one neighbour: 0 and 3 all of one, 1 and 2 one of
    # the other group (their own group is full with themselves)
    assert d.kept_edge_fraction == pytest.approx(4 / 6)
    # two hops: nodes 0 and 3 reach two of one group and one of the other
    assert d.imbalance == pytest.approx(
        dict(min=0, q25=0, median=0.5, q75=1, max=1, mean=0.5)
    )
    assert d.label_gap == 0.5  # rates 1/2 and 2/2, in float64
    assert d.mlp_gap is None


def test_self_loops_and_unlabelled_nodes_do_not_count():
    data = path_graph()
    data.edge_index = torch.cat(
        [data.edge_index, torch.tensor([[0, 3], [0, 3]])], dim=1
    )
    data.y = torch.tensor([1, -1, 1, 1])  # node 1 unlabelled
    d = diagnose(data)
    assert d.num_edges == 6 and d.kept_edge_fraction == pytest.approx(4 / 6)
    assert d.label_gap == 0.0  # every labelled node is positive


def test_settings_change_what_a_sample_keeps():
    data = random_graph(60, 600, 2, 0)
    data.y = torch.randint(0, 2, (60,), generator=torch.Generator())
    few = diagnose(data, settings=SamplerSettings(beta=0.0, min_keep=0))
    many = diagnose(data, settings=SamplerSettings(beta=1.0))
    assert few.kept_edge_fraction <= many.kept_edge_fraction
    assert many.settings == SamplerSettings(beta=1.0)


def test_the_dict_is_json_and_has_every_key():
    out = diagnose(path_graph()).to_dict()
    assert set(out) == {
        'num_nodes',
        'num_edges',
        'group_sizes',
        'edge_homophily',
        'group_homophily',
        'one_group_fraction',
        'kept_edge_fraction',
        'imbalance',
        'label_gap',
        'mlp_gap',
        'settings',
    }
    json.dumps(out)


def test_the_mlp_gap_is_seeded_and_leaves_the_global_rng_alone():
    data = random_graph(200, 2000, 2, 1)
    data.y = (data.x[:, 0] > 0).long()
    state = torch.random.get_rng_state()
    first = diagnose(data, mlp=True, seed=3).mlp_gap
    assert torch.equal(torch.random.get_rng_state(), state)
    assert diagnose(data, mlp=True, seed=3).mlp_gap == first
    assert 0.0 <= first <= 1.0


def test_the_text_fits_80_columns():
    text = str(diagnose(path_graph(), mlp=True))
    assert 'one-group neighbourhoods: 50.0 %' in text
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize(
    'change, match',
    [
        (lambda d: delattr(d, 's'), "sensitive attribute 's' is missing"),
        (
            lambda d: setattr(d, 's', torch.zeros(4, dtype=torch.long)),
            'one group only',
        ),
        (
            lambda d: setattr(d, 'y', torch.tensor([0, 1, 2, 1])),
            r'must be binary \(0 and 1, -1 for unlabelled nodes; got 0, 1, 2',
        ),
        (lambda d: delattr(d, 'y'), "one label per node in 'data.y'"),
    ],
)
def test_bad_graphs_are_refused_with_what_to_do(change, match):
    data = path_graph()
    change(data)
    with pytest.raises(ValueError, match=match):
        diagnose(data)


def test_a_gap_with_one_labelled_group_is_nan_with_a_warning():
    data = path_graph()
    data.y = torch.tensor([1, -1, -1, 0])  # only group 0 has labels
    data.y[data.s == 1] = -1
    with pytest.warns(UserWarning, match='undefined'):
        d = diagnose(data)
    assert math.isnan(d.label_gap)


def test_the_mlp_never_fits_unlabelled_nodes(monkeypatch):
    data = random_graph(60, 600, 2, 0)
    data.y = torch.randint(0, 2, (60,), generator=torch.Generator())
    data.y[::3] = -1
    data.train_mask = torch.ones(60, dtype=torch.bool)  # covers y = -1
    data.test_mask = torch.ones(60, dtype=torch.bool)
    targets = []
    fit = torch.nn.functional.binary_cross_entropy_with_logits

    def spy(logits, target):
        targets.append(target)
        return fit(logits, target)

    monkeypatch.setattr(
        torch.nn.functional, 'binary_cross_entropy_with_logits', spy
    )
    diagnose(data, mlp=True)
    assert targets and all(bool((t >= 0).all()) for t in targets)
    assert targets[0].numel() == int((data.y >= 0).sum())


@pytest.mark.parametrize('attribute', ['edge_index', 'y'])
def test_numpy_inputs_are_named_as_the_wrong_type(attribute):
    data = path_graph()
    setattr(data, attribute, getattr(data, attribute).numpy())
    with pytest.raises(
        ValueError, match=f"'data.{attribute}' must be a torch"
    ):
        diagnose(data)


def test_long_lines_wrap_within_80_columns():
    data = random_graph(300, 3000, 5, 1)  # five groups: a long line
    data.y = (data.x[:, 0] > 0).long()
    lines = str(diagnose(data)).splitlines()
    assert max(len(line) for line in lines) <= 80
    groups = lines.index(next(x for x in lines if x.startswith('groups:')))
    assert lines[groups + 1].startswith('    ') and '4: ' in lines[groups + 1]


def test_undefined_values_are_null_in_the_dict():
    data = path_graph()
    data.y = torch.tensor([1, 0, -1, -1])  # group 1 has no labelled node
    with pytest.warns(UserWarning, match='statistical-parity gap'):
        out = diagnose(data).to_dict()
    assert out['label_gap'] is None
    text = json.dumps(out, allow_nan=False)
    assert '"label_gap": null' in text


@pytest.mark.parametrize('train', [[], [0]])
def test_the_mlp_gap_is_nan_without_two_labelled_training_nodes(train):
    data = random_graph(200, 2000, 2, 1)
    data.y = (data.x[:, 0] > 0).long()
    data.train_mask = torch.zeros(200, dtype=torch.bool)
    data.train_mask[train] = True
    data.test_mask = ~data.train_mask
    with pytest.warns(UserWarning, match='fewer than two labelled training'):
        gap = diagnose(data, mlp=True).mlp_gap
    assert math.isnan(gap)


def test_gaps_are_float64_rates():
    data = path_graph()
    data.y = torch.tensor([1, 0, 1, 0])  # rates 1/2 and 1/2
    assert diagnose(data).label_gap == 0.0
    big = random_graph(300, 3000, 2, 1)
    big.y = (torch.arange(300) % 3 == 0).long()
    d = diagnose(big)
    sens, y = big.s, big.y
    rates = [float(y[sens == g].double().mean()) for g in (0, 1)]
    assert d.label_gap == abs(rates[0] - rates[1])


def test_features_that_are_not_finite_are_refused_for_the_mlp():
    data = random_graph(200, 2000, 2, 1)
    data.y = (data.x[:, 0] > 0).long()
    data.x = data.x.clone()
    data.x[5, 0] = float('nan')
    diagnose(data)  # the MLP alone reads the features
    with pytest.raises(ValueError, match="'data.x' holds NaN"):
        diagnose(data, mlp=True)


def _mlp_graph():
    data = random_graph(200, 2000, 2, 1)
    data.y = (data.x[:, 0] + data.s > 0.5).long()
    return data


def test_each_split_mask_is_used_on_its_own(monkeypatch):
    fitted = []
    fit = torch.nn.functional.binary_cross_entropy_with_logits

    def spy(logits, target):
        fitted.append(target.numel())
        return fit(logits, target)

    monkeypatch.setattr(
        torch.nn.functional, 'binary_cross_entropy_with_logits', spy
    )
    data = _mlp_graph()
    train = torch.arange(200) < 20
    data.train_mask = train  # a train mask alone: tested on the others
    alone = diagnose(data, mlp=True).mlp_gap
    assert fitted[-1] == 20
    data.test_mask = ~train
    assert diagnose(data, mlp=True).mlp_gap == alone
    del data.train_mask
    data.test_mask = torch.arange(200) >= 150  # a test mask alone: trained
    diagnose(data, mlp=True)  # on half of the labelled nodes outside it
    assert fitted[-1] == 75


def test_split_masks_may_be_indices_and_must_be_one_split():
    data = _mlp_graph()
    data.train_mask = torch.arange(200) < 100
    data.test_mask = ~data.train_mask
    as_masks = diagnose(data, mlp=True).mlp_gap
    data.train_mask = torch.arange(100)
    data.test_mask = torch.arange(100, 200)
    assert diagnose(data, mlp=True).mlp_gap == as_masks
    data.train_mask = torch.ones(200, 3, dtype=torch.bool)  # three splits
    with pytest.raises(ValueError, match="'data.train_mask' must have shape"):
        diagnose(data, mlp=True)


@pytest.mark.parametrize('seed', [-1, 1.5, True, 2**63])
def test_a_seed_that_is_no_seed_is_refused(seed):
    from pyg_bemap.metrics import sensitive_attribute_probe

    data = path_graph()
    with pytest.raises(ValueError, match="'seed' must be a seed"):
        diagnose(data, seed=seed)
    with pytest.raises(ValueError, match="'seed' must be a seed"):
        sensitive_attribute_probe(data.x, data.edge_index, data.s, seed=seed)
