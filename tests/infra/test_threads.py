import numpy as np
import pytest
import torch

import pyg_bemap.infra.threads as threads_module
from pyg_bemap.infra.threads import in_threads, sort_rows, uniform


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(threads_module, 'CHUNK', 1000)


def test_up_to_one_chunk_is_torch_rand(small_chunks):
    for size in (0, 1, 1000):
        mine = uniform(size, torch.Generator().manual_seed(3))
        assert torch.equal(
            mine, torch.rand(size, generator=torch.Generator().manual_seed(3))
        )


def test_chunks_depend_on_the_generator_only(small_chunks):
    draws = []
    threads, dtype = torch.get_num_threads(), torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)  # keys stay float32
        for count in (1, 2, 1):
            torch.set_num_threads(count)
            draws.append(uniform(4500, torch.Generator().manual_seed(7)))
    finally:
        torch.set_num_threads(threads)
        torch.set_default_dtype(dtype)
    assert all(torch.equal(draws[0], d) for d in draws)
    keys = draws[0]
    assert keys.shape == (4500,) and keys.dtype == torch.float32
    assert 0 <= float(keys.min()) and float(keys.max()) < 1
    chunks = keys[:4000].view(4, 1000)
    assert all(not torch.equal(chunks[0], c) for c in chunks[1:])
    other = uniform(4500, torch.Generator().manual_seed(8))
    assert not torch.equal(keys, other)
    # uniform: the mean of 4500 draws within 5 standard errors of 1/2
    assert abs(float(keys.double().mean()) - 0.5) < 5 * (1 / 12 / 4500) ** 0.5


def test_rows_are_sorted_in_pieces(small_chunks):
    gen = torch.Generator().manual_seed(0)
    blocks = [
        torch.randint(0, 2**62, (rows, size), generator=gen)
        for rows, size in ((700, 3), (50, 40), (2, 1500))
    ]
    expected = [np.sort(b.numpy(), axis=1) for b in blocks]
    sort_rows(blocks)
    for block, sorted_ in zip(blocks, expected):
        assert np.array_equal(block.numpy(), sorted_)


def test_an_exception_in_a_thread_reaches_the_caller():
    def fail(item):
        if item == 3:
            raise RuntimeError('item 3')

    default = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            with pytest.raises(RuntimeError, match='item 3'):
                in_threads(fail, range(5))
    finally:
        torch.set_num_threads(default)
