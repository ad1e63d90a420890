import json
import math
import warnings

import numpy as np
import pytest
import torch
from fairlearn.metrics import (
    MetricFrame,
    demographic_parity_difference,
    equal_opportunity_difference,
    true_positive_rate,
)
from sklearn.metrics import accuracy_score, roc_auc_score

from pyg_bemap import fairness_report
from pyg_bemap.metrics import (
    FairnessReport,
    OnePredictedClassWarning,
    roc_auc,
)


def random_case(num_groups, seed, n=400, columns=1):
    gen = torch.Generator().manual_seed(seed)
    shape = (n,) if columns == 1 else (n, columns)
    pred = torch.randn(*shape, generator=gen)
    y = torch.randint(0, 2, (n,), generator=gen)
    sens = torch.randint(0, num_groups, (n,), generator=gen)
    return pred, y, sens


@pytest.mark.parametrize('num_groups', [2, 3])
@pytest.mark.parametrize('columns', [1, 2])
@pytest.mark.parametrize('seed', [0, 1])
def test_report_matches_sklearn_and_fairlearn(num_groups, columns, seed):
    pred, y, sens = random_case(num_groups, seed, columns=columns)
    mask = torch.rand(400, generator=torch.Generator().manual_seed(9)) < 0.6
    report = fairness_report(pred, y, sens, mask=mask)
    if columns == 2:
        score = pred.softmax(-1)[:, 1][mask].numpy()
        y_hat = (pred.argmax(-1) == 1)[mask].long().numpy()
    else:
        score = pred[mask].numpy()
        y_hat = (pred[mask] > 0).long().numpy()
    y_true, s = y[mask].numpy(), sens[mask].numpy()
    assert report.accuracy == pytest.approx(
        accuracy_score(y_true, y_hat), abs=1e-6
    )
    assert report.auc == pytest.approx(roc_auc_score(y_true, score), abs=1e-6)
    assert report.delta_sp == pytest.approx(
        demographic_parity_difference(y_true, y_hat, sensitive_features=s),
        abs=1e-6,
    )
    assert report.delta_eo == pytest.approx(
        equal_opportunity_difference(y_true, y_hat, sensitive_features=s),
        abs=1e-6,
    )
    frame = MetricFrame(
        metrics={
            'acc': accuracy_score,
            'tpr': true_positive_rate,
            'rate': lambda t, p: float(np.mean(p)),
            'auc': lambda t, p: 0.0,
        },
        y_true=y_true,
        y_pred=y_hat,
        sensitive_features=s,
    )
    for g, m in report.by_group.items():
        row = frame.by_group.loc[g]
        assert m.size == int((s == g).sum())
        assert m.accuracy == pytest.approx(row['acc'], abs=1e-6)
        assert m.true_positive_rate == pytest.approx(row['tpr'], abs=1e-6)
        assert m.positive_rate == pytest.approx(row['rate'], abs=1e-6)
        assert m.auc == pytest.approx(
            roc_auc_score(y_true[s == g], score[s == g]), abs=1e-6
        )


def test_two_group_gaps_are_the_papers_absolute_differences():
    pred = torch.tensor([1.0, 1.0, -1.0, 1.0, -1.0, -1.0])
    y = torch.tensor([1, 0, 1, 1, 1, 0])
    sens = torch.tensor([0, 0, 0, 1, 1, 1])
    report = fairness_report(pred, y, sens)
    assert report.delta_sp == pytest.approx(abs(2 / 3 - 1 / 3))
    assert report.delta_eo == pytest.approx(abs(1 / 2 - 1 / 2))
    assert report.by_group[0].positive_rate == pytest.approx(2 / 3)


@pytest.mark.parametrize('num_groups', [2, 3])
def test_the_threshold_free_gap_is_of_mean_probabilities(num_groups):
    pred, y, sens = random_case(num_groups, 4, columns=2)
    mask = torch.rand(400, generator=torch.Generator().manual_seed(2)) < 0.5
    probability = pred.double().softmax(-1)[:, 1]
    means = [probability[mask & (sens == g)].mean() for g in range(num_groups)]
    expected = float(max(means) - min(means))
    margin = pred[:, 1] - pred[:, 0]
    for args in (
        (pred, {}),  # two-class outputs
        (margin, {}),  # logits
        (margin.sigmoid(), {'threshold': 0.5}),  # probabilities
    ):
        report = fairness_report(args[0], y, sens, mask=mask, **args[1])
        assert report.delta_prob == pytest.approx(expected, abs=1e-6)
        for g in range(num_groups):
            assert report.by_group[g].mean_probability == pytest.approx(
                float(means[g]), abs=1e-6
            )


def test_the_threshold_free_gap_ignores_the_threshold():
    # scores that all clear the threshold: delta_sp is 0, the gap is not
    pred = torch.tensor([3.0, 2.5, 2.0, 0.5, 0.4, 0.3])
    y = torch.tensor([1, 0, 1, 1, 0, 1])
    sens = torch.tensor([0, 0, 0, 1, 1, 1])
    with pytest.warns(OnePredictedClassWarning):
        report = fairness_report(pred, y, sens)
    assert report.delta_sp == 0
    high, low = pred[:3].sigmoid().mean(), pred[3:].sigmoid().mean()
    assert report.delta_prob == pytest.approx(float(high - low))
    hard = fairness_report((pred > 1).float(), y, sens, threshold=0.5)
    assert hard.delta_prob == pytest.approx(hard.delta_sp)


def test_threshold_index_mask_and_column_scores():
    pred, y, sens = random_case(2, 3)
    index = torch.arange(0, 400, 3)
    mask = torch.zeros(400, dtype=torch.bool)
    mask[index] = True
    a = fairness_report(pred.view(-1, 1), y, sens, mask=index, threshold=0.5)
    b = fairness_report(pred, y, sens, mask=mask, threshold=0.5)
    assert a == b
    y_hat = (pred[mask] > 0.5).long()
    assert a.accuracy == pytest.approx((y_hat == y[mask]).float().mean())


def test_unlabelled_nodes_are_never_evaluated():
    pred, y, sens = random_case(2, 4)
    y_unlabelled = y.clone()
    y_unlabelled[:100] = -1
    report = fairness_report(pred, y_unlabelled, sens)
    expected = fairness_report(pred[100:], y[100:], sens[100:])
    assert report == expected
    assert sum(m.size for m in report.by_group.values()) == 300


def test_ties_in_scores_use_average_ranks():
    score = torch.tensor([0.5, 0.5, 0.2, 0.9, 0.5])
    label = torch.tensor([1, 0, 0, 1, 0])
    assert roc_auc(score, label) == pytest.approx(
        roc_auc_score(label.numpy(), score.numpy())
    )


def test_degenerate_groups_give_nan_with_a_warning():
    pred = torch.tensor([1.0, -1.0, 1.0, 1.0])
    y = torch.tensor([1, 0, 0, 0])
    sens = torch.tensor([0, 0, 1, 1])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        report = fairness_report(pred, y, sens, num_groups=3)
    messages = sorted(str(w.message) for w in caught)
    assert messages == [
        'Group 1 has no positive label: its true-positive rate is NaN',
        'Group 1 holds a single class: its AUC is NaN',
        'Group 2 has no evaluated member: its metrics are NaN',
        'delta_eo is NaN: it needs two groups where its rate is defined, '
        'and the rate of group(s) [1, 2] is undefined here',
    ]
    # every warning names the caller's line, not the library's
    assert {w.filename for w in caught} == {__file__}
    assert math.isnan(report.by_group[1].true_positive_rate)
    assert math.isnan(report.by_group[1].auc)
    assert report.by_group[2].size == 0
    assert math.isnan(report.by_group[2].positive_rate)
    assert math.isnan(report.delta_eo)  # only group 0 has positives
    assert report.delta_sp == pytest.approx(0.5)


def test_single_class_labels_give_nan_auc_with_a_warning():
    with pytest.warns(UserWarning, match='single class'):
        report = fairness_report(
            torch.randn(10),
            torch.ones(10, dtype=torch.long),
            torch.tensor([0, 1] * 5),
        )
    assert math.isnan(report.auc)


def test_str_and_dict():
    pred, y, sens = random_case(2, 5)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        report = fairness_report(pred, y, sens)
    text = str(report)
    assert 'overall' in text and 'delta_sp' in text and 'TPR' in text
    assert len(text.splitlines()) == 7
    assert '<table>' in report._repr_html_()
    d = report.to_dict()
    assert set(d) == {
        'accuracy',
        'auc',
        'delta_sp',
        'delta_eo',
        'delta_prob',
        'by_group',
    }
    assert 'delta_prob' in text and 'mean p' in text
    assert d['by_group'][0]['size'] == report.by_group[0].size
    assert isinstance(report, FairnessReport)


def test_inputs_are_not_modified():
    pred, y, sens = random_case(2, 6, columns=2)
    copies = [t.clone() for t in (pred, y, sens)]
    fairness_report(pred, y, sens)
    assert all(torch.equal(a, b) for a, b in zip(copies, (pred, y, sens)))


@pytest.mark.parametrize(
    'kwargs, match',
    [
        (dict(pred=torch.randn(10, 3)), 'multi-class'),
        (dict(pred=torch.randn(9)), 'one label per node'),
        (dict(pred=[0.1] * 10), 'torch.Tensor'),
        (dict(pred=torch.tensor([float('nan')] * 10)), 'NaN'),
        (
            dict(y=torch.tensor([0, 1, 2, 0, 1, 0, 1, 0, 1, 0])),
            'labels 0 and 1',
        ),
        (dict(y=torch.full((10,), 0.5)), 'integer labels'),
        (dict(sens=torch.tensor([0, 1] * 4)), 'one entry per node'),
        (dict(mask=torch.ones(9, dtype=torch.bool)), 'shape'),
        (dict(mask=torch.tensor([0, 11])), 'outside'),
        (dict(mask=torch.ones(10)), 'boolean mask or'),
        (dict(mask=[0, 1]), 'torch.Tensor'),
        (
            dict(y=torch.zeros(10, dtype=torch.long, device='meta')),
            'same device',
        ),
    ],
)
def test_bad_inputs(kwargs, match):
    args = dict(
        pred=torch.randn(10),
        y=torch.tensor([0, 1] * 5),
        sens=torch.tensor([0, 0, 1, 1, 0, 1, 0, 1, 0, 1]),
    )
    args.update(kwargs)
    mask = args.pop('mask', None)
    with pytest.raises(ValueError, match=match):
        fairness_report(args['pred'], args['y'], args['sens'], mask=mask)


def test_a_threshold_warning_only_where_the_scales_disagree(recwarn):
    y = torch.tensor([0, 1, 1, 0])
    sens = torch.tensor([0, 0, 1, 1])
    hard = torch.tensor([0.0, 1.0, 1.0, 0.0])
    for pred in (hard, hard.long(), hard.bool()):  # right under threshold 0
        report = fairness_report(pred, y, sens)
        assert report.accuracy == 1.0
    fairness_report(hard, y, sens, threshold=0.5)  # and under 0.5
    fairness_report(torch.tensor([-2.0, 3.0, 1.5, -0.1]), y, sens)  # logits
    fairness_report(torch.tensor([0.1, 0.9, 0.7, 0.2]), y, sens, threshold=0.5)
    # logits that happen to lie in [0, 1] (an untrained model), declared so
    small_logits = torch.tensor([0.1, 0.9, 0.7, 0.2])
    with pytest.warns(UserWarning, match='predicted positive') as got:
        report = fairness_report(small_logits, y, sens, threshold=0)
    assert report.accuracy == 0.5  # every node positive: 0 is the threshold
    assert len(got) == 1  # that one class, no threshold warning
    assert len(recwarn) == 0
    with pytest.warns(UserWarning, match='looks like probabilities') as got:
        fairness_report(torch.tensor([0.1, 0.9, 0.7, 0.2]), y, sens)
    assert got[0].filename == __file__  # points at the caller
    with pytest.warns(UserWarning, match="like logits. Leave out 'threshold'"):
        logits = torch.tensor([-2.0, 3.0, 1.5, -0.1])
        fairness_report(logits, y, sens, threshold=0.5)


@pytest.mark.parametrize(
    'score, label, match',
    [
        ([0.5, 0.2, 0.3], [0.0, 0.4, 1.0], "'label' must hold the labels 0"),
        ([0.5, 0.2, 0.3], [0, 2, 1], r'labels 0 and 1 \(got \[0, 1, 2\]'),
        ([0.5, math.nan, 0.3], [0, 1, 1], "'score' holds NaN"),
        ([0.5, 0.2], [0, 1, 1], 'of one size'),
    ],
)
def test_roc_auc_refuses_what_has_no_auc(score, label, match):
    with pytest.raises(ValueError, match=match):
        roc_auc(torch.tensor(score), torch.tensor(label))


def test_roc_auc_names_inputs_on_two_devices():
    label = torch.tensor([0, 1, 1], device='meta')
    with pytest.raises(ValueError, match="'label' on meta.*'.to.device.'"):
        roc_auc(torch.tensor([0.5, 0.2, 0.3]), label)


def test_two_column_outputs_of_any_dtype():
    out = torch.tensor([[True, False], [False, True]] * 2 + [[False, True]])
    y, sens = torch.tensor([0, 1, 1, 1, 0]), torch.tensor([0, 0, 1, 1, 1])
    as_bool = fairness_report(out, y, sens)
    as_float = fairness_report(out.float(), y, sens)
    assert as_bool.to_dict() == as_float.to_dict()
    assert as_bool.accuracy == pytest.approx(3 / 5)


def test_empty_inputs_say_there_is_nothing_to_evaluate():
    empty = torch.zeros(0)
    with pytest.raises(ValueError, match='holds no node: there is nothing'):
        fairness_report(empty, empty.long(), empty.long())


def test_confident_two_class_outputs_keep_their_ranking():
    # class 1's softmax probability rounds to 1.0 from margins of about 17
    margin = torch.arange(20.0, 40.0)
    y = torch.tensor([0] * 10 + [1] * 10)
    sens = torch.tensor([0, 1] * 10)
    for dtype in (torch.float32, torch.float64):
        out = torch.stack([torch.zeros(20), margin], 1).to(dtype)
        report = fairness_report(out, y, sens)
        assert report.auc == 1.0
        assert report.by_group[0].auc == 1.0
    scores = torch.randn(50, 2, generator=torch.Generator().manual_seed(0))
    labels = torch.arange(50) % 2
    expected = roc_auc_score(labels, scores.softmax(-1)[:, 1].double())
    got = fairness_report(scores, labels, labels.flip(0)).auc
    assert got == pytest.approx(expected)


def test_a_threshold_with_two_class_outputs_is_refused():
    pred, y, sens = random_case(2, 7, columns=2)
    with pytest.raises(ValueError, match="'threshold' applies to one-column"):
        fairness_report(pred, y, sens, threshold=0.9)


def test_an_index_mask_that_repeats_a_node_is_refused():
    pred, y, sens = random_case(2, 8)
    for index in ([0, 0, 3], [1, -399]):  # -399 is node 1
        with pytest.raises(ValueError, match='names a node more than once'):
            fairness_report(pred, y, sens, mask=torch.tensor(index))


def test_one_predicted_class_warns_that_the_gaps_say_nothing():
    pred, y, sens = random_case(2, 9)
    log_probabilities = torch.nn.functional.logsigmoid(pred)  # all below 0
    with pytest.warns(OnePredictedClassWarning, match='negative') as got:
        report = fairness_report(log_probabilities, y, sens)
    assert report.delta_sp == 0.0 and got[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        fairness_report(pred, y, sens)  # both classes: no warning


def test_rates_are_float64_and_the_dict_is_nested_json():
    y = torch.tensor([1, 0, 0, 1, 1, 0])
    sens = torch.tensor([0, 0, 0, 1, 1, 1])
    pred = torch.tensor([1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
    report = fairness_report(pred, y, sens)
    assert report.by_group[0].positive_rate == 2 / 3  # not float32's
    assert report.accuracy == 4 / 6
    with pytest.warns(UserWarning, match='no positive label'):
        lonely = fairness_report(pred, torch.tensor([1, 0, 0, 0, 0, 0]), sens)
    out = lonely.to_dict()
    assert out['by_group'][1]['true_positive_rate'] is None
    assert out['delta_eo'] is None
    assert json.loads(json.dumps(out, allow_nan=False)) == {
        **out,
        'by_group': {str(g): m for g, m in out['by_group'].items()},
    }
