"""Name numba's compiled kernels in a `perf` profile: run a script, then write /tmp/perf-PID.map.

    perf record -F 2000 -o perf.data python benchmarks/measure/kernel_symbols.py SCRIPT [ARGS ...]
    perf report -i perf.data --no-children --sort sym

`perf` reads /tmp/perf-PID.map (the perf map convention: "START SIZE NAME" a line, hexadecimal) to name
samples in code it found no symbol file for, which is where numba's JIT engine puts every kernel, loaded
from the cache or compiled. After the script ends (normally or not), every symbol the engine defines is
written with its address, as a size the gap to the next one, and as a name the mangled name's path
(``cudbound.search.smooth_node_solver._pointwise_eval``); a function numba inlined is charged to its caller.
Used for the profile of a logistic interval at n = 300 (`benchmarks/RESULTS.md`, twenty-fourth sitting).
"""
from __future__ import annotations

import os
import runpy
import sys


def _path(mangled: str) -> str:
    """cudbound.search.bounds._bound from _ZN8cudbound6search6bounds6_boundB4v271B...: the leading
    length-prefixed components."""
    s = mangled[3:] if mangled.startswith("_ZN") else mangled
    parts, i = [], 0
    while i < len(s) and s[i].isdigit():
        j = i
        while j < len(s) and s[j].isdigit():
            j += 1
        n = int(s[i:j])
        parts.append(s[j:j + n])
        i = j + n
    return ".".join(parts) or mangled


def write_map(path: str | None = None) -> int:
    """Write the perf map of this process (default /tmp/perf-PID.map); returns the number of symbols."""
    from numba.core.registry import cpu_target
    engine = cpu_target.target_context.codegen()._engine
    names = {}
    for name in sorted(engine._defined_symbols):
        try:
            address = engine._ee.get_function_address(name)
        except Exception:   # a symbol that is not a function
            continue
        if address:
            names[address] = name
    starts = sorted(names)
    with open(path or f"/tmp/perf-{os.getpid()}.map", "w") as fh:
        for k, start in enumerate(starts):
            size = min(starts[k + 1] - start, 1 << 22) if k + 1 < len(starts) else 4096
            fh.write(f"{start:x} {size:x} {_path(names[start])}\n")
    return len(starts)


def main(argv: list[str]) -> None:
    if not argv:
        sys.exit(__doc__)
    sys.argv = list(argv)
    try:
        runpy.run_path(argv[0], run_name="__main__")
    finally:
        print(f"kernel_symbols: {write_map()} symbols in /tmp/perf-{os.getpid()}.map", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
