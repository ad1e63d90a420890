import sys

import pytest
import torch
from torch_geometric.data import Data
from tqdm import tqdm

from pyg_bemap import __version__
from pyg_bemap_lab import commands
from pyg_bemap_lab.cli import main
from pyg_bemap_lab.commands import progress
from pyg_bemap_lab.io.store import RunStore
from pyg_bemap_lab.names import METHOD_ALIASES, default_results
from pyg_bemap_lab.running.training import History
from pyg_bemap_lab.running.tuned import TUNED
from pyg_bemap_lab.selection import DEFAULT_RULE, RULES


def test_train_prints_both_reports_stacked_within_80_columns(capsys, tmp_path):
    argv = ['train', '--epochs', '3', '--selection', 'val-loss']
    assert main(argv + ['--root', str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert 'nba: 403 nodes' in out
    tuned = ', '.join(f'{k}={v}' for k, v in TUNED['nba', 'GCN'].items())
    assert f'GCN, as chosen on validation: {tuned}' in ' '.join(out.split())
    headers = [line for line in out.splitlines() if 'selected epoch' in line]
    assert [h.split(':')[0] for h in headers] == ['GCN', 'BeMap(sym)']
    assert headers[0].endswith('(lowest validation loss)')
    assert headers[0].startswith('GCN: 3 epochs')
    assert out.count('delta_sp') == 2
    assert max(len(line) for line in out.splitlines()) <= 80


def test_train_flags_a_degenerate_report(capsys):
    # a constant classifier's gaps are 0: never to be read as fair
    data = Data(
        y=torch.tensor([0, 1] * 10),
        s=torch.tensor([0, 0, 1, 1] * 5),
        val_mask=torch.arange(20) < 10,
        test_mask=torch.arange(20) >= 10,
    )
    history = History()
    for _ in range(3):
        history.record(torch.ones(20), data)
    commands._print_report(history, 2)
    out = ' '.join(capsys.readouterr().out.split())
    assert 'delta_sp = 0.0000' in out
    assert 'degenerate (constant: one class predicted for every test' in out


def test_train_synthetic_with_a_method_alias(capsys, tmp_path):
    argv = ['train', '--dataset', 'synthetic', '--epochs', '2']
    assert main(argv + ['--method', 'gat', '--root', str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert 'GAT: 2 epochs' in out and 'BeMap(gat): 2 epochs' in out


def test_train_headers_with_the_default_rule_wrap_within_80_columns(capsys):
    assert main(['train', '--dataset', 'synthetic', '--epochs', '20']) == 0
    out, err = capsys.readouterr()
    assert 'warning: synthetic: the default protocol chose no hyper' in err
    assert 'GCN, untuned: lr=0.01' in out
    assert 'selected epoch 20' in out  # the default rule's name is long
    assert f'({RULES[DEFAULT_RULE]})' in ' '.join(out.split())
    assert max(len(line) for line in out.splitlines()) <= 80


def test_train_and_compare_take_a_selection_rule(capsys, tmp_path):
    argv = ['train', '--dataset', 'synthetic', '--epochs', '3']
    assert main(argv + ['--selection', 'val-auc']) == 0
    out = capsys.readouterr().out
    assert out.count('(highest validation AUC)') == 2
    with pytest.raises(SystemExit):  # compare reports the stored rules only
        main(['compare', '--selection', 'val-acc'])
    assert 'val-fair' in capsys.readouterr().err


def test_compare_prints_paired_differences_and_a_verdict(capsys, tmp_path):
    argv = ['compare', '--seeds', '2', '--epochs', '2', '--jobs', '1']
    argv += ['--selection', 'val-loss']  # 2 epochs may learn nothing
    assert main(argv + ['--method', 'row', '--root', str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith('BeMap(row) against GCN on nba: 2 paired seeds')
    assert '  delta_eo  ' in out
    assert 'Verdict: no verdict: 2 paired seeds, a mark needs at least 6' in (
        ' '.join(out.split())
    )
    assert max(len(line) for line in out.splitlines()) <= 80
    argv += ['--selection', 'val-fair', '--root', str(tmp_path)]
    assert main(argv) == 0
    out = ' '.join(capsys.readouterr().out.split())
    assert 'epoch of the fairness-aware (validation)' in out


def test_progress_is_a_plain_line_every_10_seconds_when_piped(
    capsys, monkeypatch
):
    clock = iter([0.0, 5.0, 11.0, 11.0, 12.0])
    monkeypatch.setattr(commands.time, 'monotonic', lambda: next(clock))
    bar = progress(3, 'runs')  # stderr is captured: not a terminal
    for _ in range(3):
        bar.update()
    bar.close()
    assert capsys.readouterr().err == 'runs: 2 of 3 done\n'


def test_progress_is_a_bar_on_a_terminal(monkeypatch):
    monkeypatch.setattr(sys.stderr, 'isatty', lambda: True)
    bar = progress(3, 'runs')
    assert isinstance(bar, tqdm)
    bar.close()


def test_version_and_method_aliases(capsys):
    with pytest.raises(SystemExit) as info:
        main(['--version'])
    assert info.value.code == 0
    assert capsys.readouterr().out == f'pyg-bemap {__version__}\n'
    assert METHOD_ALIASES['sym'] == 'BeMap(sym)'


def test_results_go_outside_the_working_folder(monkeypatch, tmp_path):
    monkeypatch.setenv('PYG_BEMAP_RESULTS', str(tmp_path))
    assert default_results() == str(tmp_path)
    monkeypatch.delenv('PYG_BEMAP_RESULTS')
    assert default_results().endswith('pyg-bemap-results')
    assert not default_results().startswith('examples')


def test_datasets_lists_every_dataset(capsys, tmp_path):
    assert main(['datasets', '--root', str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for name in (
        'nba',
        'recidivism',
        'credit',
        'german',
        'pokec_z',
        'pokec_n',
    ):
        assert name in out
    assert 'missing' in out and 'nba         bundled with the package' in out
    assert 'german      bundled with the package' in out


@pytest.mark.parametrize(
    'argv',
    [
        ['train', '--epochs', '0'],
        ['train', '--beta', '2'],
        ['train', '--min-keep', '-1'],
        ['train', '--dataset', 'cora'],
        ['train', '--method', 'GCN'],
        ['compare', '--method', 'FairDrop'],
        ['compare', '--seeds', '1'],
        ['sweep', '--seeds', '1', '--out', 'never-written'],
        ['compare', '--dataset', 'synthetic'],
        ['reproduce', '--jobs', '0'],
        ['reproduce', '--protocol', 'paper'],
        ['reproduce', '--protocol', 'quick', '--quick'],
        ['fly'],
        [],
    ],
)
def test_bad_arguments_exit_with_an_error(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert 'error' in capsys.readouterr().err


@pytest.mark.parametrize(
    'command', ['compare', 'train', 'reproduce', 'datasets']
)
def test_help(command, capsys, monkeypatch):
    monkeypatch.setenv('COLUMNS', '80')
    with pytest.raises(SystemExit) as info:
        main([command, '--help'])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert 'usage' in out and 'exit codes' in out
    assert max(len(line) for line in out.splitlines()) <= 80
    if command in ('compare', 'reproduce'):  # the model behind the results
        assert 'input_dropout' in ' '.join(out.split())
    if command in ('compare', 'train'):  # rule: title, no nested brackets
        rule = 'val-fair: fairness-aware (validation);'
        assert rule in ' '.join(out.split())


def test_a_report_needs_stored_runs(capsys, tmp_path):
    argv = ['reproduce', '--report-only', '--out', str(tmp_path)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'holds no runs' in err


def test_diagnose_and_compare_a_graph_it_saves_itself(capsys, tmp_path):
    import json

    import torch

    from pyg_bemap.datasets import biased_sbm

    data = biased_sbm(120, seed=4)
    del data.train_mask, data.val_mask, data.test_mask
    torch.save(data, tmp_path / 'mine.pt')
    graph = ['--graph', str(tmp_path / 'mine.pt')]
    assert main(['diagnose', *graph, '--json']) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures['num_nodes'] == 120 and figures['mlp_gap'] is None
    assert main(['diagnose', *graph, '--mlp']) == 0
    out = capsys.readouterr().out
    assert 'edge homophily' in out and 'MLP' in out
    argv = ['compare', *graph, '--seeds', '2', '--epochs', '3', '--jobs', '1']
    assert main(argv + ['--out', str(tmp_path / 'runs')]) == 0
    out = capsys.readouterr().out
    assert out.startswith('BeMap(sym) against GCN on graph-')
    assert (tmp_path / 'runs' / 'runs' / 'summaries.jsonl.xz').exists()
    assert max(len(line) for line in out.splitlines()) <= 80
    argv = ['sweep', *graph, '--quick', '--seeds', '2', '--epochs', '2']
    assert main(argv + ['--jobs', '1', '--out', str(tmp_path / 'sw')]) == 0
    out = capsys.readouterr().out
    assert (
        'Sweep on graph-' in out and (tmp_path / 'sw' / 'sweep.csv').exists()
    )
    assert (tmp_path / 'sw' / 'pareto.png').exists()
    # the summary names the rule that picked its epochs, the default one
    assert f'epoch of the {RULES[DEFAULT_RULE]};' in ' '.join(out.split())


def test_diagnose_says_what_is_undefined_in_one_line_and_strict_json(
    capsys, tmp_path
):
    import json

    import torch

    from pyg_bemap.datasets import biased_sbm

    data = biased_sbm(120, seed=4)
    del data.train_mask, data.val_mask, data.test_mask
    data.y[data.s == 1] = -1  # no labelled node in group 1: no label gap
    torch.save(data, tmp_path / 'one.pt')
    graph = ['diagnose', '--graph', str(tmp_path / 'one.pt')]
    assert main(graph) == 0
    captured = capsys.readouterr()
    assert 'label gap (statistical parity): nan %' in captured.out
    assert captured.err.startswith('pyg-bemap: warning: A statistical-parity')
    assert captured.err.count('\n') == 1 and '.py' not in captured.err
    assert main([*graph, '--json']) == 0
    text = capsys.readouterr().out
    strict = json.loads(text, parse_constant=lambda name: pytest.fail(name))
    assert strict['label_gap'] is None


def test_ctrl_c_ends_compare_and_its_workers_within_3_seconds(tmp_path):
    import os
    import signal
    import subprocess
    import time

    argv = [sys.executable, '-m', 'pyg_bemap_lab.cli', 'compare']
    argv += ['--seeds', '6', '--jobs', '2', '--root', str(tmp_path)]
    for presses in (1, 2):
        process = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own group, as in a terminal
        )
        time.sleep(8)  # the workers are training
        start = time.monotonic()
        for _ in range(presses):
            os.killpg(process.pid, signal.SIGINT)
            time.sleep(0.2)
        _, err = process.communicate(timeout=30)
        assert time.monotonic() - start < 3
        assert process.returncode == 130
        assert err.strip().splitlines()[-1] == 'pyg-bemap: interrupted'
        assert 'Traceback' not in err
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            left = subprocess.run(
                ['pgrep', '-g', str(process.pid)], capture_output=True
            ).stdout.split()
            if not left:
                break
            time.sleep(0.1)
        assert left == []  # the workers ended with it


def _raise_wrapped_ctrl_c(args):
    # a Ctrl-C inside an import that defines a class reaches the command
    # wrapped, "RuntimeError: Error calling __set_name__ ..." (one of 40
    # presses 8 seconds into compare)
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as ctrl_c:
        raise RuntimeError('Error calling __set_name__') from ctrl_c


def test_an_error_that_ctrl_c_caused_is_an_interruption(capsys, monkeypatch):
    import signal

    monkeypatch.setattr(commands, 'run_datasets', _raise_wrapped_ctrl_c)
    handler = signal.getsignal(signal.SIGINT)
    try:
        assert main(['datasets']) == 130
    finally:
        signal.signal(signal.SIGINT, handler)  # main ignores a second press
    assert capsys.readouterr().err == 'pyg-bemap: interrupted\n'


def test_an_error_no_ctrl_c_caused_shows_its_traceback(monkeypatch):
    def fail(args):
        raise RuntimeError('a bug')

    monkeypatch.setattr(commands, 'run_datasets', fail)
    with pytest.raises(RuntimeError, match='a bug'):
        main(['datasets'])


def test_compare_keeps_its_runs_in_the_folder_out_names(capsys, tmp_path):
    out = tmp_path / 'runs'
    argv = ['compare', '--seeds', '2', '--epochs', '2', '--jobs', '1']
    argv += ['--selection', 'val-loss']  # 2 epochs may learn nothing
    argv += ['--root', str(tmp_path), '--out', str(out)]
    assert main(argv) == 0
    summaries = out / 'runs' / 'summaries.jsonl.xz'
    stored = summaries.read_bytes()
    assert len(RunStore(str(out / 'runs.jsonl'))) == 4  # 2 methods, 2 seeds
    assert not (out / 'runs.jsonl').exists()  # sealed as compare ends
    (report,) = out.glob('comparison_*.md')  # and its report beside them
    assert report.name == 'comparison_nba_bemap-sym.md'
    assert 'paired seeds' in report.read_text()
    assert main(argv) == 0  # a rerun resumes: nothing trained again
    assert summaries.read_bytes() == stored
    assert main([*argv, '--method', 'row']) == 0  # another method's report
    assert {p.name for p in out.glob('comparison_*.md')} == {
        'comparison_nba_bemap-sym.md',
        'comparison_nba_bemap-row.md',
    }


def test_the_lab_works_with_the_installed_library():
    from importlib.metadata import requires, version

    from packaging.requirements import Requirement

    import pyg_bemap_lab

    (wanted,) = [
        Requirement(r)
        for r in requires('pyg-bemap-lab') or []
        if Requirement(r).name == 'pyg-bemap'
    ]
    assert wanted.specifier  # the lab states the versions it works with
    assert wanted.specifier.contains(__version__)
    assert pyg_bemap_lab.__version__ == version('pyg-bemap-lab')
