r"""Bad input at the command line: one line, no traceback."""

from pyg_bemap_lab.cli import main


def test_cli_download_failure_is_one_line(tmp_path, capsys, monkeypatch):
    def offline(url, folder, log=True):
        raise OSError('Name or service not known')

    monkeypatch.setattr('pyg_bemap.datasets.fair_graph.download_url', offline)
    code = main(['train', '--dataset', 'credit', '--root', str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count('\n') == 1 and 'Traceback' not in err
    assert 'Name or service not known' in err and 'by hand' in err


def test_cli_datasets_says_where_files_go(tmp_path, capsys):
    (tmp_path / 'credit').mkdir()
    (tmp_path / 'credit' / 'credit.csv.xz').write_bytes(b'')
    assert main(['datasets', '--root', str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert 'nba         bundled with the package' in out
    assert f'move credit.csv to {tmp_path / "credit" / "raw"}' in out


def _one_line_error(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 1, err
    assert err.count('\n') == 1 and 'Traceback' not in err
    return err


def test_a_bad_graph_of_ones_own_is_one_line(tmp_path, capsys):
    import torch

    from pyg_bemap.datasets import biased_sbm

    def saved(name, **change):
        data = biased_sbm(40, seed=0)
        for key, value in change.items():
            data[key] = value
        torch.save(data, tmp_path / name)
        return ['diagnose', '--graph', str(tmp_path / name)]

    err = _one_line_error(capsys, saved('a.pt') + ['--sens-attr', 'race'])
    assert "'race' is missing" in err
    err = _one_line_error(capsys, saved('b.pt', y=torch.arange(40) % 3))
    assert 'must be binary' in err and 'Map them to 0 and 1' in err
    err = _one_line_error(capsys, saved('c.pt', s=torch.zeros(40)))
    assert 'one group only' in err
    (tmp_path / 'junk.pt').write_bytes(b'junk')
    err = _one_line_error(
        capsys, ['compare', '--graph', str(tmp_path / 'junk.pt')]
    )
    assert 'not a graph saved with torch.save' in err


def test_bad_tables_are_one_line_naming_the_file(tmp_path, capsys):
    nodes, edges = tmp_path / 'nodes.csv', tmp_path / 'edges.csv'
    nodes.write_text('id,s,y,f,city\n1,0,1,0.5,Oslo\n2,1,0,0.1,Rome\n')
    edges.write_text('source,target\n1,2\n2,7\n')
    argv = ['diagnose', '--nodes', str(nodes), '--edges', str(edges)]
    argv += ['--id-col', 'id', '--sens-col', 's', '--label-col', 'y']
    err = _one_line_error(capsys, argv)
    assert f'{nodes}: the feature column(s) ' in err and "'city'" in err
    nodes.write_text('id,s,y,f\n1,0,1,0.5\n2,1,0,0.1\n')
    err = _one_line_error(capsys, argv)
    assert f'{edges}: line 3: the target id 7 is not in the node' in err
    nodes.write_text('a\nb\nc,d\n')  # pandas' message ends in a newline
    err = _one_line_error(capsys, argv)
    assert f'{nodes}: not a CSV table (' in err and err.endswith(')\n')


def test_a_read_only_out_is_refused_before_any_training(tmp_path, capsys):
    import contextlib
    import os
    import shutil
    import subprocess

    import pytest
    import torch

    from pyg_bemap.datasets import biased_sbm

    graph = tmp_path / 'graph.pt'
    torch.save(biased_sbm(40, seed=0), graph)
    out = tmp_path / 'read-only'
    out.mkdir()
    if os.geteuid() == 0:  # root writes anywhere but in an immutable folder
        if shutil.which('chattr') is None:
            pytest.skip('as root, this needs chattr for an immutable folder')
        lock = ['chattr', '+i', str(out)]
        unlock = ['chattr', '-i', str(out)]
        if subprocess.run(lock, capture_output=True).returncode != 0:
            pytest.skip('this file system cannot make a folder immutable')
        undo = contextlib.ExitStack()
        undo.callback(subprocess.run, unlock, check=True)
    else:
        out.chmod(0o500)
        undo = contextlib.ExitStack()
        undo.callback(out.chmod, 0o700)
    with undo:
        for argv in (
            ['reproduce', '--quick', '--root', str(tmp_path)],
            ['sweep', '--quick', '--graph', str(graph)],
            ['compare', '--graph', str(graph)],
        ):
            err = _one_line_error(capsys, [*argv, '--out', str(out)])
            assert f'{out}: cannot write here' in err
            assert os.listdir(out) == []  # nothing trained, nothing written


def _parse_error(capsys, argv):
    import pytest

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and 'Traceback' not in err
    return err.strip().splitlines()[-1]


def test_option_values_are_checked_at_parsing(tmp_path, capsys):
    graph = ['compare', '--graph', str(tmp_path / 'never-read.pt')]
    err = _parse_error(capsys, [*graph, '--seeds', 'abc'])
    assert "--seeds: must be an integer of at least 2 (got 'abc')" in err
    err = _parse_error(capsys, [*graph, '--train-fraction', '0.8'])
    assert 'leave no test split' in err  # 0.8 + the default 0.25
    err = _parse_error(capsys, [*graph, '--val-fraction', 'half'])
    assert (
        "--val-fraction: must be a number between 0 and 1 (got 'half')" in err
    )
    (tmp_path / 'a-file').write_text('')
    err = _parse_error(capsys, [*graph, '--out', str(tmp_path / 'a-file')])
    assert '--out: names a file, not a folder' in err
    beneath = str(tmp_path / 'a-file' / 'sub')  # no errno text
    err = _parse_error(capsys, [*graph, '--out', beneath])
    assert f'--out: names a file, not a folder: {tmp_path / "a-file"}' in err
    err = _parse_error(capsys, [*graph, '--out', ''])
    assert '--out: must name a folder (got nothing)' in err
    for command in ('train', 'diagnose'):
        for bad in ('99999999999999999999999', '-1', '1.5'):
            err = _parse_error(capsys, [command, '--seed', bad])
            assert (
                f"--seed: must be an integer from 0 to 2**63 - 1 (got '{bad}')"
                in err
            )


def test_an_option_without_the_graph_it_belongs_to_is_refused(capsys):
    # each would be ignored, and the command run on NBA
    err = _parse_error(capsys, ['diagnose', '--edges', 'e.csv'])
    assert '--edges belongs with --nodes, which is not given' in err
    argv = ['diagnose', '--id-col', 'id', '--sens-attr', 'g']
    err = _parse_error(capsys, argv)
    assert '--id-col, --sens-attr belong with --nodes or --graph' in err
    err = _parse_error(capsys, ['compare', '--label-attr', 'z'])
    assert '--label-attr belongs with --graph' in err
    # a named dataset has its own split
    for command in ('compare', 'sweep'):
        argv = [command, '--dataset', 'german', '--train-fraction', '0.1']
        err = _parse_error(
            capsys, argv + ['--out', 'x'] * (command == 'sweep')
        )
        assert '--train-fraction belongs with --graph or --nodes' in err


def test_uncommitted_code_stores_runs_only_as_exploratory(
    tmp_path, capsys, monkeypatch
):
    import os.path as osp

    import torch

    from pyg_bemap.datasets import biased_sbm
    from pyg_bemap_lab.io.store import RunStore
    from pyg_bemap_lab.running import provenance

    dirty = {'commit': 'abc', 'clean': False}
    monkeypatch.setattr(
        provenance, '_COMMITS', {'library': dirty, 'lab': dirty}
    )
    graph = tmp_path / 'graph.pt'
    torch.save(biased_sbm(40, seed=0), graph)
    small = ['--seeds', '2', '--epochs', '2', '--jobs', '1']
    for argv in (
        ['reproduce', '--quick', '--root', str(tmp_path)],
        ['sweep', '--quick', '--graph', str(graph), *small],
        ['compare', '--graph', str(graph), *small],
    ):
        out = tmp_path / argv[0]
        err = _one_line_error(capsys, [*argv, '--out', str(out)])
        assert 'uncommitted changes' in err and '--exploratory' in err
        assert not osp.exists(osp.join(out, 'runs'))  # nothing trained
    argv = ['compare', '--graph', str(graph), *small, '--exploratory']
    assert main([*argv, '--out', str(tmp_path / 'kept')]) == 0
    stored = list(RunStore(str(tmp_path / 'kept' / 'runs.jsonl')))
    assert stored and all(r['provenance']['exploratory'] for r in stored)
    assert all(not r['provenance']['library']['clean'] for r in stored)
