import inspect
import subprocess
import sys

from pyg_bemap import SamplerSettings
from pyg_bemap.datasets import ALIASES, SPECS, default_root
from pyg_bemap_lab.names import (
    BEMAP_BETA,
    BEMAP_MIN_KEEP,
    DATASET_ALIASES,
    DATASETS,
    PROTOCOL_NAMES,
    TRAIN_EPOCHS,
    TRAIN_PATIENCE,
    default_data_root,
)
from pyg_bemap_lab.running.protocols import PROTOCOLS
from pyg_bemap_lab.running.training import train


def test_the_light_names_are_those_of_the_modules_that_own_them(
    monkeypatch,
):
    assert DATASETS == tuple(sorted(SPECS))
    assert DATASET_ALIASES == ALIASES
    assert PROTOCOL_NAMES == tuple(sorted(PROTOCOLS))
    defaults = inspect.signature(train).parameters
    assert (TRAIN_EPOCHS, TRAIN_PATIENCE) == (
        defaults['epochs'].default,
        defaults['patience'].default,
    )
    assert default_data_root() == default_root()
    assert (BEMAP_BETA, BEMAP_MIN_KEEP) == (
        SamplerSettings().beta,
        SamplerSettings().min_keep,
    )
    monkeypatch.setenv('PYG_BEMAP_DATA', '/somewhere')
    assert default_data_root() == default_root() == '/somewhere'


def test_the_command_line_parses_and_helps_without_torch():
    code = (
        'import sys\n'
        'from pyg_bemap_lab.cli import build_parser\n'
        'parser = build_parser()\n'
        'for argv in ([], ["compare"], ["sweep"], ["diagnose"], ["train"],'
        ' ["reproduce"]):\n'
        '    try:\n'
        '        parser.parse_args(argv + ["--help"])\n'
        '    except SystemExit:\n'
        '        pass\n'
        'heavy = {"torch", "torch_geometric", "pandas", "matplotlib",'
        ' "scipy", "pyg_bemap"} & set(sys.modules)\n'
        'print(sorted(heavy))\n'
    )
    out = subprocess.run(
        [sys.executable, '-c', code], capture_output=True, text=True
    ).stdout
    assert out.splitlines()[-1] == '[]'
