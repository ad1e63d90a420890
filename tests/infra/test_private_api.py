r"""The private APIs of torch and PyG the library relies on still exist and
mean what it takes them to mean; a new release that changes one fails
here, by name, rather than somewhere inside a training pass."""

import pytest
import torch
from torch_geometric.nn import GCNConv

from pyg_bemap.infra.private_api import (
    DISABLED_TORCH_FUNCTION,
    MODULE_HOOKS,
    PROPAGATION_HOOKS,
    as_subclass_no_view,
    functorch_transforms_active,
    has_forward_pre_hook,
    has_module_hooks,
    has_propagation_hooks,
    inside_backward,
    is_view,
    outermost_module_call,
    outside_functorch_transforms,
    registered_child,
    registered_children,
    registered_parameter,
    saved_tensor_hooks_active,
    state_dict_metadata,
    stored_coo_entries,
    version_counter,
)


def test_inside_backward_is_true_only_in_a_backward_pass():
    seen = []
    x = torch.ones(2, requires_grad=True)
    y = x * 2
    y.register_hook(lambda grad: seen.append(inside_backward()))
    assert not inside_backward()
    y.sum().backward()
    assert seen == [True]


class Probe(torch.nn.Module):
    r"""Records the outermost module call at each of its calls."""

    def __init__(self, inner=None):
        super().__init__()
        self.inner, self.seen = inner, []

    def forward(self):
        self.seen.append(outermost_module_call())
        if self.inner is not None:
            self.inner()


def test_the_outermost_module_call_is_found_on_the_stack():
    inner = Probe()
    outer = Probe(inner)
    outer()
    assert outer.seen == [outer] and inner.seen == [outer]
    inner()
    assert inner.seen[-1] is inner
    outer.forward()  # no call of the module: the inner one is outermost
    assert inner.seen[-1] is inner
    assert outermost_module_call() is None


def test_saved_tensor_hooks_are_seen_in_a_non_reentrant_checkpoint():
    seen = []

    def region(x):
        seen.append(saved_tensor_hooks_active())
        return x.sin()

    x = torch.ones(2, requires_grad=True)
    assert not saved_tensor_hooks_active()
    torch.utils.checkpoint.checkpoint(region, x, use_reentrant=False)
    with torch.autograd.graph.save_on_cpu():
        seen.append(saved_tensor_hooks_active())
    assert seen == [True, True]


def test_a_forward_pre_hook_is_found_among_the_modules_own():
    def hook(module, args):
        pass

    module = torch.nn.Linear(2, 2)
    assert not has_forward_pre_hook(module, hook)
    handle = module.register_forward_pre_hook(hook)
    assert has_forward_pre_hook(module, hook)
    handle.remove()
    assert not has_forward_pre_hook(module, hook)


def test_children_are_found_under_every_name_they_are_registered_by():
    shared = torch.nn.Linear(2, 2)
    module = torch.nn.Module()
    module.first, module.second = shared, shared
    module.register_module('none', None)
    assert registered_children(module) == [
        ('first', shared),
        ('second', shared),
    ]
    assert registered_child(module, 'first') is shared
    assert registered_child(module, 'other') is None


def test_parameters_are_read_as_registered():
    with_bias = torch.nn.Linear(2, 2)
    assert registered_parameter(with_bias, 'bias') is with_bias.bias
    assert (
        registered_parameter(torch.nn.Linear(2, 2, bias=False), 'bias') is None
    )
    assert registered_parameter(with_bias, 'other') is None


def test_a_state_dict_keeps_its_modules_metadata():
    metadata = state_dict_metadata(torch.nn.Linear(2, 2).state_dict())
    assert metadata is not None and 'version' in metadata['']


def test_a_view_is_told_from_a_tensor_of_its_own():
    t = torch.zeros(2, 3)
    assert not is_view(t) and is_view(t[0]) and is_view(t.t())
    assert not is_view(t.clone())


def test_stored_coo_entries_of_an_uncoalesced_tensor():
    index = torch.tensor([[1, 0, 1], [0, 1, 0]])
    adj = torch.sparse_coo_tensor(index, torch.tensor([1.0, 2.0, 3.0]))
    stored_index, stored_value = stored_coo_entries(adj)
    assert torch.equal(stored_index, index)  # as stored, repeats included
    assert stored_value.tolist() == [1.0, 2.0, 3.0]


def test_torch_func_transforms_are_seen_and_can_be_left_for_a_block():
    seen = []
    plain = torch.arange(3)

    def f(x):
        seen.append(functorch_transforms_active())
        inside = plain.view(-1)
        with outside_functorch_transforms():
            seen.append(functorch_transforms_active())
            outside = plain.view(-1)
        # a tensor made in the block is a plain one: its memory is there
        assert outside.data_ptr() == plain.data_ptr()
        with pytest.raises(RuntimeError, match='storage'):
            inside.data_ptr()
        return x.sum()

    assert not functorch_transforms_active()
    torch.func.grad(f)(torch.ones(2))
    assert seen == [True, False]


def test_the_version_counter_counts_in_place_edits():
    t = torch.zeros(3)
    before = version_counter(t)
    t[0] = 1.0
    assert version_counter(t) == before + 1
    with torch.inference_mode():
        assert version_counter(torch.zeros(2)) == 0


class Plain(torch.Tensor):
    __torch_function__ = DISABLED_TORCH_FUNCTION


def test_a_subclass_instance_can_share_a_tensor_without_being_a_view():
    base = torch.arange(12).view(3, 4)
    for source in (base, base[1:, ::2]):  # a view too
        tagged = as_subclass_no_view(source, Plain)
        assert type(tagged) is Plain
        assert tagged.data_ptr() == source.data_ptr()
        assert tagged.shape == source.shape
        assert tagged.stride() == source.stride()
        # no view in autograd's sense: torch 2.13's compiled training
        # detaches the saved ones (see as_subclass_no_view)
        assert not tagged._is_view() and tagged._base is None
        assert not tagged.requires_grad
        # the same memory and version counter, both ways
        before = version_counter(source)
        source.add_(1)
        assert version_counter(tagged) == before + 1
        tagged[0, 0] = -1
        assert version_counter(source) == before + 2
        assert int(source[0, 0]) == -1
        # no Python dispatch either: operations run as on plain tensors
        assert type(tagged + 1) is torch.Tensor
    with torch.inference_mode():
        inference = as_subclass_no_view(torch.arange(3), Plain)
    assert type(inference) is Plain and inference.is_inference()


def test_a_subclass_can_run_its_operations_as_plain_tensors():
    tagged = torch.zeros(2).as_subclass(Plain)
    assert type(tagged + 1) is torch.Tensor
    assert type(tagged[0]) is torch.Tensor
    tagged.add_(1)  # in place: the object itself, counted
    assert version_counter(tagged) == 1


@pytest.mark.parametrize(
    'register',
    [
        'register_propagate_forward_pre_hook',
        'register_propagate_forward_hook',
        'register_message_forward_pre_hook',
        'register_message_forward_hook',
        'register_aggregate_forward_pre_hook',
        'register_aggregate_forward_hook',
        'register_message_and_aggregate_forward_pre_hook',
        'register_message_and_aggregate_forward_hook',
    ],
)
def test_every_public_hook_lands_in_a_dictionary_we_read(register):
    conv = GCNConv(4, 4)
    assert all(isinstance(getattr(conv, n), dict) for n in PROPAGATION_HOOKS)
    assert not has_propagation_hooks(conv)
    getattr(conv, register)(lambda *args: None)
    assert has_propagation_hooks(conv)


def test_the_hook_dictionaries_are_named_per_step_and_kind():
    assert PROPAGATION_HOOKS == (
        '_propagate_forward_pre_hooks',
        '_propagate_forward_hooks',
        '_message_forward_pre_hooks',
        '_message_forward_hooks',
        '_aggregate_forward_pre_hooks',
        '_aggregate_forward_hooks',
        '_message_and_aggregate_forward_pre_hooks',
        '_message_and_aggregate_forward_hooks',
    )
    assert MODULE_HOOKS == (
        '_forward_pre_hooks',
        '_forward_hooks',
        '_backward_pre_hooks',
        '_backward_hooks',
    )
    module = torch.nn.Linear(2, 2)
    assert all(isinstance(getattr(module, n), dict) for n in MODULE_HOOKS)
    assert all(
        isinstance(getattr(torch.nn.modules.module, '_global' + n), dict)
        for n in MODULE_HOOKS
    )


def test_explaining_counts_as_a_hook():
    conv = GCNConv(4, 4)
    conv.explain = True
    assert has_propagation_hooks(conv)


@pytest.mark.parametrize(
    'register',
    [
        'register_forward_pre_hook',
        'register_forward_hook',
        'register_full_backward_pre_hook',
        'register_full_backward_hook',
    ],
)
def test_module_hooks_are_seen_on_the_module_and_its_children(register):
    for hooked in ('module', 'child'):
        conv = GCNConv(4, 4)
        assert not has_module_hooks(conv)
        target = conv if hooked == 'module' else conv.lin
        handle = getattr(target, register)(lambda *args: None)
        assert has_module_hooks(conv)
        handle.remove()
        assert not has_module_hooks(conv)
    global_register = getattr(
        torch.nn.modules.module,
        register.replace('register_', 'register_module_'),
    )
    handle = global_register(lambda *args: None)
    try:
        assert has_module_hooks(GCNConv(4, 4))
    finally:
        handle.remove()
