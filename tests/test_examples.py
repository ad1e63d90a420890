import os

import pytest
import torch
from torch_geometric.typing import WITH_PYG_LIB, WITH_TORCH_SPARSE

from tests.conftest import run_python

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
needs_neighbor_sampler = pytest.mark.skipif(
    not (WITH_PYG_LIB or WITH_TORCH_SPARSE),
    reason='NeighborLoader needs torch-sparse or pyg-lib',
)


def run(script, *args, **kwargs):
    return run_python(
        os.path.join(ROOT, script), *args, check=True, **kwargs
    ).stdout


def test_bias_amplification_example(tmp_path):
    proc = run_python(
        os.path.join(ROOT, 'examples/bias_amplification.py'),
        '--epochs',
        '100',  # fewer: no epoch may have learned anything to report
        '--root',
        str(tmp_path),
        check=True,
    )
    assert 'Warning' not in proc.stderr  # the examples trigger no warning
    out = proc.stdout
    for text in (
        'Theorem 1',
        'Lemma 2',
        'delta_sp',
        'conv2',
        'fair sample',
        'probe',
    ):
        assert text in out


@pytest.mark.parametrize(
    'args', [['--nodes', '3000', '--degree', '6', '--repeat', '1']]
)
def test_core_benchmark_runs(args):
    out = run('benchmarks/bench_core.py', *args)
    assert 'speed-up over the reference' in out
    assert 'resample / training step' in out


@pytest.mark.skipif(
    not os.path.exists('/proc/self/clear_refs'), reason='Linux only'
)
def test_scaling_benchmark_runs():
    loader = ['--loader'] if WITH_PYG_LIB or WITH_TORCH_SPARSE else []
    out = run(
        'benchmarks/bench_scaling.py', '--sizes', '0.02', '0.04', *loader
    )
    assert out.count('directed edges') == 2 and 'within its bound' in out
    assert out.count('BeMap-GCN step') == 4
    assert out.count('BeMap-GCN step, full') == 2
    assert out.count('NeighborLoader epoch') == (2 if loader else 0)
    assert max(map(len, out.splitlines())) <= 80


def test_resample_and_step_benchmarks_run():
    out = run(
        'benchmarks/bench_resample.py', '--sizes', '0.02', '--repeat', '2'
    )
    assert 'SBM 0.02M' in out and 'NBA:' in out and 'floor' in out
    out = run('benchmarks/bench_resample.py', '--profile', '--repeat', '2')
    assert 'NBA pass:' in out and '0 kernels a call' in out  # the CPU
    out = run('benchmarks/bench_step.py', '--profile', '--repeat', '2')
    assert out.count('NBA step, ') == 3 and out.count('torch ops') == 3
    out = run('benchmarks/bench_step.py', '--sizes', '0.02', '--repeat', '2')
    assert 'SBM 0.02M' in out and 'worst ratio' in out and '/ best' in out
    for line in out.splitlines():
        assert len(line) <= 80


def test_route_checks_benchmark_counts_each_route():
    out = run('benchmarks/bench_route_checks.py', '--by-function')
    rows = [line.split() for line in out.splitlines()[2:6]]
    assert [row[:3] for row in rows] == [
        ['GCNConv', 'train', 'gcn_route'],
        ['GCNConv', 'eval', 'gcn_route'],
        ['SAGEConv', 'train', 'sparse_route'],
        ['SAGEConv', 'eval', 'sparse_route'],
    ]
    assert all(0 < int(row[3]) < int(row[4]) for row in rows)
    assert '* routes/__init__.py:choose_route' in out
    assert max(map(len, out.splitlines())) <= 80


def test_end_to_end_benchmark_runs():
    out = run(
        'benchmarks/bench_end_to_end.py', '--pairs', '1', '--epochs', '3'
    )
    assert 'BeMap / vanilla: median' in out
    assert 'without the first two epochs: median' in out
    assert out.count('ep1-2 ms') == 1 and out.count('nba ') == 2
    assert max(map(len, out.splitlines())) <= 80


@pytest.mark.parametrize(
    'script', ['bench_resample.py', 'bench_step.py', 'bench_scaling.py']
)
def test_benchmarks_skip_a_gpu_this_machine_lacks(script):
    if torch.cuda.is_available():
        pytest.skip('this machine has CUDA: the benchmark would run there')
    out = run(os.path.join('benchmarks', script), '--device', 'cuda')
    assert out.strip() == 'skipped: no CUDA device here (cuda)'


def test_epoch_benchmark_runs(tmp_path):
    env_out = run(
        'benchmarks/bench_epoch.py',
        '--nodes',
        '2000',
        '--repeat',
        '1',
        env={**os.environ, 'PYG_BEMAP_DATA': str(tmp_path)},
    )
    assert 'BeMap(sym), auto' in env_out
    assert 'x vanilla edge_index' in env_out


@needs_neighbor_sampler
def test_distributed_data_parallel_training():
    # 2 processes on the loopback address; bounded by the subprocess timeout
    out = run(
        'examples/ddp_training.py',
        '--world-size',
        '2',
        '--epochs',
        '4',
        '--nodes',
        '1500',
    )
    assert 'identical parameters on all 2 processes: True' in out
    assert 'loss decreased: True' in out


@needs_neighbor_sampler
def test_minibatch_example_on_a_small_graph():
    out = run(
        'examples/minibatch_large.py',
        '--nodes',
        '3000',
        '--epochs',
        '2',
        '--batch-size',
        '256',
    )
    assert 'epoch 2:' in out and 'delta_sp' in out


@pytest.mark.skipif(
    WITH_PYG_LIB or WITH_TORCH_SPARSE,
    reason='checks the install without torch-sparse and pyg-lib',
)
@pytest.mark.parametrize(
    'script', ['examples/ddp_training.py', 'examples/minibatch_large.py']
)
def test_neighbor_loader_examples_say_what_they_need(script):
    proc = run_python(os.path.join(ROOT, script))
    assert proc.returncode == 1
    assert proc.stderr.count('\n') == 1 and 'torch-sparse' in proc.stderr
