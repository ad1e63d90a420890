r"""Activation checkpointing recomputes a BeMap layer with the sample of the
forward pass it recomputes: gradients equal those of the plain run."""

import copy

import pytest
import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint
from torch_geometric.nn import DeepGCNLayer, GCNConv, GENConv

from pyg_bemap import BalanceAwareSampling, BeMapConv, to_bemap
from tests.conftest import random_graph

REGIONS = ('drawing layer', 'sharing layer', 'whole model')


class Net(torch.nn.Module):
    r"""Two GCN layers with dropout; :obj:`region` is checkpointed."""

    def __init__(self, region=None, use_reentrant=True):
        super().__init__()
        self.conv1, self.conv2 = GCNConv(8, 16), GCNConv(16, 4)
        self.region, self.use_reentrant = region, use_reentrant

    def forward(self, x, edge_index):
        if self.region == 'whole model':
            return self._checkpoint(self._layers, x, edge_index)
        return self._layers(x, edge_index)

    def _layers(self, x, edge_index):
        first = self._first
        if self.region == 'drawing layer':
            first = self._checkpointed(first)
        x = first(x, edge_index)
        second = self._second
        if self.region == 'sharing layer':
            second = self._checkpointed(second)
        return second(x, edge_index)

    # dropout inside the regions: its mask must be replayed too
    def _first(self, x, edge_index):
        return F.dropout(self.conv1(x, edge_index), 0.5).relu()

    def _second(self, x, edge_index):
        return F.dropout(self.conv2(x, edge_index), 0.5)

    def _checkpointed(self, fn):
        return lambda *args: self._checkpoint(fn, *args)

    def _checkpoint(self, fn, *args, **kwargs):
        return checkpoint(
            fn, *args, use_reentrant=self.use_reentrant, **kwargs
        )


@pytest.fixture(scope='module')
def data():
    return BalanceAwareSampling()(random_graph(60, 600, 2, 0))


def gradients(model, data, seed=5, before=None):
    model.train()
    x = data.x.clone().requires_grad_()
    if before is not None:  # leaves a sample behind: no backward pass
        before(data.x, data.edge_index)
    torch.manual_seed(seed)
    out = model(x, data.edge_index)
    out.square().sum().backward()
    return [p.grad for p in model.parameters()] + [x.grad]


def assert_same_gradients(plain, checkpointed):
    assert len(plain) == len(checkpointed)
    for a, b in zip(plain, checkpointed):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=0)


@pytest.mark.parametrize('use_reentrant', [True, False])
@pytest.mark.parametrize('region', REGIONS)
@pytest.mark.parametrize('convert', [True, False], ids=['to_bemap', 'own'])
def test_checkpointed_gradients_equal_the_plain_run(
    data, use_reentrant, region, convert
):
    torch.manual_seed(0)
    plain = to_bemap(Net()) if convert else by_hand(Net())
    checkpointed = copy.deepcopy(plain)
    checkpointed.region, checkpointed.use_reentrant = region, use_reentrant
    for seed in (5, 6):  # two passes: the second must not reuse the first
        assert_same_gradients(
            gradients(plain, data, seed), gradients(checkpointed, data, seed)
        )
        plain.zero_grad(), checkpointed.zero_grad()


def test_a_leftover_sample_changes_no_gradient(data):
    torch.manual_seed(0)
    plain = by_hand(Net())
    checkpointed = copy.deepcopy(plain)
    checkpointed.region = 'drawing layer'
    other = copy.deepcopy(plain).train()
    assert_same_gradients(
        gradients(plain, data), gradients(checkpointed, data, before=other)
    )


def by_hand(model):
    r"""The model with its layers wrapped by hand, not by to_bemap."""
    model.conv1, model.conv2 = BeMapConv(model.conv1), BeMapConv(model.conv2)
    return model


class DeepGCN(torch.nn.Module):
    def __init__(self, ckpt_grad):
        super().__init__()
        self.lin = torch.nn.Linear(8, 16)
        self.layers = torch.nn.ModuleList(
            DeepGCNLayer(
                GENConv(16, 16),
                torch.nn.LayerNorm(16),
                torch.nn.ReLU(),
                block='res+',
                dropout=0.2,
                ckpt_grad=ckpt_grad,
            )
            for _ in range(3)
        )

    def forward(self, x, edge_index):
        x = self.lin(x)
        for layer in self.layers:
            x = layer(x, edge_index)
        return x


def test_deep_gcn_layer_with_ckpt_grad(data):
    torch.manual_seed(0)
    plain = to_bemap(DeepGCN(ckpt_grad=False))
    checkpointed = copy.deepcopy(plain)
    for layer in checkpointed.layers:
        layer.ckpt_grad = True
    assert_same_gradients(
        gradients(plain, data), gradients(checkpointed, data)
    )


def test_recomputation_without_the_random_state_raises(data):
    model = to_bemap(Net())
    model.train()

    def region(x, edge_index):
        return model.conv2(x, edge_index)

    x = model.conv1(data.x, data.edge_index).relu()
    out = checkpoint(
        region,
        x,
        data.edge_index,
        use_reentrant=False,
        preserve_rng_state=False,
    )
    with pytest.raises(RuntimeError, match='preserve_rng_state=True'):
        out.sum().backward()


def test_two_forwards_at_one_random_state_with_a_generator_raise(data):
    # with a generator, the two passes' samples differ while their random
    # states (the tickets) agree: the recomputation cannot tell them apart
    generator = torch.Generator().manual_seed(0)
    model = to_bemap(
        Net('whole model', use_reentrant=False), generator=generator
    )
    outputs = []
    for _ in range(2):
        torch.manual_seed(0)
        outputs.append(model(data.x, data.edge_index))
    with pytest.raises(RuntimeError, match='same random state'):
        (outputs[0] + outputs[1]).sum().backward()


def test_two_forwards_at_one_random_state_without_a_generator(data):
    # without one, the same state gives the same seed: one sample, right
    torch.manual_seed(0)
    plain = to_bemap(Net())
    checkpointed = copy.deepcopy(plain)
    checkpointed.region, checkpointed.use_reentrant = 'whole model', False

    def twice(model):
        outputs = []
        for _ in range(2):
            torch.manual_seed(0)
            outputs.append(model(data.x, data.edge_index))
        (outputs[0] + outputs[1]).square().sum().backward()
        return [p.grad for p in model.parameters()]

    assert_same_gradients(twice(plain), twice(checkpointed))
