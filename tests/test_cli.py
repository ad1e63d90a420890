import pytest

from pyg_bemap.cli import main, side_by_side


def test_train_prints_both_reports_side_by_side(capsys, tmp_path):
    assert main(['train', '--epochs', '3', '--root', str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert 'nba: 403 nodes' in out
    header = [line for line in out.splitlines() if 'BeMap(sym)' in line][0]
    assert header.startswith('GCN: epoch')
    assert out.count('delta_sp') == 2


def test_train_synthetic_and_gat(capsys, tmp_path):
    assert (
        main(
            [
                'train',
                '--dataset',
                'synthetic',
                '--epochs',
                '2',
                '--method',
                'BeMap(gat)',
                '--root',
                str(tmp_path),
            ]
        )
        == 0
    )
    assert 'GAT: epoch' in capsys.readouterr().out


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


@pytest.mark.parametrize(
    'argv',
    [
        ['train', '--epochs', '0'],
        ['train', '--beta', '2'],
        ['train', '--min-keep', '-1'],
        ['train', '--dataset', 'cora'],
        ['train', '--method', 'GCN'],
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


@pytest.mark.parametrize('command', ['train', 'reproduce', 'datasets'])
def test_help(command, capsys):
    with pytest.raises(SystemExit) as info:
        main([command, '--help'])
    assert info.value.code == 0
    assert 'usage' in capsys.readouterr().out


def test_side_by_side():
    text = side_by_side('a\nbb', 'c', ['L', 'R'])
    assert text.splitlines() == ['L     R', 'a     c', 'bb']


def test_a_report_needs_stored_runs(capsys, tmp_path):
    argv = ['reproduce', '--report-only', '--out', str(tmp_path)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'holds no runs' in err
