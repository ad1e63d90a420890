r"""What needs a GPU: each test carries the marker ``cuda`` and is skipped
without one (``scripts/gpu_check.sh`` runs them where a GPU is)."""

import warnings

import numpy as np
import pytest
import torch
from torch_geometric.nn import MessagePassing
from torch_geometric.nn.models import GCN
from torch_geometric.utils import is_undirected

from pyg_bemap import (
    BalanceAwareSampling,
    BeMapConv,
    balance_score,
    balanced_edge_sample,
    diagnose,
    exact_counting_memory,
    hop_group_counts,
    to_bemap,
)
from pyg_bemap.datasets import biased_sbm, load_nba
from pyg_bemap.rules.draw import draw_edge_mask, group_edges, sampling_plan
from pyg_bemap.settings import SamplerSettings
from tests.conftest import random_graph, run_python
from tests.reference import (
    assert_rule_4,
    reference_balance,
    reference_counts,
)
from tests.rules.test_draw import (
    assert_successive_sampling,
    assert_ties_fall_to_the_input_order,
    star_graph,
)
from tests.test_candidates import CANDIDATES, candidate, needs_triton
from tests.test_host_synchronisation import sparse_resample

pytestmark = pytest.mark.cuda


class PassThrough(MessagePassing):
    def forward(self, x, edge_index):
        return x


class KeptEdges(MessagePassing):
    def forward(self, x, edge_index):
        return edge_index


@pytest.fixture(scope='module')
def data():
    return BalanceAwareSampling()(load_nba().to('cuda'))


def test_a_resample_makes_no_host_synchronisation(data):
    conv = BeMapConv(PassThrough(), layout='edge_index').train()
    for _ in range(2):  # the graph's plan, then the draw's CUDA graph
        conv(data.x, data.edge_index)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode('error')
    try:
        for _ in range(3):
            conv(data.x, data.edge_index)
    finally:
        torch.cuda.set_sync_debug_mode('default')


@pytest.mark.parametrize('layout', ['csr', 'csc', 'coo'])
def test_a_sparse_adjacency_is_sampled_without_synchronisation(data, layout):
    resample = sparse_resample(data, layout)
    for _ in range(2):  # the graph's plan, then the draw's CUDA graph
        resample()
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode('error')
    try:
        resample()
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

    for _ in range(2):  # the graph's plan and memo, the draw's CUDA graph
        step()
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


@pytest.mark.parametrize('num_groups', [2, 3])
@pytest.mark.parametrize('num_hops', [1, 2])
def test_counts_and_balance_on_the_gpu_are_the_rules(num_groups, num_hops):
    data = random_graph(60, 400, num_groups, seed=num_hops)
    edges, sens = data.edge_index.cuda(), data.s.cuda()
    count = hop_group_counts(edges, sens, num_groups, num_hops)
    expected = reference_counts(
        data.edge_index, data.s.tolist(), num_groups, num_hops
    )
    assert count.is_cuda and torch.equal(count.cpu(), expected)
    balance = balance_score(count, delta=0.7)
    assert balance.is_cuda and torch.allclose(
        balance.cpu().double(), reference_balance(expected, 0.7), rtol=1e-6
    )


@pytest.mark.parametrize('num_groups', [2, 3])
def test_a_gpu_sample_obeys_rule_4_and_its_seed(num_groups):
    data = random_graph(80, 2000, num_groups, seed=4)
    edges, sens = data.edge_index.cuda(), data.s.cuda()
    balance = torch.rand(80, device='cuda') + 0.01
    masks = [
        balanced_edge_sample(
            edges,
            sens,
            balance,
            generator=torch.Generator('cuda').manual_seed(seed),
        )[1]
        for seed in (5, 5, 6)
    ]
    assert masks[0].is_cuda
    assert torch.equal(masks[0], masks[1])
    assert not torch.equal(masks[0], masks[2])
    assert_rule_4(data.edge_index, masks[0].cpu(), data.s)


def test_a_gpu_plan_pads_segments_to_rows_of_powers_of_two():
    data = random_graph(5000, 200_000, 2, seed=1)
    plans = {}
    for device in ('cpu', 'cuda'):
        edges, sens = data.edge_index.to(device), data.s.to(device)
        grouping = group_edges(edges, sens, 2)
        plans[device] = sampling_plan(
            edges,
            grouping,
            sens,
            torch.ones(5000, device=device),
            0.25,
            4,
            'balance',
        )
    cpu, gpu = plans['cpu'], plans['cuda']
    widths = [width for _, _, width in gpu.blocks]
    assert widths == sorted(set(widths)) != []
    assert all(width & (width - 1) == 0 for width in widths)
    assert gpu.edge_id.numel() > cpu.edge_id.numel()  # padding
    assert gpu.num_kept == cpu.num_kept
    assert torch.equal(gpu.fixed_mask.cpu(), cpu.fixed_mask)
    assert torch.equal(
        gpu.edge_id[gpu.keep].sort().values.cpu(),
        cpu.edge_id[cpu.keep].sort().values,
    )


@pytest.mark.parametrize('strategy', ['balance', 'uniform'])
def test_gpu_inclusion_frequencies_are_successive_sampling(strategy):
    assert_successive_sampling(strategy, 'cuda')


def test_a_replayed_draw_is_the_draw_of_its_seed(data):
    edges = data.edge_index
    sampler = edges.bemap.sampler(edges, edges.as_tensor())
    settings = SamplerSettings(beta=0.5)
    plan = sampler.plan(settings)
    # the first draw runs, the second is captured, the rest replay
    masks = [sampler.draw(settings, seed).mask for seed in (7, 8, 7, 9, 8)]
    for seed, mask in zip((7, 8, 7, 9, 8), masks):
        generator = torch.Generator('cuda').manual_seed(seed)
        assert torch.equal(mask, draw_edge_mask(plan, generator))
    assert torch.equal(masks[0], masks[2]) and torch.equal(masks[1], masks[4])
    assert not torch.equal(masks[0], masks[1])
    plain = edges.as_tensor().cpu()
    assert_rule_4(plain, masks[3].cpu(), data.s.cpu(), beta=0.5)


def test_a_captured_draw_replays_a_new_sample_each_time(data):
    conv = BeMapConv(KeptEdges(), layout='edge_index').train()
    conv(data.x, data.edge_index)  # the graph's plan, once
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        conv(data.x, data.edge_index)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    torch.cuda.manual_seed(0)
    with torch.cuda.graph(graph):
        kept = conv(data.x, data.edge_index)
    samples = []
    for _ in range(3):
        graph.replay()
        samples.append(kept.clone())
    assert not torch.equal(samples[0], samples[1])
    plain = data.edge_index.as_tensor()
    for sample in samples:  # kept edges, as a mask over the graph's edges
        key = plain[1] * data.num_nodes + plain[0]
        chosen = torch.isin(key, sample[1] * data.num_nodes + sample[0])
        assert_rule_4(plain.cpu(), chosen.cpu(), data.s.cpu())


def test_a_captured_training_step_replays(data):
    torch.manual_seed(0)
    model = to_bemap(GCN(data.num_features, 32, 2, 2)).to('cuda').train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, capturable=True)
    target = data.y.clamp(min=0)

    def step():
        optimizer.zero_grad(set_to_none=False)
        loss = torch.nn.functional.cross_entropy(
            model(data.x, data.edge_index), target
        )
        loss.backward()
        optimizer.step()
        return loss

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        loss = step()
    losses = []
    for _ in range(20):
        graph.replay()
        losses.append(float(loss))
    assert all(np.isfinite(losses)) and len(set(losses)) == len(losses)
    assert np.mean(losses[-5:]) < np.mean(losses[:5])


@pytest.mark.parametrize('budget', [2**20, 2**26])
def test_exact_counting_stays_within_its_stated_bound_on_the_gpu(budget):
    r"""A small budget: building the pattern dominates the bound."""
    nodes, edges = 20_000, 1_000_000
    data = random_graph(nodes, edges, 2, seed=0)
    edge_index, sens = data.edge_index.cuda(), data.s.cuda()
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    hop_group_counts(edge_index, sens, num_hops=2, memory_budget=budget)
    peak = torch.cuda.max_memory_allocated() - base
    assert peak <= exact_counting_memory(nodes, edges, 2, budget, 'cuda')


TRAIN_AND_EVALUATE = """
import warnings
import torch
from torch_geometric.nn.models import GCN, GraphSAGE
from pyg_bemap import BalanceAwareSampling, to_bemap, fairness_report
from pyg_bemap.datasets import load_nba
from pyg_bemap.metrics import OnePredictedClassWarning
warnings.simplefilter('error')  # from here on, what the run itself says
# what the report says of an untrained model's predictions is no notice
warnings.simplefilter('ignore', OnePredictedClassWarning)
torch.manual_seed(0)
data = BalanceAwareSampling()(load_nba().to('cuda'))
for backbone in (GCN, GraphSAGE):
    model = to_bemap(backbone(data.num_features, 16, 2, 2)).to('cuda')
    model(data.x, data.edge_index).sum().backward()
    out = model.eval()(data.x, data.edge_index)
fairness_report(out.argmax(-1), data.y, data.s)
print('silent')
"""


def test_training_and_evaluation_on_the_gpu_warn_nothing():
    result = run_python('-c', TRAIN_AND_EVALUATE)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == 'silent'


def test_a_synthetic_graph_is_built_on_the_gpu():
    # the GPU benchmarks build their graphs there
    data = biased_sbm(5000, device='cuda')
    assert all(value.is_cuda for _, value in data)
    src, dst = data.edge_index
    assert not bool((src == dst).any()) and is_undirected(data.edge_index)
    assert abs(data.num_edges / data.num_nodes - 20) < 2


def test_diagnose_on_the_gpu_as_on_the_cpu(data):
    assert str(diagnose(data)) == str(diagnose(data.cpu()))
    assert 0 <= diagnose(data, mlp=True).mlp_gap <= 1


def test_a_vanilla_model_beside_a_bemap_one_synchronises_as_alone(data):
    def synchronisations(edge_index):
        model = GCN(data.num_features, 16, 2, 2).to('cuda').train()
        model(data.x, edge_index)  # warm-up
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode('warn')
        try:
            with warnings.catch_warnings(record=True) as record:
                warnings.simplefilter('always')
                model(data.x, edge_index).sum().backward()
                torch.cuda.synchronize()
        finally:
            torch.cuda.set_sync_debug_mode('default')
        return sum('synchroniz' in str(w.message) for w in record)

    alone = synchronisations(data.edge_index.as_tensor())
    to_bemap(GCN(data.num_features, 16, 2, 2)).to('cuda').train()(
        data.x, data.edge_index
    )
    assert synchronisations(data.edge_index) == alone


@needs_triton
def test_the_triton_draw_candidate_obeys_rule_4_and_the_law(monkeypatch):
    candidate('triton_draw', monkeypatch)
    data = random_graph(80, 20_000, 3, seed=2)  # blocks of many widths
    # and segments of 5,000 edges, over the widest block: the tail
    star = star_graph(3, torch.rand(5000).add(0.01).tolist(), 2)
    balance = torch.rand(80) + 0.01
    for edge_index, sens, weights in (
        (data.edge_index, data.s, balance),
        star,
    ):
        _, mask = balanced_edge_sample(
            edge_index.cuda(), sens.cuda(), weights.cuda()
        )
        assert_rule_4(edge_index, mask.cpu(), sens)
    assert_successive_sampling('balance', 'cuda')


@pytest.mark.parametrize('name', CANDIDATES)
def test_a_candidate_replays_the_draw_of_its_seed_without_syncs(
    monkeypatch, name
):
    candidate(name, monkeypatch)
    data = BalanceAwareSampling()(load_nba().to('cuda'))  # a new sampler
    edges = data.edge_index
    sampler = edges.bemap.sampler(edges, edges.as_tensor())
    settings = SamplerSettings(beta=0.5)
    first = [sampler.draw(settings, seed).mask for seed in (7, 8)]
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode('error')
    try:  # the first draw ran, the second was captured: these replay
        again = [sampler.draw(settings, seed).mask for seed in (7, 9, 8)]
    finally:
        torch.cuda.set_sync_debug_mode('default')
    assert torch.equal(first[0], again[0]) and torch.equal(first[1], again[2])
    assert not torch.equal(again[0], again[1])
    plain = edges.as_tensor().cpu()
    for mask in again:
        assert_rule_4(plain, mask.cpu(), data.s.cpu(), beta=0.5)


def test_tied_keys_fall_to_the_input_order_on_the_gpu():
    # the GPU's own layout (rows padded to powers of two, a tail) and sorts
    assert_ties_fall_to_the_input_order('cuda')
