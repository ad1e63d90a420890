import subprocess
import sys


def test_a_command_and_its_workers_print_no_notice_of_pyg(tmp_path):
    argv = [sys.executable, '-m', 'pyg_bemap_lab.cli', 'compare']
    argv += ['--seeds', '2', '--epochs', '2', '--jobs', '2']
    argv += ['--root', str(tmp_path)]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=600, check=True
    )
    assert 'torch.jit.script' not in done.stderr
    assert 'Warning' not in done.stderr
