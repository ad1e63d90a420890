r"""A notice that the commands hide: torch 2.14 deprecates
:obj:`torch.jit.script`, which PyG 2.8's modules call as they load, and
prints a :obj:`FutureWarning` of two lines about 130 columns wide several
times per process, a notice to PyG's developers that the laboratory's users
cannot act on. Only that notice, and only while PyG loads, is hidden."""

import contextlib
import warnings
from collections.abc import Iterator

#: The start of torch's notice.
JIT_SCRIPT_NOTICE = r'`torch\.jit\.script` is deprecated'


@contextlib.contextmanager
def pyg_loading_quietly() -> Iterator[None]:
    r"""Hides :obj:`JIT_SCRIPT_NOTICE` inside the block (where the modules
    that load PyG are imported); every other warning shows as before, and
    the warning filters are restored after it."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            'ignore', message=JIT_SCRIPT_NOTICE, category=FutureWarning
        )
        yield
