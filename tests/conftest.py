import os
import subprocess
import sys
from collections.abc import Mapping

import pytest
import torch
from hypothesis import settings
from torch_geometric.data import Data

settings.register_profile('ci', max_examples=60, deadline=None)
settings.load_profile('ci')


def pytest_collection_modifyitems(config, items):
    r"""Skips the tests marked :obj:`cuda` where there is no CUDA device."""
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason='needs a CUDA device')
    for item in items:
        if 'cuda' in item.keywords:
            item.add_marker(skip)


def random_graph(
    num_nodes: int = 30,
    num_edges: int = 200,
    num_groups: int = 2,
    seed: int = 0,
    simple: bool = False,
) -> Data:
    r"""A random directed multigraph with self-loops and isolated nodes
    (with :obj:`simple`, without self-loops and repeated edges)."""
    gen = torch.Generator().manual_seed(seed)
    edge_index = torch.randint(0, num_nodes, (2, num_edges), generator=gen)
    if simple:
        edge_index = edge_index[:, edge_index[0] != edge_index[1]]
        edge_index = torch.unique(edge_index, dim=1)
    s = torch.randint(0, num_groups, (num_nodes,), generator=gen)
    x = torch.randn(num_nodes, 8, generator=gen)
    return Data(x=x, edge_index=edge_index, s=s, num_nodes=num_nodes)


#: The one warning that PyG itself raises at import on a supported release
#: (PyG 2.8.1 on torch 2.15: ``torch.jit.script`` is deprecated), which
#: vanilla PyG code shows as well: tests that demand a silent run ignore
#: it, and only it.
UPSTREAM_WARNINGS = 'ignore:`torch.jit.script` is deprecated:FutureWarning'


def without_upstream_warnings(env: Mapping[str, str]) -> dict[str, str]:
    r""":obj:`env` with :obj:`UPSTREAM_WARNINGS` added to
    :obj:`PYTHONWARNINGS`."""
    given = env.get('PYTHONWARNINGS')
    both = f'{given},{UPSTREAM_WARNINGS}' if given else UPSTREAM_WARNINGS
    return {**env, 'PYTHONWARNINGS': both}


def run_python(*args: str, **kwargs) -> subprocess.CompletedProcess:
    r"""Runs this interpreter with :obj:`args` (a script, or :obj:`'-c'`
    and code) in a fresh process, its output captured as text, for at most
    ten minutes (without :obj:`UPSTREAM_WARNINGS`)."""
    kwargs.setdefault('timeout', 600)
    kwargs['env'] = without_upstream_warnings(kwargs.get('env', os.environ))
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, **kwargs
    )
