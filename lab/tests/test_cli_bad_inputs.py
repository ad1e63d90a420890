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
