r"""A training pass never makes the host wait for the device (issue "GPU"):
no op on its path needs a value of the device's tensors (a count, a
boolean mask's size, an :obj:`.item()`), so a GPU runs it without a host
synchronisation. Checked here on the CPU, where CI runs; on a GPU,
``tests/test_cuda.py`` checks it with torch's own sync debug mode.

Two checks cover what a GPU runs:

* the draw, the kept edges and the CSR parts of a sample, as a device other
  than the CPU takes them (its plan pads segments to rows of powers of
  two, and NumPy is not used), run on the :obj:`meta` device, which has no
  values and raises on every op that needs one;
* a whole training step (forward and backward, every route) runs on the CPU
  under a dispatch mode that records every op that synchronises on a GPU;
  the only one allowed is the draw of the pass's seed from torch's CPU
  generator, which a GPU does not take part in.
"""

import traceback

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch_geometric.nn import GCNConv, MessagePassing, SAGEConv
from torch_geometric.nn.models import GCN

import pyg_bemap.rules.draw as draw_module
from pyg_bemap import BalanceAwareSampling, BeMapConv, to_bemap
from pyg_bemap.datasets import load_nba
from pyg_bemap.infra.sparse import MaskedAdjacency, masked_columns
from pyg_bemap.rules.draw import (
    SamplingPlan,
    draw_edge_mask,
    group_edges,
    kept_positions,
    sampling_plan,
)
from tests.conftest import random_graph

# torch's one-time CSR notice, raised under the dispatch mode, which the
# library's own filter does not see as raised by the library
pytestmark = pytest.mark.filterwarnings(
    'ignore:Sparse CSR tensor support is in beta'
)
aten = torch.ops.aten

#: Ops whose output depends on a value the host reads from the device.
READS_A_VALUE = {
    aten._local_scalar_dense,  # .item(), int(t), bool(t)
    aten.nonzero,
    aten.masked_select,
    aten.masked_scatter,
    aten._unique,
    aten._unique2,
    aten.unique_dim,
    aten.unique_consecutive,
    aten.bincount,
    aten.equal,
    aten.is_nonzero,
}
BOOLEAN = (torch.bool, torch.uint8)


def reads_a_value(func, args, kwargs) -> bool:
    packet = func.overloadpacket
    if packet in READS_A_VALUE:
        return True
    if packet in (aten.index, aten.index_put, aten.index_put_):
        indices = args[1] if len(args) > 1 else kwargs.get('indices', ())
        return any(i is not None and i.dtype in BOOLEAN for i in indices)
    if packet is aten.repeat_interleave:
        return kwargs.get('output_size') is None
    return False


class HostReads(TorchDispatchMode):
    r"""Records every op that would synchronise the host on a GPU, with the
    innermost caller outside torch (file:line function)."""

    def __init__(self):
        super().__init__()
        self.sites: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if reads_a_value(func, args, kwargs):
            self.sites.append(f'{func.overloadpacket.__name__} in {caller()}')
        return func(*args, **kwargs)


def caller() -> str:
    for frame in reversed(traceback.extract_stack()[:-2]):
        if '/torch/' not in frame.filename and __file__ != frame.filename:
            return f'{frame.filename}:{frame.lineno} {frame.name}'
    return '?'


def ours(sites: list[str]) -> list[str]:
    r"""The sites in this library, but the seed's draw from the CPU."""
    return [
        site
        for site in sites
        if '/pyg_bemap/' in site and not site.endswith(' draw_seed')
    ]


class PassThrough(MessagePassing):
    def forward(self, x, edge_index, edge_weight=None):
        return x


@pytest.fixture(scope='module')
def data():
    return BalanceAwareSampling()(load_nba())


MODELS = {
    'gcn route': lambda d: to_bemap(GCN(d.num_features, 16, 2, 2)),
    'sparse route': lambda d: BeMapConv(SAGEConv(d.num_features, 2)),
    'edge list route': lambda d: BeMapConv(GCNConv(d.num_features, 2)),
}


@pytest.mark.parametrize('name', list(MODELS))
def test_a_training_step_reads_no_value_from_the_device(data, name):
    model = MODELS[name](data).train()
    weight = torch.rand(data.num_edges)
    args = (weight,) if name == 'edge list route' else ()
    model(data.x, data.edge_index, *args)  # the graph's plan, once
    with HostReads() as reads:
        model(data.x, data.edge_index, *args).sum().backward()
    assert any(site.endswith(' draw_seed') for site in reads.sites)
    assert ours(reads.sites) == []


def test_edge_level_arguments_are_masked_without_reading_a_value(data):
    conv = BeMapConv(PassThrough()).train()
    weight = torch.rand(data.num_edges)
    conv(data.x, data.edge_index, weight)
    with HostReads() as reads:
        conv(data.x, data.edge_index, edge_weight=weight)
    assert ours(reads.sites) == []


def sparse_resample(data, layout: str):
    r"""A training call of a layer that returns its input, on the
    transposed :obj:`torch.sparse` adjacency of :obj:`data` in
    :obj:`layout` (:obj:`'csr'`, :obj:`'csc'` or :obj:`'coo'`): a resample
    and the kept adjacency alone."""
    from torch_geometric import utils

    convert = getattr(utils, f'to_torch_{layout}_tensor')
    n = data.num_nodes
    adj_t = convert(data.edge_index.as_tensor().flip(0), size=(n, n))
    conv, info = BeMapConv(PassThrough()).train(), data.edge_index.bemap
    return lambda: conv(data.x, adj_t, bemap=info)


@pytest.mark.parametrize('layout', ['csr', 'csc', 'coo'])
def test_a_sparse_adjacency_is_sampled_without_reading_a_value(data, layout):
    resample = sparse_resample(data, layout)
    resample()
    with HostReads() as reads:
        resample()
    # the layer reads nothing: every site counts, PyG's ones too
    assert [s for s in reads.sites if not s.endswith(' draw_seed')] == []


def test_the_detector_sees_what_synchronises():
    x = torch.arange(6.0)
    with HostReads() as reads:
        x.sum().item(), x.nonzero(), x[x > 2], torch.unique(x)
        x.nonzero_static(size=2), x[torch.tensor([0, 1])]
    assert [site.split()[0] for site in reads.sites] == [
        '_local_scalar_dense',
        'nonzero',
        'index',
        '_unique2',
    ]


def off_the_cpu_plan(graph, monkeypatch) -> tuple[SamplingPlan, int]:
    r"""The plan of :obj:`graph` as a device other than the CPU has it
    (segments padded to rows of powers of two), on the :obj:`meta`
    device."""
    monkeypatch.setattr(draw_module, '_pads_rows', lambda device: True)
    info = graph.edge_index.bemap
    edges = graph.edge_index.as_tensor()
    grouping = group_edges(edges, info.sens, info.num_groups)
    plan = sampling_plan(
        edges, grouping, info.sens, info.balance, 0.25, 4, 'balance'
    )
    assert plan.blocks and plan.edge_id.numel() > plan.keep.numel()
    on_meta = [
        value.to('meta') if isinstance(value, torch.Tensor) else value
        for value in plan
    ]
    return SamplingPlan(*on_meta), plan.num_kept


class OpCount(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def test_off_the_cpu_a_draw_reads_no_value_and_takes_its_size_from_the_plan(
    data, monkeypatch
):
    plan, num_kept = off_the_cpu_plan(data, monkeypatch)
    edges = data.edge_index.as_tensor()
    mask = draw_edge_mask(plan)  # meta: any op that needs a value raises
    assert mask.shape == (data.num_edges,) and mask.device.type == 'meta'
    positions = kept_positions(mask, num_kept)
    kept = masked_columns(edges.to('meta'), mask, positions)
    assert kept.shape == (2, num_kept)
    adjacency = MaskedAdjacency(edges, data.num_nodes)
    for name, value in vars(adjacency).items():
        if isinstance(value, torch.Tensor):
            setattr(adjacency, name, value.to('meta'))
    rowptr, col, colptr, row = adjacency.csr_parts(mask, num_kept)
    assert rowptr.shape == colptr.shape == (data.num_nodes + 1,)
    assert col.shape == row.shape == (num_kept,)


def test_off_the_cpu_a_draw_is_the_same_few_ops_on_any_graph(monkeypatch):
    r"""A GPU launches a kernel per op: the draw's ops grow with the number
    of blocks alone, at most one per power of two up to the widest row
    (not with the graph, nor with its segment sizes)."""
    counts = []
    for num_nodes, degree in ((200, 8), (5000, 8), (1000, 160)):
        graph = BalanceAwareSampling()(
            random_graph(num_nodes, degree * num_nodes, 2, seed=1)
        )
        plan, _ = off_the_cpu_plan(graph, monkeypatch)
        with OpCount() as ops:
            draw_edge_mask(plan)
        assert len(plan.blocks) < draw_module._MAX_ROW_WIDTH.bit_length()
        counts.append((ops.count, len(plan.blocks)))
    # a larger graph, the same blocks: the same ops
    assert counts[0] == counts[1]
    (many, more_blocks), (few, blocks) = counts[0], counts[2]
    per_block, rest = divmod(many - few, more_blocks - blocks)
    assert more_blocks > blocks and rest == 0 and per_block <= 8
    assert few - per_block * blocks < 20
