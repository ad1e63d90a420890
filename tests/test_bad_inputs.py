r"""Bad inputs at every public entry point: each gives a clear error that
names the argument and the fix, or a documented NaN with a warning; none
gives a silently wrong answer."""

import math
import warnings

import pytest
import torch
from torch_geometric.data import Batch, InMemoryDataset
from torch_geometric.nn import ARMAConv, GCNConv
from torch_geometric.transforms import (
    AddSelfLoops,
    GCNNorm,
    RemoveDuplicatedEdges,
    ToUndirected,
)

from pyg_bemap import (
    AttachBeMap,
    BalanceAwareSampling,
    BeMapConv,
    BeMapInfo,
    SamplerSettings,
    attach_bemap,
    balance_score,
    balanced_edge_sample,
    fair_quotas,
    fairness_report,
    hop_group_counts,
    to_bemap,
)
from pyg_bemap.rules import counts, reachability
from tests.conftest import random_graph, run_python


def graph(seed=0):
    return random_graph(30, 200, 2, seed)


def prepared(seed=0):
    return BalanceAwareSampling()(graph(seed))


def edges():
    return graph().edge_index


def sens():
    return graph().s


BALANCE = torch.rand(30) + 0.1


def report(pred, **kwargs):
    r""":func:`fairness_report` of 4 nodes, labels 0 1 0 1, groups 0 0 1 1."""
    y, s = torch.tensor([0, 1, 0, 1]), torch.tensor([0, 0, 1, 1])
    return fairness_report(pred, y, s, **kwargs)


# (entry point and bad input, call, what the message must say)
CATALOGUE = {
    # rule 1: groups
    'sens ids {1, 2}': (
        lambda: BalanceAwareSampling()(graph().update({'s': graph().s + 1})),
        r'torch.unique\(s, return_inverse=True\)',
    ),
    'sens id 1e6 on 30 nodes': (
        lambda: hop_group_counts(edges(), torch.tensor([0] * 29 + [10**6])),
        "without members.*pass 'num_groups'",
    ),
    'sens missing': (
        lambda: BalanceAwareSampling(sens_attr='gender')(graph()),
        "'gender' is missing",
    ),
    'sens 2-D': (
        lambda: balanced_edge_sample(edges(), sens().view(-1, 1), BALANCE),
        'flatten it or select the right column',
    ),
    'sens NaN': (
        lambda: BeMapInfo(torch.tensor([0.0, float('nan')]), torch.ones(2)),
        'drop or impute',
    ),
    'sens non-integral': (
        lambda: BeMapInfo(torch.tensor([0.0, 0.5]), torch.ones(2)),
        'binarise or bucket',
    ),
    'sens negative': (
        lambda: BeMapInfo(torch.tensor([0, -1]), torch.ones(2)),
        'remap them',
    ),
    'sens above num_groups': (
        lambda: BeMapInfo(torch.tensor([0, 2]), torch.ones(2), num_groups=2),
        "raise 'num_groups'",
    ),
    'num_groups True': (
        lambda: BeMapInfo(torch.tensor([0, 1]), torch.ones(2), True),
        "'num_groups' must be a positive integer",
    ),
    'one group in a graph of a dataset': (
        lambda: BalanceAwareSampling()(graph().update({'s': sens() * 0})),
        r"pass 'num_groups' \(e.g. BalanceAwareSampling\(num_groups=2\)\)",
    ),
    # edges
    'edge_index 3 rows': (
        lambda: attach_bemap(
            torch.zeros(3, 4, dtype=torch.long), sens(), BALANCE
        ),
        r'shape \[2, num_edges\]',
    ),
    'edge_index float': (
        lambda: attach_bemap(edges().float(), sens(), BALANCE),
        'torch.long or torch.int',
    ),
    'edge_index out of range': (
        lambda: attach_bemap(edges() + 30, sens(), BALANCE),
        r"'sens' \(one group per node\) gives only 30 nodes",
    ),
    'sens too short for the edges (blames sens, not edge_index)': (
        lambda: balanced_edge_sample(edges(), sens()[:10], BALANCE[:10]),
        r"but 'sens' \(one group per node\) gives only 10 nodes",
    ),
    'num_nodes too small for the edges': (
        lambda: hop_group_counts(edges(), sens(), num_nodes=10),
        r"but 'num_nodes' gives only 10 nodes",
    ),
    # rule 3 and the transform
    'delta inf': (
        lambda: BalanceAwareSampling(delta=float('inf')),
        "'delta' must be a finite number above 0",
    ),
    'delta 0 (balance_score)': (
        lambda: balance_score(torch.ones(3, 2), delta=0),
        "'delta' must be a finite number above 0",
    ),
    'balance_score negative counts': (
        lambda: balance_score(torch.tensor([[1, -1]])),
        "'count' holds negative counts.*hop_group_counts",
    ),
    'balance_score NaN counts': (
        lambda: balance_score(torch.tensor([[1.0, float('nan')]])),
        "'count' must hold finite real counts",
    ),
    'memory_budget "1GB"': (
        lambda: BalanceAwareSampling(memory_budget='1GB'),
        r"'memory_budget' must be a positive number of bytes, e.g. 2\*\*30",
    ),
    'memory_budget 0': (
        lambda: hop_group_counts(edges(), sens(), memory_budget=0),
        "'memory_budget' must be a positive number of bytes",
    ),
    'memory_budget negative': (
        lambda: BalanceAwareSampling(memory_budget=-5),
        "'memory_budget' must be a positive number of bytes",
    ),
    'num_hops True': (
        lambda: BalanceAwareSampling(num_hops=True),
        "'num_hops' must be an integer of at least 0",
    ),
    'num_hops -1': (
        lambda: hop_group_counts(edges(), sens(), num_hops=-1),
        "'num_hops' must be an integer of at least 0",
    ),
    'counting unknown': (
        lambda: BalanceAwareSampling(counting='approx'),
        "'counting' must be one of",
    ),
    'walk counts overflow': (
        lambda: hop_group_counts(edges(), sens(), 2, 200, counting='walks'),
        "counting='exact'",
    ),
    # rule 4 and the sampler
    'beta True': (
        lambda: BeMapConv(GCNConv(8, 4), beta=True),
        r"'beta' must be a number in \[0, 1\]",
    ),
    'beta 5 (fair_quotas)': (
        lambda: fair_quotas(
            torch.ones(2, 2, dtype=torch.long), torch.tensor([0, 1]), beta=5
        ),
        r"'beta' must be a number in \[0, 1\]",
    ),
    'fair_quotas group out of range': (
        lambda: fair_quotas(
            torch.ones(2, 2, dtype=torch.long), torch.tensor([0, 3])
        ),
        'remap the groups to 0..1',
    ),
    'fair_quotas float counts': (
        lambda: fair_quotas(torch.ones(2, 2), torch.tensor([0, 1])),
        "'neighbour_count' must hold integer counts",
    ),
    'min_keep -1': (
        lambda: to_bemap(GCNConv(8, 4), min_keep=-1),
        "'min_keep' must be an integer of at least 0",
    ),
    'strategy unknown': (
        lambda: balanced_edge_sample(edges(), sens(), BALANCE, strategy='x'),
        "'strategy' must be one of",
    ),
    'generator 0': (
        lambda: BeMapConv(GCNConv(8, 4), generator=0),
        r"'generator' must be a torch.Generator \(e.g.",
    ),
    'generator string': (
        lambda: balanced_edge_sample(edges(), sens(), BALANCE, generator='a'),
        "'generator' must be a torch.Generator",
    ),
    'generator string (to_bemap)': (
        lambda: to_bemap(GCNConv(8, 4), generator='a'),
        "'generator' must be a torch.Generator",
    ),
    'balance wrong length': (
        lambda: BeMapInfo(sens(), torch.ones(3)),
        'compute it with BalanceAwareSampling or balance_score',
    ),
    'balance zero': (
        lambda: BeMapInfo(sens(), torch.zeros(30)),
        "'balance' must hold positive, finite scores",
    ),
    # layers and adoption
    'BeMapConv(Linear)': (
        lambda: BeMapConv(torch.nn.Linear(8, 4)),
        "subclass of torch_geometric.nn.conv.MessagePassing, e.g. 'GCNConv",
    ),
    'BeMapConv cached': (
        lambda: BeMapConv(GCNConv(8, 4, cached=True)),
        'create it with cached=False',
    ),
    'BeMapConv layout unknown': (
        lambda: BeMapConv(GCNConv(8, 4), layout='dense'),
        "'layout' must be one of",
    ),
    'BeMapConv bemap not BeMapInfo': (
        lambda: BeMapConv(GCNConv(8, 4))(
            graph().x, edges(), bemap=(sens(), BALANCE)
        ),
        r"build one with 'BeMapInfo\(sens, balance\)'",
    ),
    'to_bemap no message passing': (
        lambda: to_bemap(torch.nn.Linear(8, 8)),
        'found no message-passing layer',
    ),
    'to_bemap not a module': (
        lambda: to_bemap('GCN'),
        "'model' must be a torch.nn.Module",
    ),
    # fairness report
    'report [N, 2] with NaN': (
        lambda: report(
            torch.tensor([[0.1, float('nan')]] * 4),
        ),
        "'pred' holds NaN.*check the model's outputs",
    ),
    'report [N] with inf': (
        lambda: report(
            torch.tensor([0.1, float('inf'), 1, 2]),
        ),
        "'pred' holds NaN, infinite",
    ),
    'report uint8 mask': (
        lambda: report(
            torch.randn(4),
            mask=torch.tensor([1, 0, 1, 1], dtype=torch.uint8),
        ),
        r"'mask.bool\(\)'",
    ),
    'report threshold NaN': (
        lambda: report(
            torch.randn(4),
            threshold=float('nan'),
        ),
        "'threshold' must be a finite number",
    ),
    'report 3-class outputs': (
        lambda: report(
            torch.randn(4, 3),
        ),
        'multi-class outputs are not supported',
    ),
    'report labels 0..2': (
        lambda: fairness_report(
            torch.randn(4),
            torch.tensor([0, 1, 2, 1]),
            torch.tensor([0, 0, 1, 1]),
        ),
        "'y' must hold the labels 0 and 1",
    ),
    'report mask indices out of range': (
        lambda: report(
            torch.randn(4),
            mask=torch.tensor([7]),
        ),
        r"'mask' holds node indices outside \[0, 4\)",
    ),
}


@pytest.mark.parametrize('case', list(CATALOGUE))
def test_catalogue(case):
    call, message = CATALOGUE[case]
    with pytest.raises(ValueError, match=message):
        call()


def test_large_group_ids_are_refused_before_allocating(monkeypatch):
    def no_counting(*args, **kwargs):
        raise AssertionError('counting started')

    monkeypatch.setattr(counts, 'exact_counts', no_counting)
    with pytest.raises(ValueError, match='without members'):
        hop_group_counts(edges(), torch.tensor([0] * 29 + [10**6]))


# Silently wrong before: each test below failed before the fix.


def test_empty_group_would_reverse_the_balance_preference():
    # the example: coded {1, 2}, a balanced node scored below a
    # one-group one; now the coding is refused, and {0, 1} is right
    with pytest.raises(ValueError, match='without members'):
        BalanceAwareSampling()(graph().update({'s': graph().s + 1}))
    count = torch.tensor([[5, 5], [3, 0]])
    balanced, one_group = balance_score(count).tolist()
    assert balanced == 1.0 and balanced > one_group


def two_groups(pred, y, s, **kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        report = fairness_report(pred, y, s, **kwargs)
    return report, [str(w.message) for w in caught]


def test_gap_without_two_defined_groups_is_nan_with_a_warning():
    pred = torch.tensor([1.0, -1.0, 1.0, -1.0])
    s = torch.tensor([0, 0, 1, 1])
    # group 1 has no positive label: no equal-opportunity gap
    report, messages = two_groups(pred, torch.tensor([1, 0, 0, 0]), s)
    assert math.isnan(report.delta_eo) and not math.isnan(report.delta_sp)
    assert any('delta_eo is NaN' in m and '[1]' in m for m in messages)
    # a mask selecting one group only: neither gap
    report, messages = two_groups(
        pred, torch.tensor([1, 0, 1, 0]), s, mask=torch.tensor([0, 1])
    )
    assert math.isnan(report.delta_sp) and math.isnan(report.delta_eo)
    assert any('delta_sp is NaN' in m and '[1]' in m for m in messages)


def test_probabilities_with_threshold_zero_warn():
    with pytest.warns(
        UserWarning, match="Pass 'threshold=0.5' for probabilities"
    ):
        fairness_report(
            torch.tensor([0.9, 0.2, 0.7, 0.1]),
            torch.tensor([1, 0, 1, 0]),
            torch.tensor([0, 0, 1, 1]),
        )


def test_in_place_edit_of_the_carrier_raises_instead_of_sampling_stale():
    data = prepared()
    conv = BeMapConv(GCNConv(8, 4))
    conv(data.x, data.edge_index)
    data.edge_index[0] = data.edge_index[1]  # every edge now a self-loop
    with pytest.raises(ValueError, match='modified in place'):
        conv(data.x, data.edge_index)


# Deep or misleading errors before.

LOSING_STEPS = {
    'ToUndirected': lambda d: ToUndirected()(d),
    'AddSelfLoops': lambda d: AddSelfLoops()(d),
    'GCNNorm': lambda d: GCNNorm()(d),
    'RemoveDuplicatedEdges': lambda d: RemoveDuplicatedEdges()(d),
    'Batch.from_data_list': lambda d: Batch.from_data_list([d, d]),
    'subgraph': lambda d: d.subgraph(torch.arange(20)),
    'edge_subgraph': lambda d: d.edge_subgraph(torch.arange(50)),
}


@pytest.mark.parametrize('step', list(LOSING_STEPS))
def test_information_lost_after_the_transform_names_attach_bemap(step):
    data = LOSING_STEPS[step](prepared())
    conv = BeMapConv(GCNConv(8, 4))
    with pytest.raises(RuntimeError, match='AttachBeMap.*re-attaches'):
        conv(data.x, data.edge_index)


class Graphs(InMemoryDataset):
    def __init__(self, graphs, pre_transform, transform=None):
        super().__init__(None, transform, pre_transform)
        self.data, self.slices = self.collate(
            [pre_transform(g) for g in graphs]
        )


def test_a_dataset_of_several_graphs_with_attach_bemap():
    graphs = [graph(0), graph(1).update({'s': torch.zeros(30).long()})]
    with pytest.raises(ValueError, match="pass 'num_groups'"):
        Graphs(graphs, BalanceAwareSampling())
    transform = BalanceAwareSampling(num_groups=2)
    dataset = Graphs(graphs, transform, AttachBeMap(sens_attr='s'))
    conv = BeMapConv(GCNConv(8, 4))
    for data in dataset:  # re-attached by the dataset's transform
        conv(data.x, data.edge_index).sum().backward()
    batch = Batch.from_data_list([transform(g) for g in graphs])
    assert batch.bemap_count.shape == (60, 2)


def test_auto_layout_hands_unknown_fused_layers_the_edge_list():
    data = prepared()
    conv = BeMapConv(ARMAConv(8, 4))  # fuse=True, but no sparse input
    assert conv.conv.fuse
    conv(data.x, data.edge_index).sum().backward()


def test_num_hops_stops_once_no_new_node_is_reached(monkeypatch):
    calls = []
    product = reachability._product_pattern

    def counted(*args):
        calls.append(1)
        return product(*args)

    monkeypatch.setattr(reachability, '_product_pattern', counted)
    data = graph()
    far = hop_group_counts(data.edge_index, data.s, num_hops=2000)
    assert len(calls) < 30  # 30 nodes: at most 29 hops add anything
    assert torch.equal(far, hop_group_counts(data.edge_index, data.s, 2, 29))


def test_no_sparse_warnings_without_torch_sparse():
    # a fresh process: torch shows its CSR notice once per process
    script = (
        'import warnings, torch\n'
        'import torch_geometric.typing as t\n'
        't.WITH_TORCH_SPARSE = False\n'
        'from pyg_bemap.infra import sparse as layout\n'
        'layout.WITH_TORCH_SPARSE = False\n'
        'from pyg_bemap import BalanceAwareSampling, BeMapGCN\n'
        'from pyg_bemap.datasets import biased_sbm\n'
        'data = BalanceAwareSampling()(biased_sbm(200, seed=0))\n'
        'warnings.simplefilter("error")\n'
        'model = BeMapGCN(data.num_features, 8, num_layers=2)\n'
        'model(data.x, data.edge_index).sum().backward()\n'
        'print("ok")\n'
    )
    result = run_python('-c', script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == 'ok' and 'Warning' not in result.stderr


def test_numpy_scalars_are_accepted_where_python_numbers_are(tmp_path):
    import numpy as np

    from pyg_bemap.datasets import FairGraphDataset

    data = graph()
    data.s = data.s.clamp(max=1)
    one = BalanceAwareSampling(num_hops=np.int64(1))(data)
    two = BalanceAwareSampling(num_hops=1, num_groups=np.int64(2))(data)
    assert torch.equal(one.bemap_count, two.bemap_count)
    conv = BeMapConv(GCNConv(8, 4), beta=np.float32(0.5), min_keep=np.int64(2))
    assert conv.settings == SamplerSettings(beta=0.5, min_keep=2)
    y, s = torch.tensor([1, 0, 1, 0]), torch.tensor([0, 0, 1, 1])
    probabilities = torch.tensor([0.9, 0.2, 0.7, 0.1])
    report = fairness_report(probabilities, y, s, threshold=np.float32(0.5))
    assert report.accuracy == 1.0
    with pytest.raises(ValueError, match="'label_budget' must be a positive"):
        FairGraphDataset(str(tmp_path), 'nba', label_budget=True)
    nba = FairGraphDataset(str(tmp_path), 'nba', label_budget=np.int64(10))
    assert int(nba[0].train_mask.sum()) == 10
