r"""The candidates of ``benchmarks/candidates`` obey the rules: on the CPU
in Triton's interpreter (a GPU runs them in ``tests/test_cuda.py``).

Triton reads ``TRITON_INTERPRET`` when it is imported, so the tests of a
Triton candidate run in a process started with it set
(:func:`test_triton_candidates_in_the_interpreter`)."""

import importlib
import importlib.util
import inspect
import os
import os.path as osp
import sys

import pytest
import torch
from scipy.stats import chisquare

import pyg_bemap.sampler as sampler_module
from pyg_bemap.functional import balanced_edge_sample
from pyg_bemap.rules.draw import group_edges, sampling_plan
from tests.conftest import random_graph, run_python
from tests.reference import assert_rule_4
from tests.rules.test_draw import (
    assert_successive_sampling,
    star_graph,
    use_layout,
)

BENCHMARKS = osp.join(osp.dirname(__file__), '..', 'benchmarks')
INTERPRETING = os.environ.get('TRITON_INTERPRET') == '1'
in_interpreter = pytest.mark.skipif(
    not INTERPRETING, reason='run in a process with TRITON_INTERPRET=1'
)
needs_triton = pytest.mark.skipif(
    importlib.util.find_spec('triton') is None,
    reason='the candidate is a Triton kernel',
)
CANDIDATES = [
    pytest.param('triton_draw', marks=needs_triton),
    'capture_keeps_cache',
]


def candidate(name: str, monkeypatch) -> object:
    r"""The candidate :obj:`name`, patched in for the test."""
    monkeypatch.syspath_prepend(BENCHMARKS)
    monkeypatch.delitem(sys.modules, f'candidates.{name}', raising=False)
    module = importlib.import_module(f'candidates.{name}')
    library, attribute = importlib.import_module('candidates').replaced(module)
    assert callable(getattr(library, attribute))
    monkeypatch.setattr(library, attribute, getattr(module, attribute))
    return module


@pytest.mark.parametrize('name', CANDIDATES)
def test_a_candidate_is_a_drop_in_for_the_function_it_replaces(
    monkeypatch, name
):
    monkeypatch.syspath_prepend(BENCHMARKS)
    module = importlib.import_module(f'candidates.{name}')
    owner, attribute = importlib.import_module('candidates').replaced(module)
    library = getattr(owner, attribute)
    ours = getattr(module, attribute)
    assert inspect.signature(ours) == inspect.signature(library)
    assert ours.__module__ == module.__name__


def test_every_candidate_is_tested():
    names = {
        osp.splitext(file)[0]
        for file in os.listdir(osp.join(BENCHMARKS, 'candidates'))
        if file.endswith('.py') and not file.startswith('_')
    }
    listed = {getattr(c, 'values', (c,))[0] for c in CANDIDATES}
    assert names == listed


@needs_triton
def test_triton_candidates_in_the_interpreter():
    if INTERPRETING:
        pytest.skip('this process runs them')
    env = {**os.environ, 'TRITON_INTERPRET': '1'}
    here = osp.relpath(__file__, osp.join(BENCHMARKS, '..'))
    run = run_python(
        '-m',
        'pytest',
        '-q',
        '-p',
        'no:cacheprovider',
        here,
        cwd=osp.join(BENCHMARKS, '..'),
        env=env,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert ' passed' in run.stdout and 'skipped' in run.stdout


@needs_triton
@pytest.mark.skipif(INTERPRETING, reason='compiles, not interprets')
@pytest.mark.parametrize(
    'width, scaled',
    [(2, True), (16, True), (16, False), (256, True), (4096, True)],
)
def test_the_triton_draw_compiles_for_an_h100(monkeypatch, width, scaled):
    # Triton's compiler and ptxas need no GPU: a kernel that would not
    # compile there (a type, an op Triton lacks) fails here
    from triton import compile as compile_kernel
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    monkeypatch.syspath_prepend(BENCHMARKS)
    module = importlib.import_module('candidates.triton_draw')
    columns, rows, warps = module.launch_shape(width)
    pointers = ('*i64', '*fp32', '*i64', '*i32', '*u8')
    names = inspect.signature(module._draw_rows.fn).parameters
    types = [*pointers, 'i32', 'i32', 'i32', *['constexpr'] * 3]
    source = ASTSource(
        fn=module._draw_rows,
        signature=dict(zip(names, types)),
        constexprs={'COLUMNS': columns, 'ROWS': rows, 'SCALED': scaled},
    )
    kernel = compile_kernel(
        source,
        target=GPUTarget('cuda', 90, 32),
        options={'num_warps': warps},
    )
    assert kernel.asm['cubin']


@in_interpreter
@pytest.mark.parametrize('seed', range(2))
@pytest.mark.parametrize(
    'layout, num_edges', [('padded', 900), ('padded', 3000), ('blocks', 900)]
)
def test_triton_draw_obeys_rule_4(monkeypatch, layout, num_edges, seed):
    candidate('triton_draw', monkeypatch)
    # padded rows up to 16 entries (on 3000 edges most segments are longer:
    # the tail's sort), or rows of every exact size (a CPU's plan)
    use_layout(monkeypatch, layout)
    data = random_graph(60, num_edges, 3, seed)
    balance = torch.rand(60, generator=torch.Generator().manual_seed(seed))
    _, mask = balanced_edge_sample(data.edge_index, data.s, balance + 0.01)
    assert_rule_4(data.edge_index, mask, data.s)


@in_interpreter
def test_triton_draw_same_seed_same_mask(monkeypatch):
    candidate('triton_draw', monkeypatch)
    use_layout(monkeypatch, 'padded')
    data = random_graph(60, 900, 2, 0)
    balance = torch.rand(60) + 0.01

    def draw(seed):
        generator = torch.Generator().manual_seed(seed)
        return balanced_edge_sample(
            data.edge_index, data.s, balance, generator=generator
        )[1]

    assert torch.equal(draw(1), draw(1))
    assert not torch.equal(draw(1), draw(2))


@in_interpreter
def test_triton_draw_keeps_pairs_as_successive_sampling(monkeypatch):
    candidate('triton_draw', monkeypatch)
    use_layout(monkeypatch, 'padded')
    assert_successive_sampling('balance', 'cpu')


@in_interpreter
def test_triton_draw_without_weights_keeps_every_edge_alike(monkeypatch):
    candidate('triton_draw', monkeypatch)
    use_layout(monkeypatch, 'padded')
    # every target keeps 1 of its 4 group-0 neighbours (5 members with
    # itself, 2 in group 1): rows of 4, unpadded, so the uniform strategy's
    # keys are U itself, with no weights to read
    edge_index, sens, balance = star_graph(4000, [1.0] * 4, 2)
    plan = sampling_plan(
        edge_index,
        group_edges(edge_index, sens, 2),
        sens,
        balance,
        beta=0.1,
        min_keep=1,
        strategy='uniform',
    )
    assert plan.key_scale is None and [b[2] for b in plan.blocks] == [4]
    _, mask = balanced_edge_sample(
        edge_index,
        sens,
        balance,
        strategy='uniform',
        generator=torch.Generator().manual_seed(0),
    )
    assert_rule_4(edge_index, mask, sens)
    kept = torch.bincount(edge_index[0, mask & (sens[edge_index[0]] == 0)])
    assert chisquare(kept.numpy()).pvalue > 1e-3


@in_interpreter
def test_bench_resample_measures_a_candidate_in_place_of_the_library():
    script = osp.join(BENCHMARKS, 'bench_resample.py')
    args = ('--profile', '--repeat', '1', '--candidate', 'triton_draw')
    out = run_python(script, *args, check=True).stdout
    assert 'candidate triton_draw in place of ' in out
    assert 'pyg_bemap.sampler.draw_edge_mask' in out and 'NBA pass:' in out


@in_interpreter
def test_use_candidate_patches_the_function_it_replaces(monkeypatch, capsys):
    monkeypatch.syspath_prepend(BENCHMARKS)
    library_draw = sampler_module.draw_edge_mask
    monkeypatch.setattr(sampler_module, 'draw_edge_mask', library_draw)
    timing = importlib.import_module('timing')
    timing.use_candidate('triton_draw')
    patched = sampler_module.draw_edge_mask
    assert patched is sys.modules['candidates.triton_draw'].draw_edge_mask
    assert patched is not library_draw
    assert 'candidate triton_draw in place of ' in capsys.readouterr().out
