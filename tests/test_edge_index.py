import copy
import io

import pytest
import torch
from torch_geometric.nn import GCNConv

from pyg_bemap import (
    BeMapConv,
    BeMapEdgeIndex,
    BeMapInfo,
    SamplerSettings,
    attach_bemap,
    get_bemap,
)
from pyg_bemap.rules.draw import group_edges
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
    # the grouping travels as a copy of its own
    for copied, original in zip(out.bemap.grouping, edge_index.bemap.grouping):
        assert torch.equal(copied, original)
        assert copied.data_ptr() != original.data_ptr()


def saved_and_loaded(edge_index):
    buffer = io.BytesIO()
    torch.save(edge_index, buffer)
    buffer.seek(0)
    return torch.load(buffer)


@pytest.mark.parametrize(
    'op',
    [
        lambda e: e,
        lambda e: e.clone(),
        lambda e: e.to(torch.int),
        lambda e: e.detach(),
        lambda e: e.contiguous(),
        copy.deepcopy,
        saved_and_loaded,
    ],
)
def test_no_carrier_is_a_view(op):
    # torch 2.13's compiled training detaches every saved view, graph
    # inputs too, where a tensor subclass fails (tests/nn/test_compile.py)
    edge_index, _, _ = carrier()
    out = op(edge_index)
    assert isinstance(out, BeMapEdgeIndex)
    assert not out._is_view() and out._base is None


def test_other_operations_give_plain_tensors():
    edge_index, _, _ = carrier()
    assert type(edge_index[0]) is torch.Tensor
    assert type(edge_index.flip(0)) is torch.Tensor
    assert type(edge_index + 1) is torch.Tensor
    assert type(torch.cat([edge_index, edge_index], 1)) is torch.Tensor
    assert type(edge_index.as_tensor()) is torch.Tensor
    # a conversion to a dtype of no node ids is no graph (it raised)
    assert type(edge_index.to(torch.float)) is torch.Tensor
    assert type(edge_index.to(torch.int16)) is torch.Tensor
    assert type(edge_index.to(torch.int)) is BeMapEdgeIndex


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
    assert info.sampler(other, other).grouping.perm.numel() <= 10


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
    edge_index.bemap.check_unedited(edge_index)
    edge_index[0, 0] = edge_index[1, 0]  # now a self-loop
    assert not cache.matches(edge_index)
    with pytest.raises(ValueError, match='modified in place'):
        edge_index.bemap.check_unedited(edge_index)


def test_a_write_that_changes_no_edge_is_accepted():
    # as for the sensitive attribute: after a write, the values decide
    edge_index, data, balance = carrier()
    edge_index.add_(0)
    edge_index.bemap.check_unedited(edge_index)
    conv = BeMapConv(GCNConv(data.num_features, 4))
    conv(data.x, edge_index).sum().backward()
    other = int((edge_index[0] != edge_index[0, 0]).nonzero()[0])
    sources = edge_index[0, [0, other]].clone()
    edge_index[0, [other, 0]] = sources  # two sources swapped
    with pytest.raises(ValueError, match='modified in place'):
        conv(data.x, edge_index)


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


def bemap_gcn(data, layout='auto'):
    from torch_geometric.nn import GCNConv

    from pyg_bemap import BeMapConv

    torch.manual_seed(0)
    return BeMapConv(GCNConv(8, 4), layout=layout)


@pytest.mark.parametrize('layout', ['auto', 'edge_index'])
def test_an_edit_of_the_sensitive_attribute(layout):
    data = prepared_graph()
    # the groups are a copy: the edit cannot reach them silently
    assert data.edge_index.bemap.sens.data_ptr() != data.s.data_ptr()
    layer = bemap_gcn(data, layout)
    layer(data.x, data.edge_index)
    data.s[0] = 1 - data.s[0]
    layer.eval()(data.x, data.edge_index)  # evaluation reads no groups
    with pytest.raises(ValueError, match="'s' was modified in place"):
        layer.train()(data.x, data.edge_index)


@pytest.mark.parametrize('layout', ['auto', 'edge_index'])
def test_an_edit_of_the_edges(layout):
    data = prepared_graph()
    layer = bemap_gcn(data, layout)
    layer.eval()(data.x, data.edge_index)  # the full graph, remembered
    layer.train()(data.x, data.edge_index)
    new = data.edge_index.as_tensor()[:, :50].flip(1).clone()
    new[0, 0] = (new[0, 0] + 1) % 30
    data.edge_index[:, :50] = new
    with pytest.raises(ValueError, match="'edge_index' were modified"):
        layer(data.x, data.edge_index)
    # evaluation runs on the edges as they are now, never a stale graph
    expected = layer.conv(data.x, data.edge_index.as_tensor())
    torch.testing.assert_close(layer.eval()(data.x, data.edge_index), expected)


def test_numpy_gives_read_only_arrays():
    import numpy as np

    data = prepared_graph()
    for array in (data.edge_index.numpy(), np.asarray(data.edge_index)):
        with pytest.raises(ValueError, match='read-only'):
            array[0, 0] = 1
    assert np.asarray(data.edge_index, dtype=np.float64).dtype == np.float64
    # numpy.array copies, as for a plain tensor: writable, its own memory
    copied = np.array(data.edge_index)
    copied[0, 0] = -1
    assert int(data.edge_index[0, 0]) != -1
    assert np.array(data.edge_index, dtype=np.float32).flags.writeable


def test_an_edit_of_the_input_after_the_transform_changes_nothing():
    from torch_geometric.data import Data

    from pyg_bemap import BalanceAwareSampling

    graph = random_graph(30, 200, seed=2, simple=True)
    edges = graph.edge_index
    data = BalanceAwareSampling()(Data(**dict(graph.items())))
    before = data.edge_index.as_tensor().clone()
    edges.numpy()[0, 0] = (edges[0, 0] + 1) % 30  # the caller's tensor
    assert torch.equal(data.edge_index.as_tensor(), before)


@pytest.mark.parametrize('copier', ['clone', 'deepcopy', 'save'])
def test_a_copy_never_takes_the_grouping_of_another_graph(copier):
    # the information served a sparse adjacency of other edges last: a copy
    # of the carrier must group its own edges, not take that grouping
    from torch_geometric.nn import GCNConv

    from pyg_bemap import BeMapConv

    data = prepared_graph()
    plain = data.edge_index.as_tensor()
    other = plain[:, plain[0] != plain[1]][:, :40]
    adj = torch.sparse_coo_tensor(other.flip(0), torch.ones(40), (30, 30))
    conv = BeMapConv(GCNConv(8, 4), layout='edge_index')
    conv(data.x, adj.coalesce(), bemap=get_bemap(data.edge_index))
    if copier == 'clone':
        copied = data.edge_index.clone()
    elif copier == 'deepcopy':
        copied = copy.deepcopy(data.edge_index)
    else:
        buffer = io.BytesIO()
        torch.save(data.edge_index, buffer)
        buffer.seek(0)
        copied = torch.load(buffer, weights_only=False)
    info = copied.bemap
    grouping = info.sampler(copied, copied.as_tensor()).grouping
    expected = group_edges(plain, info.sens, info.num_groups)
    for mine, theirs in zip(grouping, expected):
        assert torch.equal(mine, theirs)


@pytest.mark.parametrize('copier', ['deepcopy', 'pickle', 'save'])
def test_an_edit_of_the_sensitive_attribute_of_a_copy(copier):
    import pickle

    data = prepared_graph()
    if copier == 'deepcopy':
        data = copy.deepcopy(data)
    elif copier == 'pickle':
        data = pickle.loads(pickle.dumps(data))
    else:
        buffer = io.BytesIO()
        torch.save(data, buffer)
        buffer.seek(0)
        data = torch.load(buffer, weights_only=False)
    layer = bemap_gcn(data)
    layer(data.x, data.edge_index)
    data.s[:3] = 1 - data.s[:3]
    with pytest.raises(ValueError, match="'s' was modified in place"):
        layer(data.x, data.edge_index)


def test_a_write_that_leaves_the_groups_is_no_edit():
    from torch_geometric.data import Data

    from pyg_bemap import BalanceAwareSampling

    graph = random_graph(30, 200, seed=2, simple=True)
    x = torch.cat([graph.s.view(-1, 1).float(), graph.x[:, :7]], dim=1)
    data = BalanceAwareSampling()(
        Data(x=x, edge_index=graph.edge_index, s=x[:, 0])  # s: a view of x
    )
    layer = bemap_gcn(data)
    data.x[:, 1:] *= 2  # another column: the groups are as they were
    layer(data.x, data.edge_index)
    data.s[0] = data.s[0].clone()  # the same values, written
    layer(data.x, data.edge_index)
    data.x[:2, 0] = 1 - data.x[:2, 0]  # the groups themselves
    with pytest.raises(ValueError, match="'s' was modified in place"):
        layer(data.x, data.edge_index)


def test_a_saved_carrier_does_not_bring_the_tensor_its_groups_view():
    import pickle

    from torch_geometric.data import Data

    from pyg_bemap import BalanceAwareSampling

    graph = random_graph(30, 200, seed=2, simple=True)
    x = torch.cat([graph.s.view(-1, 1).float(), torch.randn(30, 5000)], 1)
    data = BalanceAwareSampling()(
        Data(x=x, edge_index=graph.edge_index, s=x[:, 0])
    )
    assert len(pickle.dumps(data.edge_index)) < x.numel() * 4 / 10
