import torch
from torch_geometric.nn.models import GCN

from pyg_bemap import BalanceAwareSampling, BeMapConv, BeMapGCN
from pyg_bemap.datasets import biased_sbm


def test_bemap_gcn_wraps_every_conv_and_matches_gcn_in_eval():
    data = BalanceAwareSampling()(biased_sbm(200, seed=0))
    torch.manual_seed(0)
    fair = BeMapGCN(
        32,
        16,
        num_layers=3,
        out_channels=2,
        beta=0.5,
        min_keep=2,
        strategy='uniform',
        layout='edge_index',
    )
    torch.manual_seed(0)
    vanilla = GCN(32, 16, num_layers=3, out_channels=2)
    assert len(fair.convs) == 3
    for conv in fair.convs:
        assert isinstance(conv, BeMapConv)
        assert (conv.beta, conv.min_keep, conv.strategy, conv.layout) == (
            0.5,
            2,
            'uniform',
            'edge_index',
        )
    fair.eval(), vanilla.eval()
    for a, b in zip(fair.convs, vanilla.convs):
        a.conv.load_state_dict(b.state_dict())
    plain = data.edge_index.as_tensor()
    assert torch.equal(fair(data.x, data.edge_index), vanilla(data.x, plain))
    fair.train()
    fair(data.x, data.edge_index).sum().backward()


def test_bemap_gcn_takes_the_generator_of_its_samples():
    data = BalanceAwareSampling()(biased_sbm(200, seed=0))

    def losses(seed):
        torch.manual_seed(0)
        generator = torch.Generator().manual_seed(seed)
        model = BeMapGCN(32, 16, num_layers=2, out_channels=2,
                         generator=generator)  # fmt: skip
        assert all(c.generator is generator for c in model.convs)
        torch.manual_seed(123)  # the global seed decides nothing
        out = [model(data.x, data.edge_index).sum().item() for _ in range(3)]
        return out

    assert losses(1) == losses(1) and losses(1) != losses(2)
