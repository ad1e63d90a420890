import copy
import io

import pytest
import torch

from pyg_bemap import (
    BeMapEdgeIndex,
    BeMapInfo,
    SamplerSettings,
    attach_bemap,
    get_bemap,
)
from tests.conftest import random_graph


def carrier():
    data = random_graph(20, 80)
    balance = torch.rand(20) + 0.1
    return attach_bemap(data.edge_index, data.s, balance), data, balance


def assert_same_info(a, b):
    assert isinstance(a, BeMapEdgeIndex) and isinstance(b, BeMapEdgeIndex)
    assert torch.equal(a.as_tensor(), b.as_tensor())
    assert torch.equal(a.bemap.sens, b.bemap.sens)
    assert torch.equal(a.bemap.balance, b.bemap.balance)
    assert a.bemap.num_groups == b.bemap.num_groups
    assert a.bemap.grouping is not None and b.bemap.grouping is not None
    for x, y in zip(a.bemap.grouping, b.bemap.grouping):
        assert torch.equal(x, y)


def test_attach_copies_the_edges_and_keeps_input():
    edge_index, data, balance = carrier()
    assert get_bemap(edge_index) is edge_index.bemap
    assert get_bemap(data.edge_index) is None
    assert type(data.edge_index) is torch.Tensor
    assert torch.equal(edge_index.as_tensor(), data.edge_index)
    # its own memory: an alias of the input made before cannot edit it
    assert edge_index.as_tensor().data_ptr() != data.edge_index.data_ptr()
    assert edge_index.bemap.num_groups == 2
    assert edge_index.bemap.grouping is not None


@pytest.mark.parametrize(
    'op',
    [
        lambda e: e.clone(),
        lambda e: e.to('cpu'),
        lambda e: e.to(torch.device('cpu'), copy=True),
        lambda e: e.cpu(),
        lambda e: e.detach(),
        lambda e: e.contiguous(),
        copy.deepcopy,
    ],
)
def test_information_survives_copies(op):
    edge_index, _, _ = carrier()
    out = op(edge_index)
    assert_same_info(edge_index, out)


def test_information_survives_save_and_load():
    edge_index, _, _ = carrier()
    buffer = io.BytesIO()
    torch.save(edge_index, buffer)
    buffer.seek(0)
    out = torch.load(buffer)  # weights_only=True by default
    assert_same_info(edge_index, out)


def test_deepcopy_copies_memory():
    edge_index, _, _ = carrier()
    out = copy.deepcopy(edge_index)
    assert out.data_ptr() != edge_index.data_ptr()
    assert out.bemap.sens.data_ptr() != edge_index.bemap.sens.data_ptr()


def test_other_operations_give_plain_tensors():
    edge_index, _, _ = carrier()
    assert type(edge_index[0]) is torch.Tensor
    assert type(edge_index.flip(0)) is torch.Tensor
    assert type(edge_index + 1) is torch.Tensor
    assert type(torch.cat([edge_index, edge_index], 1)) is torch.Tensor
    assert type(edge_index.as_tensor()) is torch.Tensor


def test_repr():
    edge_index = attach_bemap(
        torch.tensor([[0, 1], [1, 0]]), torch.tensor([0, 1]), torch.ones(2)
    )
    assert repr(edge_index) == (
        'BeMapEdgeIndex([[0, 1],\n        [1, 0]], '
        'bemap=BeMapInfo(num_nodes=2, num_groups=2))'
    )


def test_info_validates_inputs():
    with pytest.raises(ValueError, match='shape'):
        BeMapInfo(torch.tensor([0, 1]), torch.ones(3))
    with pytest.raises(ValueError, match='negative'):
        BeMapInfo(torch.tensor([0, -1]), torch.ones(2))
    with pytest.raises(ValueError, match='only 2 nodes'):
        attach_bemap(
            torch.tensor([[0, 2], [1, 0]]), torch.tensor([0, 1]), torch.ones(2)
        )


def test_sampler_cache_is_rebuilt_for_another_graph():
    edge_index, data, balance = carrier()
    info = edge_index.bemap
    cache = info.sampler(edge_index, edge_index.as_tensor())
    assert info.sampler(edge_index, edge_index.as_tensor()) is cache
    other = data.edge_index[:, :10]
    assert info.sampler(other, other) is not cache
    assert info.grouping.perm.numel() <= 10


def test_an_alias_shares_the_information_and_a_copy_keeps_the_grouping():
    edge_index, _, _ = carrier()
    cache = edge_index.bemap.graph_sampler
    detached = edge_index.detach()
    assert detached.bemap is edge_index.bemap
    assert detached.bemap.sampler(detached, detached.as_tensor()) is cache
    cloned = edge_index.clone()
    assert cloned.bemap is not edge_index.bemap
    assert cloned.bemap.graph_sampler is not cache
    assert cloned.bemap.grouping.perm is cache.grouping.perm  # not regrouped


def test_an_in_place_edit_of_the_carrier_raises():
    edge_index, data, balance = carrier()
    cache = edge_index.bemap.graph_sampler
    assert cache.matches(edge_index)
    edge_index[0, 0] = edge_index[1, 0]  # now a self-loop
    assert not cache.matches(edge_index) and cache.edited(edge_index)
    with pytest.raises(ValueError, match='modified in place'):
        edge_index.bemap.sampler(edge_index, edge_index.as_tensor())


def test_an_in_place_edit_of_a_plain_graph_rebuilds_the_cache():
    data = random_graph(20, 80)
    info = BeMapInfo(data.s, torch.rand(20) + 0.1)
    edges = data.edge_index.clone()
    cache = info.sampler(edges, edges)
    edges[0, 0] = edges[1, 0]  # now a self-loop
    fresh = info.sampler(edges, edges)
    assert fresh is not cache
    assert 0 not in fresh.grouping.perm.tolist()  # self-loops never sampled


def test_a_state_with_the_caches_of_earlier_versions_loads():
    edge_index, data, balance = carrier()
    old = BeMapInfo.__new__(BeMapInfo)
    old.__setstate__(
        dict(
            sens=data.s,
            balance=balance,
            num_groups=2,
            grouping=None,
            _graph=None,
            _plans={},
            _samples={},
            _masked_adjacency=None,
        )
    )
    assert old.graph_sampler is None and not hasattr(old, '_plans')
    plain = edge_index.as_tensor()
    assert old.sampler(plain, plain).plan(SamplerSettings()).num_edges == 80


def prepared_graph():
    from pyg_bemap import BalanceAwareSampling

    return BalanceAwareSampling()(random_graph(30, 200, seed=2, simple=True))


EDITS = {
    'indexing': lambda t: t.__setitem__((0,), t[0].flip(0)),
    '.data': lambda t: t.data.__setitem__((0,), t.data[0].flip(0)),
    'numpy view': lambda t: t.numpy().__setitem__(0, t.numpy()[0][::-1]),
}


@pytest.mark.parametrize('route', list(EDITS))
def test_an_edit_of_the_sensitive_attribute_is_detected(route):
    from torch_geometric.nn import GCNConv

    from pyg_bemap import BeMapConv

    data = prepared_graph()
    # the groups are a copy: the edit cannot reach them silently
    assert data.edge_index.bemap.sens.data_ptr() != data.s.data_ptr()
    layer = BeMapConv(GCNConv(8, 4))
    layer(data.x, data.edge_index)
    s = data.s.view(1, -1)  # a 2-D view, so the edits above apply
    EDITS[route](s)
    with pytest.raises(ValueError, match="'s' was modified in place"):
        layer(data.x, data.edge_index)


EDGE_EDITS = {
    'indexing': lambda edges, new: edges.__setitem__((..., slice(50)), new),
    '.data': lambda edges, new: edges.data.__setitem__((..., slice(50)), new),
    'numpy view': lambda edges, new: (
        edges.as_tensor().numpy().__setitem__((..., slice(50)), new.numpy())
    ),
}


@pytest.mark.parametrize('route', list(EDGE_EDITS))
@pytest.mark.parametrize('layout', ['auto', 'edge_index'])
def test_an_edit_of_the_edges_is_detected(route, layout):
    from torch_geometric.nn import GCNConv

    from pyg_bemap import BeMapConv

    data = prepared_graph()
    layer = BeMapConv(GCNConv(8, 4), layout=layout)
    layer(data.x, data.edge_index)
    new = data.edge_index.as_tensor()[:, :50].flip(1).clone()
    new[0, 0] = (new[0, 0] + 1) % 30
    EDGE_EDITS[route](data.edge_index, new)
    with pytest.raises(ValueError, match="'edge_index' were modified"):
        layer(data.x, data.edge_index)
    layer.eval()  # evaluation on the sparse full graph checks it too
    if layout == 'auto':
        with pytest.raises(ValueError, match="'edge_index' were modified"):
            layer(data.x, data.edge_index)


ALIASES = {
    '.data': lambda edges: edges.data,
    'numpy': lambda edges: edges.numpy(),
    'as_tensor': lambda edges: edges.as_tensor(),
    'a view': lambda edges: edges[0],
    'untyped_storage': lambda edges: edges.untyped_storage(),
}


@pytest.mark.parametrize('alias', list(ALIASES))
def test_untracked_aliases_are_noticed(alias):
    data = prepared_graph()
    info = data.edge_index.bemap
    assert not info.untracked_aliases  # the carrier owns its edges
    data.edge_index.size(), data.edge_index.clone(), data.edge_index.max()
    data.edge_index.to('cpu'), data.edge_index.detach()
    assert not info.untracked_aliases  # nothing handed out its memory
    ALIASES[alias](data.edge_index)
    assert info.untracked_aliases


def test_training_hands_out_no_alias_and_skips_the_content_check():
    from torch_geometric.nn import GCN

    from pyg_bemap import to_bemap

    data = prepared_graph()
    model = to_bemap(GCN(8, 8, num_layers=2))
    model(data.x, data.edge_index).sum().backward()
    model.eval()(data.x, data.edge_index)
    info = data.edge_index.bemap
    assert not info.untracked_aliases
    # with no alias, the check reads the groups and the version counter
    calls = []
    identity = info.graph_sampler._identity
    identity.check_unchanged = lambda: calls.append(1)
    model.train()(data.x, data.edge_index)
    assert calls == []
    data.edge_index.numpy()
    model(data.x, data.edge_index)
    assert calls == [1]


def test_an_edit_of_the_input_after_the_transform_changes_nothing():
    from torch_geometric.data import Data

    from pyg_bemap import BalanceAwareSampling

    graph = random_graph(30, 200, seed=2, simple=True)
    edges = graph.edge_index
    data = BalanceAwareSampling()(Data(**dict(graph.items())))
    before = data.edge_index.as_tensor().clone()
    edges.numpy()[0, 0] = (edges[0, 0] + 1) % 30  # the caller's tensor
    assert torch.equal(data.edge_index.as_tensor(), before)
