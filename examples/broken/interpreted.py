#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A benchmark in an interpreter, as a pyperf user writes one: PASSES over one byte of each page of 64 MiB, timed
with time.perf_counter(), pinned from outside (tlbprof run --cpu N, as pyperf --affinity or taskset). The
interpreter reads the clock from its startup on, not only around the timed loop. `prefault` (correct): a bytearray,
which CPython zeroes with memset before the clock starts. `first_touch` (the trap): an anonymous mmap, which the
timed loop touches first. 200 passes, not 40: on a Zen 5 guest, whose first touches wait for the host, the memset of
`prefault` outweighed the 40 passes' whole libpython in 1 run of 10 and was taken for the hot loop."""
import mmap
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "prefault"
SIZE = 64 << 20
PASSES = 200
buf = bytearray(SIZE) if MODE == "prefault" else mmap.mmap(-1, SIZE)
t0 = time.perf_counter()
for _ in range(PASSES):
    for i in range(0, SIZE, 4096):
        buf[i] = (buf[i] + 1) & 255
t1 = time.perf_counter()
print(f"interpreted_{MODE}: {(t1 - t0) / (PASSES * SIZE // 4096) * 1e9:.1f} ns per access")
