import pytest
import torch

from pyg_bemap.datasets import biased_sbm
from pyg_bemap.metrics import (
    distance_bias,
    majority_ratio,
    propagate,
    sensitive_attribute_probe,
)


def test_probe_reads_the_group_from_leaky_embeddings():
    data = biased_sbm(1500, homophily=0.9, seed=3)
    leaky = propagate(propagate(data.x, data.edge_index), data.edge_index)
    noise = torch.randn_like(data.x)
    strong = sensitive_attribute_probe(leaky, data.edge_index, data.s)
    weak = sensitive_attribute_probe(noise, data.edge_index, data.s)
    assert strong.accuracy > 0.9
    assert weak.accuracy < 0.75
    assert len(strong.bins) == 10
    assert sum(b.count for b in strong.bins) <= 750
    assert strong.bins[0].lower == 0.0 and strong.bins[-1].upper == 1.0
    assert 'majority ratio' in str(strong)
    order = torch.randperm(1500, generator=torch.Generator().manual_seed(0))
    largest = data.s[order[:750]].bincount().argmax()  # of the training half
    share = (data.s[order[750:]] == largest).float().mean().item()
    assert strong.base_rate == pytest.approx(share)
    assert weak.accuracy < strong.base_rate + 0.1  # noise reads ~nothing
    assert f'base rate {strong.base_rate:.4f}' in str(strong)
    again = sensitive_attribute_probe(leaky, data.edge_index, data.s)
    assert again.accuracy == strong.accuracy
    assert [b.count for b in again.bins] == [b.count for b in strong.bins]
    with pytest.raises(ValueError, match='train_ratio'):
        sensitive_attribute_probe(
            noise, data.edge_index, data.s, train_ratio=1.0
        )


def test_probe_plot(tmp_path):
    figure = pytest.importorskip('matplotlib.figure')
    data = biased_sbm(300, seed=3)
    result = sensitive_attribute_probe(
        data.x, data.edge_index, data.s, epochs=20
    )
    fig = figure.Figure()
    ax = fig.subplots()
    assert result.plot(ax, label='features') is ax
    result.plot(ax, label='again')
    first, base, second = ax.get_lines()  # the base rates drawn once
    bins = [b.base_rate for b in result.bins]
    assert list(base.get_ydata()) == pytest.approx(bins, nan_ok=True)
    for style in ('get_marker', 'get_linestyle', 'get_color'):
        assert getattr(first, style)() != getattr(second, style)()
    counts = [t.get_text() for t in ax.texts]  # once, for the first probe
    assert counts == [f'n={b.count}' for b in result.bins if b.count]
    assert ax.get_legend().get_bbox_to_anchor().x0 > ax.bbox.x1  # outside
    fig.savefig(tmp_path / 'probe.png')
    assert (tmp_path / 'probe.png').stat().st_size > 0


def _stars(shares):
    r"""A graph of stars, one per (own, other) pair: a centre whose
    neighbours are :obj:`own` nodes of its group and :obj:`other` of the
    other group (the leaves have no neighbours)."""
    src, dst, sens = [], [], []
    for own, other in shares:
        centre = len(sens)
        sens.append(0)
        for group in [0] * own + [1] * other:
            src.append(len(sens))
            dst.append(centre)
            sens.append(group)
    return torch.tensor([src, dst]), torch.tensor(sens)


def test_probe_bins_start_at_their_lower_edge_and_the_last_holds_1():
    # shares of 3/10, 6/10 and 1 sit on edges that float32 rounds away
    shares = [(3, 7)] * 5 + [(6, 4)] * 4 + [(4, 0)] * 3
    edge_index, sens = _stars(shares)
    h = torch.randn(sens.numel(), 2)
    result = sensitive_attribute_probe(
        h, edge_index, sens, train_ratio=0.01, epochs=1
    )
    counts = [b.count for b in result.bins]
    # the held-out nodes with neighbours are the centres, by their shares
    gen = torch.Generator().manual_seed(0)
    held = torch.randperm(sens.numel(), generator=gen)[1:]  # 1% trains
    ratio = majority_ratio(edge_index, sens)[held]
    expected = [0] * 10
    for value in ratio[~ratio.isnan()].tolist():
        expected[{0.3: 3, 0.6: 6, 1.0: 9}[round(value, 6)]] += 1
    assert counts == expected and sum(counts) > 0
    assert result.bins[3].lower == 0.3 and result.bins[6].lower == 0.6
    text = str(result)
    assert '[0.3, 0.4)' in text and '[0.9, 1]' in text
    assert '[0.6, 0.6)' not in text


def test_probe_bin_labels_show_every_edge():
    edge_index, sens = _stars([(1, 1)] * 4)
    result = sensitive_attribute_probe(
        torch.randn(sens.numel(), 2), edge_index, sens, num_bins=20, epochs=1
    )
    labels = [line.split()[0:2] for line in str(result).splitlines()[2:]]
    assert labels[1] == ['[0.05,', '0.1)'] and labels[-1] == ['[0.95,', '1]']
    assert max(len(line) for line in str(result).splitlines()) <= 80


def test_probe_and_bias_name_inputs_on_two_devices():
    edge_index, sens = _stars([(1, 1)] * 4)
    h, elsewhere = torch.randn(sens.numel(), 2), sens.to('meta')
    match = "'sens' on meta.*'.to.device.'"
    with pytest.raises(ValueError, match=match):
        sensitive_attribute_probe(h, edge_index, elsewhere)
    with pytest.raises(ValueError, match=match):
        distance_bias(h, elsewhere)
    with pytest.raises(ValueError, match=match):
        majority_ratio(edge_index, elsewhere)
    for listed in (sens.tolist(), sens.numpy()):  # before any device
        with pytest.raises(ValueError, match="'sens' must be a torch.Tensor"):
            distance_bias(h, listed)
        with pytest.raises(ValueError, match="'sens' must be a torch.Tensor"):
            sensitive_attribute_probe(h, edge_index, listed)


@pytest.mark.parametrize('bad', [float('nan'), float('inf')])
def test_probe_and_distance_bias_refuse_embeddings_that_are_not_finite(bad):
    edge_index, sens = _stars([(1, 1)] * 4)
    h = torch.randn(sens.numel(), 2)
    h[1, 0] = bad
    with pytest.raises(ValueError, match='NaN, infinite'):
        sensitive_attribute_probe(h, edge_index, sens)
    with pytest.raises(ValueError, match='NaN, infinite'):
        distance_bias(h, sens)
    with pytest.raises(ValueError, match='at least one node'):
        distance_bias(torch.zeros(0, 2), torch.zeros(0, dtype=torch.long))


@pytest.mark.parametrize('num_bins', [0, -1, 2.5, True])
def test_probe_refuses_a_number_of_bins_that_is_not_positive(num_bins):
    edge_index, sens = _stars([(1, 1)] * 4)
    with pytest.raises(ValueError, match='num_bins'):
        sensitive_attribute_probe(
            torch.randn(sens.numel(), 2), edge_index, sens, num_bins=num_bins
        )


def test_each_bin_has_the_base_rate_of_a_probe_that_reads_nothing():
    # groups of 20 % and 80 %, each with 80 % of its edges inside: the
    # minority's nodes have the lower own-group shares, so the bins differ
    # in their groups' shares, and a probe of embeddings that carry no
    # group reaches its bins' base rates (0 at low shares, 1 at high ones)
    gen = torch.Generator().manual_seed(0)
    n = 2000
    sens = (torch.rand(n, generator=gen) < 0.2).long()
    src = torch.arange(n).repeat_interleave(20)
    inside = torch.rand(src.numel(), generator=gen) < 0.8
    members = [(sens == g).nonzero().view(-1) for g in (0, 1)]
    target_group = torch.where(inside, sens[src], 1 - sens[src])
    dst = torch.empty_like(src)
    for g, nodes in enumerate(members):
        chosen = target_group == g
        pick = torch.randint(
            nodes.numel(), (int(chosen.sum()),), generator=gen
        )
        dst[chosen] = nodes[pick]
    edge_index = torch.cat(
        [torch.stack([src, dst]), torch.stack([dst, src])], 1
    )
    h = torch.randn(n, 16, generator=gen)  # independent of the groups
    result = sensitive_attribute_probe(h, edge_index, sens, epochs=100)
    filled = [b for b in result.bins if b.count >= 30]
    rates = [b.base_rate for b in filled]
    assert min(rates) < 0.1 and max(rates) > 0.9
    for b in filled:  # the probe reads nothing: it reaches the base rate
        assert abs(b.accuracy - b.base_rate) < 0.1
    assert 'base rate' in str(result).splitlines()[1]
    order = torch.randperm(n, generator=torch.Generator().manual_seed(0))
    held_out, ratio = sens[order[n // 2 :]], majority_ratio(edge_index, sens)
    in_last = ratio[order[n // 2 :]] >= 0.9
    assert result.bins[-1].base_rate == pytest.approx(
        (held_out[in_last] == 0).double().mean().item()
    )
