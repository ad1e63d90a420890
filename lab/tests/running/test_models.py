import pytest
import torch

from pyg_bemap import BalanceAwareSampling, BeMapConv
from pyg_bemap.datasets import biased_sbm
from pyg_bemap_lab.run_config import RunConfig
from pyg_bemap_lab.running.models import NodeClassifier


def test_the_lab_imports_only_public_names_of_the_library():
    import ast
    import pathlib

    import pyg_bemap_lab

    public = {'pyg_bemap', *(f'pyg_bemap.{m}' for m in PUBLIC_PACKAGES)}
    private = []
    for path in pathlib.Path(pyg_bemap_lab.__file__).parent.rglob('*.py'):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith('pyg_bemap.') or (
                    node.module == 'pyg_bemap'
                ):
                    if node.module not in public:
                        private.append(f'{path.name}: {node.module}')
                    else:
                        module = __import__(node.module, fromlist=['_'])
                        private += [
                            f'{path.name}: {node.module}.{alias.name}'
                            for alias in node.names
                            if alias.name not in getattr(module, '__all__', ())
                        ]
    assert private == []


PUBLIC_PACKAGES = ('nn', 'transforms', 'datasets', 'metrics', 'rules')


def test_classifier_outputs_one_logit_per_node():
    model = NodeClassifier(8, 'row', 'uniform', RunConfig(hidden=4))
    data = BalanceAwareSampling()(biased_sbm(50, num_features=8))
    assert model(data.x, data.edge_index).shape == (50,)


def test_a_linear_head_after_the_second_layer():
    data = biased_sbm(60, seed=6)
    model = NodeClassifier(
        data.num_features, 'gcn', None, RunConfig(head=True)
    )
    assert model.conv2.out_channels == 128 and model.head.in_features == 128
    assert model(data.x, data.edge_index).shape == (60,)
    bemap = NodeClassifier(
        data.num_features, 'gcn', 'balance', RunConfig(head=True)
    )
    assert isinstance(bemap.conv2, BeMapConv)
    assert isinstance(bemap.head, torch.nn.Linear)  # not a layer to sample
    assert (
        NodeClassifier(data.num_features, 'gcn', None, RunConfig()).head
        is None
    )


@pytest.mark.parametrize('input_dropout', [0.0, 0.5])
def test_input_dropout_and_hidden_dropout_are_separate(input_dropout):
    data = biased_sbm(40, seed=2)
    config = RunConfig(hidden=8, dropout=0.25, input_dropout=input_dropout)
    torch.manual_seed(0)
    model = NodeClassifier(data.num_features, 'mlp', None, config)
    torch.manual_seed(1)
    out = model(data.x, data.edge_index)
    # the same forward written out: F.dropout's masks, drawn as the model
    # draws them (a uniform draw compared with the rate)
    torch.manual_seed(1)
    x = data.x
    if input_dropout > 0:
        x = x * (torch.rand_like(x) >= input_dropout) / (1 - input_dropout)
    h = model.conv1(x).relu()
    h = h * (torch.rand_like(h) >= 0.25) / 0.75
    assert torch.allclose(out, model.conv2(h).view(-1), atol=1e-6)
    model.eval()
    assert torch.equal(
        model(data.x, data.edge_index),
        model.conv2(model.conv1(data.x).relu()).view(-1),
    )


def test_the_bemap_layers_take_the_sampler_settings():
    config = RunConfig(hidden=4).replace(beta=0.5, min_keep=2)
    model = NodeClassifier(8, 'gcn', 'uniform', config)
    for conv in (model.conv1, model.conv2):
        assert conv.settings == config.sampler_settings('uniform')
