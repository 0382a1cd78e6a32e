#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""With a hardware PMU: dTLB misses follow the page size, and the calibrated clock agrees with the cycles counter.

Exits 77 (skipped) where hardware events do not open, as in most cloud VMs.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import validate  # noqa: E402

TLBPROF = sys.argv[1]
p = subprocess.run([TLBPROF, "--pages", "4k,2m", "--size", "64M", "--iters", "2M", "--repeat", "3", "--cpu", "0",
                    "--controls", "none", "--quiet", "--json", "-"], capture_output=True, text=True, timeout=300)
if p.returncode not in (0, 1, 3):
    print(f"FAIL: exit {p.returncode}: {p.stderr}", file=sys.stderr)
    sys.exit(1)
try:
    rep = json.loads(p.stdout)
    validate(rep)
except (ValueError, AssertionError) as e:
    print(f"FAIL: the report is invalid: {e}", file=sys.stderr)
    sys.exit(1)
status = {c["metric"]: c for c in rep["counters"]}
miss = status.get("dtlb_load_misses")
if not miss or miss["status"] not in ("ok", "multiplexed"):
    print(f"SKIP: dTLB misses cannot be counted here: {miss['reason'] if miss else 'not requested'}")
    sys.exit(77)

failures = []
ph = {x["name"]: x for x in rep["phases"]}
p4, p2 = ph.get("chase/4k/64M/r0"), ph.get("chase/2m/64M/r0")
r4 = p4 and p4["counters"].get("dTLB-load-misses", {}).get("per_access")
r2 = p2 and p2["status"] == "ok" and p2["counters"].get("dTLB-load-misses", {}).get("per_access")
# 16384 pages at random are far beyond any dTLB: nearly every access misses on 4 KiB pages.
if r4 is None or r4 < 0.5:
    failures.append(f"4k at 64 MiB: {r4} dTLB misses per access, expected > 0.5")
# 32 huge pages fit every 2 MiB TLB.
if r2 is not None and r2 is not False and r2 > 0.1:
    failures.append(f"2m at 64 MiB: {r2} dTLB misses per access, expected < 0.1")
cmp = rep["analysis"]["comparisons"]
if r2 and (not cmp or cmp[0]["method"] != "counters" or not cmp[0]["ns_per_tlb_miss"]):
    failures.append(f"the comparison must use the counters: {cmp}")
cyc = status.get("cycles")
if cyc and cyc["status"] == "ok" and p4:
    counted = p4["cycles_per_access"].get("counter_mean")
    calibrated = p4["cycles_per_access"]["median"]
    if not counted or abs(counted / calibrated - 1) > 0.25:
        failures.append(f"cycles counter {counted} vs calibrated clock {calibrated} per access differ > 25 %")
for f in failures:
    print("FAIL:", f, file=sys.stderr)
print(f"{len(failures)} failed" if failures else "hardware counters agree with the workload")
sys.exit(1 if failures else 0)
