r"""Candidates for the library's hot paths, kept beside the benchmarks until
a GPU measures them (issue "GPU": "choose the kernel by measurement").

A candidate module replaces one function of the library by a drop-in of
the same signature (:obj:`REPLACES` names it) and is measured with
:obj:`bench_resample.py --candidate NAME --device cuda`, which patches it
in for that process only. The library never imports this package. A
candidate that beats the library's function on the GPU moves into the
library in place of it (so that no branch is added); one that does not is
deleted.
"""
