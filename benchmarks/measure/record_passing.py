"""What it costs numba to hand a record of arrays to a part of a compiled loop (issue 30, 2026-11-26).

    python benchmarks/measure/record_passing.py

A loop calls a small part twice per iteration; the part reads and writes three arrays of a
record of 24. The record is passed as a namedtuple of arrays (numba takes and drops one
reference per array: two atomic operations each), as the three arrays alone, or as a
structref (``cudbound.search.records``: one reference). Prints ns per part call, median of 7.
"""
import platform
import sys
import time
from collections import namedtuple

import numpy as np
from numba import njit

from cudbound.search.records import compiled_record

Pool = namedtuple("Pool", ["a%d" % i for i in range(24)])
PoolRef = compiled_record(Pool, "a record of 24 arrays")


@njit(inline="always")
def _part_record(pool, c):
    pool.a0[c] = pool.a1[c] + 1.0
    if c % 3 == 0:
        pool.a2[c] += pool.a0[c]


@njit(inline="always")
def _part_arrays(a0, a1, a2, c):
    a0[c] = a1[c] + 1.0
    if c % 3 == 0:
        a2[c] += a0[c]


@njit
def tuple_record(pool, n):
    for i in range(n):
        _part_record(pool, i % 1000)
        _part_record(pool, (i + 7) % 1000)


@njit
def three_arrays(pool, n):
    a0, a1, a2 = pool.a0, pool.a1, pool.a2
    for i in range(n):
        _part_arrays(a0, a1, a2, i % 1000)
        _part_arrays(a0, a1, a2, (i + 7) % 1000)


@njit
def structref_record(pool, n):
    ref = PoolRef(*pool)
    for i in range(n):
        _part_record(ref, i % 1000)
        _part_record(ref, (i + 7) % 1000)


def main():
    print(f"# {platform.processor() or platform.machine()}, Python {sys.version.split()[0]}, "
          f"command: python benchmarks/measure/record_passing.py")
    pool = Pool(*[np.zeros(1000) for _ in range(24)])
    n = 1_000_000
    for f in (tuple_record, three_arrays, structref_record):
        f(pool, 10)
        times = []
        for _ in range(7):
            t = time.perf_counter()
            f(pool, n)
            times.append((time.perf_counter() - t) / (2 * n) * 1e9)
        print(f"{f.__name__:18s} {np.median(times):6.1f} ns per part call (median of 7)")


if __name__ == "__main__":
    main()
