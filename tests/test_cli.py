import pytest

from pyg_bemap.cli import main


def test_train_prints_both_models(capsys):
    assert main(['train', '--epochs', '3', '--nodes', '200',
                 '--hidden', '8']) == 0
    out = capsys.readouterr().out
    assert 'GCN' in out and 'BeMap(sym)' in out and 'dSP' in out


@pytest.mark.parametrize('argv', [
    ['train', '--epochs', '0'],
    ['train', '--beta', '2'],
    ['train', '--strategy', 'random'],
    ['fly'],
    [],
])
def test_bad_arguments_exit_with_an_error(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert 'error' in capsys.readouterr().err


def test_help(capsys):
    with pytest.raises(SystemExit) as info:
        main(['train', '--help'])
    assert info.value.code == 0
    assert 'validation' in capsys.readouterr().out
