r"""Shared timing helper of the benchmarks."""
import time
from typing import Callable

import numpy as np


def median_time(fn: Callable[[], object], repeat: int) -> float:
    r"""The median wall time of :obj:`repeat` calls of :obj:`fn`, in
    seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))
