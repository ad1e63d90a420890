import copy
import gc
import io
import threading
import time
import weakref

import pytest
import torch
from torch_geometric.nn import GCNConv, GraphConv, MessagePassing
from torch_geometric.utils import to_torch_coo_tensor

from pyg_bemap import (
    BalanceAwareSampling,
    BeMapConv,
    get_bemap,
    one_sample_per_call,
    to_bemap,
)
from pyg_bemap.nn import sample_sharing
from pyg_bemap.nn.sample_sharing import REPLAY_LENGTH, CallReplay
from pyg_bemap.rules.draw import draw_seed
from tests.conftest import random_graph

THREAD_TIMEOUT = 120  # seconds; the threads below need well under one


class Recorder(MessagePassing):
    r"""A conv that records the kept edges it is given, as bytes, per
    thread, and yields to other threads so that their passes interleave."""

    def __init__(self):
        super().__init__()
        self.by_thread = {}

    @property
    def seen(self):
        return self.by_thread.setdefault(threading.get_ident(), [])

    def forward(self, x, edge_index):
        self.seen.append(edge_index.numpy().tobytes())
        time.sleep(0.001)
        return x


class TwoLayers(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = BeMapConv(Recorder())
        self.second = BeMapConv(Recorder())

    def forward(self, x, edge_index):
        return self.second(self.first(x, edge_index), edge_index)


class WeightSharing(TwoLayers):
    def forward(self, x, edge_index):
        x = super().forward(x, edge_index)
        return self.second(x, edge_index)  # the same layer again


@pytest.fixture(scope='module')
def data():
    return BalanceAwareSampling()(random_graph(60, 600, 2, 0))


def passes(model, thread=None):
    r"""The samples each pass (of one thread) used: one tuple per pass, one
    entry per call."""
    first, second = model.first.conv.by_thread, model.second.conv.by_thread
    thread = thread if thread is not None else next(iter(first))
    first, second = first[thread], second[thread]
    calls = len(second) // len(first)
    return [
        (first[i], *second[calls * i : calls * (i + 1)])
        for i in range(len(first))
    ]


def assert_one_fresh_sample_per_pass(model, num_passes, thread=None):
    seen = passes(model, thread)
    assert len(seen) == num_passes
    assert all(len(set(calls)) == 1 for calls in seen)  # shared in a pass
    assert len({calls[0] for calls in seen}) == num_passes  # all distinct


def train(model, data, num_passes):
    for _ in range(num_passes):
        model(data.x, data.edge_index)


@pytest.mark.parametrize('convert', [True, False], ids=['to_bemap', 'own'])
def test_one_sample_per_pass_also_with_weight_sharing(data, convert):
    model = WeightSharing()  # written by hand, or passed to to_bemap
    model = to_bemap(model) if convert else model
    train(model, data, 5)
    assert_one_fresh_sample_per_pass(model, 5)


def test_layers_called_on_their_own_are_passes_of_their_own(data):
    a, b = BeMapConv(Recorder()), BeMapConv(Recorder())
    for layer in (a, b, a):
        layer(data.x, data.edge_index)
    assert len({*a.conv.seen, *b.conv.seen}) == 3


class Outer(torch.nn.Module):
    r"""Calls two models in one call: a pass of the outermost module."""

    def __init__(self):
        super().__init__()
        self.left, self.right = TwoLayers(), TwoLayers()

    def forward(self, x, edge_index):
        return self.left(x, edge_index) + self.right(x, edge_index)


def test_a_pass_is_a_call_of_the_outermost_module(data):
    outer = Outer()
    for _ in range(3):
        outer(data.x, data.edge_index)
    left, right = passes(outer.left), passes(outer.right)
    assert left == right and len({calls[0] for calls in left}) == 3
    outer.left(data.x, data.edge_index)  # alone: a pass of its own
    assert outer.left.first.conv.seen[-1] not in outer.right.first.conv.seen


class AdjacencyBetween(torch.nn.Module):
    r"""A middle layer on a sparse adjacency of the same graph, given the
    edge list's information."""

    def __init__(self):
        super().__init__()
        self.first, self.last = BeMapConv(Recorder()), BeMapConv(Recorder())
        self.middle = BeMapConv(GraphConv(8, 8))

    def forward(self, x, edge_index):
        adj_t = to_torch_coo_tensor(edge_index.as_tensor().flip(0))
        x = self.first(x, edge_index)
        x = self.middle(x, adj_t, bemap=get_bemap(edge_index))
        return self.last(x, edge_index)


def test_a_sparse_adjacency_between_layers_keeps_the_pass(data):
    model = AdjacencyBetween()
    train(model, data, 3)
    first, last = model.first.conv.seen, model.last.conv.seen
    assert first == last and len(set(first)) == 3


def test_each_generator_alone_decides_the_samples_of_its_layers(data):
    # a model of layers with their own generators beside one of another
    # generator, in one call: it drew from the first's generator before
    def outer(seed, *models):
        modules = torch.nn.ModuleList(models)

        class Outer(torch.nn.Module):
            def forward(self, x, edge_index):
                return [m(x, edge_index) for m in modules]

        torch.manual_seed(seed)
        return Outer()(data.x, data.edge_index)

    def model(seed):
        generator = torch.Generator().manual_seed(seed)
        layers = TwoLayers()
        for name in ('first', 'second'):
            setattr(layers, name, BeMapConv(Recorder(), generator=generator))
        return layers

    alone, beside = model(2), model(2)
    outer(0, alone)
    outer(1, model(1), beside)
    assert passes(alone) == passes(beside)
    assert_one_fresh_sample_per_pass(beside, 1)  # one generator, one sample
    plain, other = TwoLayers(), model(2)  # no generator: the global seed
    outer(0, plain, other)
    assert passes(plain) != passes(other)


def test_a_leftover_sample_is_never_reused():
    def losses(model, before=None):
        data = BalanceAwareSampling()(random_graph(60, 600, 2, 0))  # fresh
        model.train()
        torch.manual_seed(0)
        if before is not None:  # a training-mode pass, no backward pass
            before(data.x, data.edge_index)
        torch.manual_seed(1)
        out = [model(data.x, data.edge_index).sum() for _ in range(3)]
        return [loss.item() for loss in out]

    torch.manual_seed(0)
    model = TwoGCN()
    other = copy.deepcopy(model)
    assert losses(model, before=other) == losses(model)


def test_nothing_of_a_finished_pass_is_kept():
    # the graph's sampler once held the pass's frame, and with it the model
    # and the inputs: the graph's last model of each setting lived as long
    # as the graph, and a graph (a mini-batch) was in a reference cycle
    data = BalanceAwareSampling()(random_graph(60, 600, 2, 0))
    gc.disable()  # freed by reference counting alone
    try:
        model = TwoGCN()
        model(data.x, data.edge_index).sum().backward()
        model = weakref.ref(model)
        assert model() is None
        model = TwoGCN()
        model(data.x, data.edge_index).sum().backward()
        data = weakref.ref(data)
        assert data() is None
    finally:
        gc.enable()


class TwoGCN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second = BeMapConv(8, 16), BeMapConv(16, 2)

    def forward(self, x, edge_index):
        return self.second(self.first(x, edge_index).relu(), edge_index)


class VanillaGCN(TwoGCN):
    def __init__(self):
        super().__init__()
        self.first, self.second = GCNConv(8, 16), GCNConv(16, 2)


def run_threads(*targets):
    threads = [threading.Thread(target=t, daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(THREAD_TIMEOUT)
    assert not any(thread.is_alive() for thread in threads)


def test_fresh_samples_while_another_thread_runs_an_unrelated_model(data):
    model = TwoLayers()
    unrelated = torch.nn.Sequential(*[torch.nn.Linear(8, 8)] * 20)
    done = threading.Event()

    def loop_unrelated():
        while not done.is_set():
            unrelated(data.x)

    def train_bemap():
        train(model, data, 20)
        done.set()

    run_threads(loop_unrelated, train_bemap)
    assert_one_fresh_sample_per_pass(model, 20)


def test_two_models_trained_in_two_threads(data):
    models = [TwoLayers(), to_bemap(TwoLayers())]
    barrier = threading.Barrier(2)

    def trainer(model):
        def run():
            barrier.wait()  # start together, so that the passes interleave
            train(model, data, 20)

        return run

    run_threads(*(trainer(m) for m in models))
    for model in models:
        assert_one_fresh_sample_per_pass(model, 20)


def test_one_model_trained_in_two_threads_at_once(data):
    model = to_bemap(TwoLayers())  # e.g. Hogwild: shared parameters
    threads = []

    def run():
        threads.append(threading.get_ident())
        train(model, data, 20)

    run_threads(run, run)
    for thread in threads:
        assert_one_fresh_sample_per_pass(model, 20, thread)


def test_one_thread_trains_while_another_evaluates(data):
    model = to_bemap(TwoLayers())
    evaluated = copy.deepcopy(model).eval()
    outputs = []

    def evaluate():
        for _ in range(20):
            outputs.append(evaluated(data.x, data.edge_index))

    run_threads(evaluate, lambda: train(model, data, 20))
    assert_one_fresh_sample_per_pass(model, 20)
    full = data.edge_index.as_tensor().numpy().tobytes()
    (seen,) = evaluated.first.conv.by_thread.values()
    assert set(seen) == {full}
    assert len(outputs) == 20


def test_hooks_on_the_models_alone_and_none_global(data):
    module = torch.nn.modules.module
    models = [to_bemap(TwoLayers()), TwoLayers()]
    for model in models:
        train(model, data, 2)
    BeMapConv(GCNConv(8, 4))(data.x, data.edge_index)
    assert not module._global_forward_pre_hooks
    assert not module._global_forward_hooks
    for model in models:  # one pair on the model, nothing on its layers
        assert len(model._forward_pre_hooks) == len(model._forward_hooks) == 1
        for child in list(model.modules())[1:]:
            assert not child._forward_pre_hooks and not child._forward_hooks
    unrelated = torch.nn.Linear(8, 8)
    unrelated(data.x)
    assert not unrelated._forward_pre_hooks and not unrelated._forward_hooks


def test_the_stack_is_read_in_the_first_call_alone(data, monkeypatch):
    walks = []
    walk = sample_sharing.outermost_module_call
    monkeypatch.setattr(
        sample_sharing,
        'outermost_module_call',
        lambda: walks.append(1) or walk(),
    )
    model, converted = WeightSharing(), to_bemap(WeightSharing())
    train(model, data, 1)
    assert len(walks) == 3  # the first call finds the model (3 layer calls)
    train(model, data, 3)
    train(converted, data, 3)
    assert len(walks) == 3
    assert_one_fresh_sample_per_pass(model, 4)
    assert_one_fresh_sample_per_pass(converted, 3)
    model.first(data.x, data.edge_index)  # on its own: it looks
    assert len(walks) == 4


def test_no_draw_from_the_global_generator_unless_checkpointed(data):
    generator = torch.Generator().manual_seed(0)
    model = to_bemap(VanillaGCN(), generator=generator)
    before = torch.get_rng_state()
    model(data.x, data.edge_index).sum().backward()
    assert torch.equal(torch.get_rng_state(), before)
    plain = to_bemap(VanillaGCN())  # the global generator gives one seed
    torch.manual_seed(0)
    plain(data.x, data.edge_index)
    after_pass = torch.get_rng_state()
    torch.manual_seed(0)
    draw_seed()
    assert torch.equal(torch.get_rng_state(), after_pass)


def test_a_call_after_the_first_is_no_part_of_it(data):
    model = TwoLayers()
    model(data.x, data.edge_index)  # the call that finds the model
    torch.manual_seed(3)
    model.first(data.x, data.edge_index)  # on its own: a pass of its own
    torch.manual_seed(3)
    BeMapConv(Recorder())(data.x, data.edge_index)
    alone = model.first.conv.seen[-1]
    assert alone != model.first.conv.seen[0]
    other = TwoLayers()
    torch.manual_seed(3)
    other(data.x, data.edge_index)  # its own first call: its own pass
    assert other.first.conv.seen[-1] == alone


class TwoViews(torch.nn.Module):
    r"""Calls one model twice in one call, as a wrapper module does."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x, edge_index):
        return self.model(x, edge_index), self.model(x, edge_index)


def test_two_calls_inside_a_wrapper_and_one_sample_per_call(data):
    shared = TwoViews(TwoLayers())  # first trained inside the wrapper
    train(shared, data, 2)
    seen = passes(shared.model)
    assert seen[0] == seen[1] and seen[2] == seen[3] and seen[0] != seen[2]
    own = TwoViews(TwoLayers())
    one_sample_per_call(own.model)
    train(own, data, 2)
    assert_one_fresh_sample_per_pass(own.model, 4)
    converted = TwoViews(to_bemap(TwoLayers()))  # its model's own passes
    train(converted, data, 2)
    assert_one_fresh_sample_per_pass(converted.model, 4)
    hooks = one_sample_per_call(shared.model)
    hooks.remove()
    train(shared, data, 1)
    assert passes(shared.model)[4] == passes(shared.model)[5]


def test_a_pass_ends_with_an_exception(data):
    class Failing(TwoLayers):
        def forward(self, x, edge_index):
            super().forward(x, edge_index)
            raise RuntimeError('boom')

    model = Failing()
    for _ in range(2):
        with pytest.raises(RuntimeError, match='boom'):
            model(data.x, data.edge_index)
    assert_one_fresh_sample_per_pass(model, 2)


def test_copies_and_pickled_models_share_within_their_passes(data):
    model = to_bemap(TwoLayers())
    model(data.x, data.edge_index)
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    for other in (
        copy.deepcopy(model),
        torch.load(buffer, weights_only=False),
    ):
        for layer in (other.first, other.second):
            layer.conv.by_thread.clear()
        train(other, data, 3)
        assert_one_fresh_sample_per_pass(other, 3)


def test_call_replay_forgets_the_oldest_calls():
    replay = CallReplay()
    for ticket in range(REPLAY_LENGTH + 1):
        replay.remember(ticket, ticket + 1, False)
    with pytest.raises(RuntimeError, match=f'its last {REPLAY_LENGTH}'):
        replay.recall(0)
    assert replay.recall(REPLAY_LENGTH) == (REPLAY_LENGTH + 1, False)
    with pytest.raises(RuntimeError, match='preserve_rng_state=True'):
        copy.deepcopy(replay).recall(REPLAY_LENGTH)


def test_call_replay_refuses_a_ticket_of_two_samples():
    replay = CallReplay()
    replay.remember(7, 1, False)
    replay.remember(7, 1, False)  # two calls of one pass: one sample
    assert replay.recall(7) == (1, False)
    replay.remember(7, 2, True)  # the first was recomputed: a new call
    replay.remember(7, 3, True)  # both await their recomputation
    with pytest.raises(RuntimeError, match='same random state'):
        replay.recall(7)
