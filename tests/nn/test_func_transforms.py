r""":mod:`torch.func` transforms of BeMap layers compute what autograd and a
loop compute: the fast routes step aside (their sparse products take no
wrapped tensor) and the sample is drawn outside the transforms. And second
derivatives, where docs/options.md says they exist."""

import pytest
import torch
from torch_geometric.nn import (
    GCNConv,
    GINConv,
    GraphConv,
    SAGEConv,
    SGConv,
    TAGConv,
)

from pyg_bemap import BalanceAwareSampling, BeMapConv, RowNormConv
from pyg_bemap.datasets import biased_sbm

LAYERS = {
    'GCNConv': lambda: GCNConv(8, 4),
    'SAGEConv': lambda: SAGEConv(8, 4),
    'GraphConv': lambda: GraphConv(8, 4),
    'RowNormConv': lambda: RowNormConv(8, 4),
}


@pytest.fixture(scope='module')
def data():
    data = BalanceAwareSampling()(biased_sbm(80, seed=1))
    data.x = data.x[:, :8]
    return data


@pytest.mark.parametrize('training', [False, True])
@pytest.mark.parametrize('name', list(LAYERS))
def test_func_grad_is_autograds_gradient(data, name, training):
    torch.manual_seed(0)
    conv = BeMapConv(LAYERS[name]()).train(training)
    x = data.x.clone().requires_grad_()
    torch.manual_seed(5)  # the same sample in training
    out = conv(x, data.edge_index).square().sum()
    expected = torch.autograd.grad(out, x)[0]
    torch.manual_seed(5)
    grad = torch.func.grad(lambda x: conv(x, data.edge_index).square().sum())(
        data.x
    )
    assert torch.allclose(grad, expected, atol=1e-5)


@pytest.mark.parametrize('name', list(LAYERS))
def test_vmap_over_features_is_a_loop(data, name):
    torch.manual_seed(0)
    conv = BeMapConv(LAYERS[name]()).eval()
    batch = torch.stack([data.x, 2 * data.x, -data.x])
    out = torch.func.vmap(lambda x: conv(x, data.edge_index))(batch)
    for x, y in zip(batch, out):
        assert torch.allclose(y, conv(x, data.edge_index), atol=1e-5)


def test_an_ensemble_by_vmap_over_stacked_weights(data):
    torch.manual_seed(0)
    models = [BeMapConv(GCNConv(8, 4)).eval() for _ in range(3)]
    params, buffers = torch.func.stack_module_state(models)

    def call(params, buffers):
        return torch.func.functional_call(
            models[0], (params, buffers), (data.x, data.edge_index)
        )

    out = torch.func.vmap(call)(params, buffers)
    for model, y in zip(models, out):
        assert torch.allclose(y, model(data.x, data.edge_index), atol=1e-5)


SECOND_DERIVATIVE = {
    **LAYERS,
    'GINConv': lambda: GINConv(torch.nn.Linear(8, 4)),
    'SGConv': lambda: SGConv(8, 4),
    'TAGConv': lambda: TAGConv(8, 4),
}


@pytest.mark.parametrize('training', [False, True])
@pytest.mark.parametrize('name', list(SECOND_DERIVATIVE))
def test_a_second_derivative_as_docs_options_says(data, name, training):
    # every layer with layout='edge_index'; GCNConv and RowNormConv (the
    # library's own products) with the default layout too
    layouts = ['edge_index']
    if name in ('GCNConv', 'RowNormConv'):
        layouts.append('auto')
    for layout in layouts:
        torch.manual_seed(0)
        conv = BeMapConv(SECOND_DERIVATIVE[name](), layout=layout)
        conv.train(training)
        x = data.x.clone().requires_grad_()
        out = conv(x, data.edge_index).square().sum()
        (grad,) = torch.autograd.grad(out, x, create_graph=True)
        grad.square().sum().backward()
        assert x.grad is not None and bool(x.grad.abs().sum() > 0)
