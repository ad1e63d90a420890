import pytest
import torch

from pyg_bemap.datasets import biased_sbm
from pyg_bemap.metrics import propagate, sensitive_attribute_probe


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
    held_out = data.s[torch.randperm(1500, generator=torch.Generator()
                                     .manual_seed(0))[750:]]  # fmt: skip
    share = held_out.float().mean().item()
    assert strong.base_rate == pytest.approx(max(share, 1 - share))
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
    first, base, second = ax.get_lines()
    assert set(base.get_ydata()) == {result.base_rate}  # drawn once
    for style in ('get_marker', 'get_linestyle', 'get_color'):
        assert getattr(first, style)() != getattr(second, style)()
    counts = [t.get_text() for t in ax.texts]  # once, for the first probe
    assert counts == [f'n={b.count}' for b in result.bins if b.count]
    assert ax.get_legend().get_bbox_to_anchor().x0 > ax.bbox.x1  # outside
    fig.savefig(tmp_path / 'probe.png')
    assert (tmp_path / 'probe.png').stat().st_size > 0
