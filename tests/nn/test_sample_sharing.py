import copy
import gc
import io
import threading
import time

import pytest
import torch
from torch_geometric.nn import GCNConv, MessagePassing

from pyg_bemap import BalanceAwareSampling, BeMapConv, to_bemap
from pyg_bemap.nn import sample_sharing
from pyg_bemap.nn.sample_sharing import REPLAY_LENGTH, CallReplay, PassScope
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


def test_scoped_model_shares_one_sample_also_with_weight_sharing(data):
    model = to_bemap(WeightSharing())
    train(model, data, 5)
    assert_one_fresh_sample_per_pass(model, 5)


def test_unscoped_layers_share_until_a_layer_asks_again(data):
    model = TwoLayers()  # not passed to to_bemap
    train(model, data, 5)
    assert_one_fresh_sample_per_pass(model, 5)
    # the documented rule for weight sharing without a scope: the second
    # call of a layer in a pass starts a new sample
    model = WeightSharing()
    model(data.x, data.edge_index)
    first, second, again = passes(model)[0]
    assert first == second != again


def test_layers_called_on_their_own(data):
    a, b = BeMapConv(Recorder()), BeMapConv(Recorder())
    for layer in (a, b, a, a, b):
        layer(data.x, data.edge_index)
    assert a.conv.seen[0] == b.conv.seen[0]  # shared until 'a' asks again
    assert a.conv.seen[1] != a.conv.seen[0]
    assert a.conv.seen[2] != a.conv.seen[1]  # 'a' alone: a new one each call
    assert b.conv.seen[1] == a.conv.seen[2]


def test_a_new_layer_is_not_mistaken_for_a_dead_one(data, monkeypatch):
    # CPython may give a new layer the id of a dead one; simulate the worst
    # case, every object with one id: distinct layers must still share
    monkeypatch.setattr(sample_sharing, 'id', lambda obj: 0, raising=False)
    first = BeMapConv(Recorder())
    first(data.x, data.edge_index)
    used = first.conv.seen[0]
    del first
    gc.collect()
    second = BeMapConv(Recorder())
    second(data.x, data.edge_index)
    assert second.conv.seen[0] == used


def run_threads(*targets):
    threads = [threading.Thread(target=t, daemon=True) for t in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(THREAD_TIMEOUT)
    assert not any(thread.is_alive() for thread in threads)


@pytest.mark.parametrize('scoped', [True, False])
def test_fresh_samples_while_another_thread_runs_an_unrelated_model(
    data, scoped
):
    model = to_bemap(TwoLayers()) if scoped else TwoLayers()
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


@pytest.mark.parametrize('scoped', [True, False])
def test_two_models_trained_in_two_threads(data, scoped):
    models = [TwoLayers(), TwoLayers()]
    if scoped:
        models = [to_bemap(m) for m in models]
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


def test_no_global_hooks_and_unrelated_modules_untouched(data):
    module = torch.nn.modules.module
    model = to_bemap(TwoLayers())
    train(model, data, 2)
    BeMapConv(GCNConv(8, 4))(data.x, data.edge_index)
    assert not module._global_forward_pre_hooks
    assert not module._global_forward_hooks
    unrelated = torch.nn.Linear(8, 8)
    assert not unrelated._forward_pre_hooks and not unrelated._forward_hooks


def test_scope_closes_after_an_exception(data):
    class Failing(TwoLayers):
        def forward(self, x, edge_index):
            super().forward(x, edge_index)
            raise RuntimeError('boom')

    model = to_bemap(Failing())
    with pytest.raises(RuntimeError, match='boom'):
        model(data.x, data.edge_index)
    assert model.bemap_pass_scope.seeds() is None


def test_scope_survives_deepcopy_and_pickling(data):
    model = to_bemap(TwoLayers())
    model(data.x, data.edge_index)
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    for other in (
        copy.deepcopy(model),
        torch.load(buffer, weights_only=False),
    ):
        scope = other.bemap_pass_scope
        assert scope is not model.bemap_pass_scope
        assert other.first.pass_scope is scope is other.second.pass_scope
        for layer in (other.first, other.second):
            layer.conv.by_thread.clear()
        train(other, data, 3)
        assert_one_fresh_sample_per_pass(other, 3)


def test_pass_scope_outside_a_pass():
    scope = PassScope()
    assert scope.seeds() is None
    assert repr(scope) == 'PassScope()'


def test_call_replay_forgets_the_oldest_calls():
    replay = CallReplay()
    for ticket in range(REPLAY_LENGTH + 1):
        replay.remember(ticket, ticket + 1)
    assert replay.seed_of(0) is None
    assert replay.seed_of(REPLAY_LENGTH) == REPLAY_LENGTH + 1
    assert copy.deepcopy(replay).seed_of(REPLAY_LENGTH) is None
