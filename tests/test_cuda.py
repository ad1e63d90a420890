r"""What needs a GPU: each test carries the marker ``cuda`` and is skipped
without one (``scripts/gpu_check.sh`` runs them where a GPU is)."""

import pytest
import torch
from torch_geometric.nn import MessagePassing
from torch_geometric.nn.models import GCN

from pyg_bemap import BalanceAwareSampling, BeMapConv, to_bemap
from pyg_bemap.datasets import load_nba

pytestmark = pytest.mark.cuda


class PassThrough(MessagePassing):
    def forward(self, x, edge_index):
        return x


@pytest.fixture(scope='module')
def data():
    return BalanceAwareSampling()(load_nba().to('cuda'))


def test_a_resample_makes_no_host_synchronisation(data):
    conv = BeMapConv(PassThrough(), layout='edge_index').train()
    conv(data.x, data.edge_index)  # the graph's plan, once
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode('error')
    try:
        for _ in range(3):
            conv(data.x, data.edge_index)
    finally:
        torch.cuda.set_sync_debug_mode('default')


def test_a_bemap_training_step_makes_no_host_synchronisation(data):
    model = to_bemap(GCN(data.num_features, 32, 2, 2)).to('cuda')
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    target = data.y.clamp(min=0)

    def step():
        optimizer.zero_grad()
        out = model(data.x, data.edge_index)
        torch.nn.functional.cross_entropy(out, target).backward()
        optimizer.step()

    step()  # the graph's plan and memo, once
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode('error')
    try:
        for _ in range(3):
            step()
    finally:
        torch.cuda.set_sync_debug_mode('default')


def test_the_eval_promise_and_the_same_seed_on_the_gpu(data):
    torch.manual_seed(0)
    vanilla = GCN(data.num_features, 32, 2, 2).to('cuda').eval()
    model = to_bemap(vanilla).eval()
    expected = vanilla(data.x, data.edge_index.as_tensor())
    torch.testing.assert_close(model(data.x, data.edge_index), expected)
    model.train()
    losses = []
    for _ in range(2):
        torch.manual_seed(1)
        losses.append(float(model(data.x, data.edge_index).sum()))
    assert losses[0] == losses[1]
