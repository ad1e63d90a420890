import pytest
import torch

from pyg_bemap.nn import forward_pass
from pyg_bemap.nn.forward_pass import current_pass, install_pass_tracking


class Probe(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.passes = []

    def forward(self, x):
        self.passes.append(current_pass())
        return x


class Model(torch.nn.Module):
    def __init__(self, fail=False):
        super().__init__()
        self.a, self.b = Probe(), Probe()
        self.fail = fail

    def forward(self, x):
        x = self.b(self.a(x))
        if self.fail:
            raise RuntimeError('boom')
        return self.a(x)


def test_one_pass_per_model_call():
    install_pass_tracking()
    model = Model()
    model(torch.ones(1))
    model(torch.ones(1))
    first, second = model.a.passes[0], model.a.passes[2]
    assert model.a.passes == [first, first, second, second]
    assert model.b.passes == [first, second]
    assert second != first


def test_a_module_called_on_its_own_has_no_pass():
    install_pass_tracking()
    probe = Probe()
    probe(torch.ones(1))
    assert probe.passes == [None]


def test_depth_recovers_after_an_exception():
    install_pass_tracking()
    with pytest.raises(RuntimeError, match='boom'):
        Model(fail=True)(torch.ones(1))
    assert forward_pass._depth == 0
    probe = Probe()
    probe(torch.ones(1))
    assert probe.passes == [None]
