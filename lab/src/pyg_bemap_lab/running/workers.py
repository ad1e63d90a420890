r"""How a worker process of :obj:`--jobs` starts. It lives apart from
:mod:`~pyg_bemap_lab.running.execution`, which loads PyG: a worker imports
the module of its start function before running it, so that loading
happens here, inside :func:`~pyg_bemap_lab.notices.pyg_loading_quietly`."""

import signal

from pyg_bemap_lab.notices import pyg_loading_quietly


def start_worker() -> None:
    r"""Leaves Ctrl-C, which reaches every process of the terminal's group,
    to the main process (which ends the workers), loads the training code
    and trains with :obj:`~pyg_bemap_lab.running.threads.RUN_THREADS`."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with pyg_loading_quietly():
        import torch

        from pyg_bemap_lab.running import execution  # noqa: F401
        from pyg_bemap_lab.running.threads import RUN_THREADS
    torch.set_num_threads(RUN_THREADS)
