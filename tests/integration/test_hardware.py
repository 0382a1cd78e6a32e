#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""With a hardware PMU: what the counters say must be physically right, or the test fails (it does not skip).

Exits 77 (skipped) only where no hardware event opens at all, as in most cloud VMs; then it says so. With a PMU:
- every needed event (cycles, dTLB load misses, walk cycles where the map has them, LLC load misses) counts, in one
  group, unmultiplexed;
- the counted cycles per access agree with the calibrated clock within 10 %;
- dTLB misses per access at 256 MiB are near 1 on 4 KiB pages (65536 pages, far beyond any STLB) and near 0 on
  2 MiB pages (128, within every STLB);
- walk cycles per completed walk lie in a physical range (1 to 10000: at least a cycle, at most a few DRAM trips
  per level of a nested walk);
- the attribution adds up: its parts sum to the delta, and attribution_adds_up does not warn.
TLBPROF_TEST_SIMULATE_PMU=MODEL[,watchdog] runs the same checks on the simulated PMU (src/pmu/simpmu.c), so that
they are exercised where no PMU exists.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import validate  # noqa: E402

TLBPROF = sys.argv[1]
env = dict(os.environ)
SIMULATED = bool(os.environ.get("TLBPROF_TEST_SIMULATE_PMU"))
if SIMULATED:
    env["TLBPROF_SIMULATE_PMU"] = os.environ["TLBPROF_TEST_SIMULATE_PMU"]


def measure(size, iters, repeat):
    p = subprocess.run([TLBPROF, "--pages", "4k,2m", "--size", size, "--iters", iters, "--repeat", repeat, "--cpu",
                        "0", "--controls", "none", "--quiet", "--fail-on", "never", "--json", "-"],
                       capture_output=True, text=True, timeout=300, env=env)
    if p.returncode not in (0, 3):
        print(f"FAIL: exit {p.returncode}: {p.stderr}", file=sys.stderr)
        sys.exit(1)
    try:
        rep = json.loads(p.stdout)
        validate(rep)
    except (ValueError, AssertionError) as e:
        print(f"FAIL: the report is invalid: {e}", file=sys.stderr)
        sys.exit(1)
    return rep


# Whether any hardware event opens, from a 1 MiB run (a second, where the 256 MiB one takes 16 s to say the same).
hw = [c for c in measure("1M", "20k", "1")["counters"] if c["hardware"]]
if hw and all(c["status"] == "unsupported" for c in hw):
    print(f"SKIP: no hardware event opens here: {hw[0]['reason']}")
    sys.exit(77)
rep = measure("256M", "2M", "3")
status = {c["metric"]: c for c in rep["counters"]}

failures = []
# walk_active where the PMU's map has it (Zen's have no walk-cycle event).
needed = ["cycles", "dtlb_load_misses", "llc_load_misses"] + (
    ["walk_active"] if "walk_active" in status and not status["walk_active"]["reason"].startswith("no event for")
    else [])
for m in needed:
    c = status.get(m)
    if not c or c["status"] != "ok":
        failures.append(f"{m} must count unmultiplexed: {c and (c['status'], c['reason'])}")
ph = {x["page"]["requested"]: x for x in rep["phases"] if x["status"] == "ok"}
for page, x in ph.items():
    for m in needed:
        c = next((v for v in x["counters"].values() if v["metric"] == m), None)
        if c and (c["multiplexed"] or c["running_ns"] != c["enabled_ns"]):
            failures.append(f"{page}: {m} ran {c['running_ns']} of {c['enabled_ns']} ns")
    # Like with like: the counted cycles over the timed samples against the calibrated clock over the same time.
    cyc = next((v for v in x["counters"].values() if v["metric"] == "cycles"), None)
    ghz = rep["environment"]["core_clock_ghz"]
    counted = cyc and x["timed_ns"] and cyc["value"] / x["timed_ns"]
    if not counted or not ghz or abs(counted / ghz - 1) > 0.10:
        failures.append(f"{page}: counted {counted} vs calibrated {ghz} GHz over the timed samples: more than 10 % "
                        f"apart")


def per_access(x, m):
    c = next((v for v in x["counters"].values() if v["metric"] == m), None)
    return c and c.get("per_access")


m4, m2 = per_access(ph.get("4k", {"counters": {}}), "dtlb_load_misses"), None
if "2m" in ph:
    m2 = per_access(ph["2m"], "dtlb_load_misses")
if m4 is None or not 0.85 <= m4 <= 1.1:
    failures.append(f"4k at 256 MiB: {m4} dTLB misses per access, want near 1 (0.85 to 1.1)")
if "2m" in ph and (m2 is None or m2 > 0.02):
    failures.append(f"2m at 256 MiB: {m2} dTLB misses per access, want near 0 (at most 0.02)")
for page, x in ph.items():
    walk, miss = per_access(x, "walk_active"), per_access(x, "dtlb_load_misses")
    if walk is not None and miss and miss > 0.001 and not 1 <= walk / miss <= 10000:
        failures.append(f"{page}: {walk / miss:.1f} walk cycles per completed walk, outside 1 to 10000")
for c in rep["analysis"]["comparisons"]:
    parts = c["attribution"]
    total = sum(v for v in (parts["tlb_ns"], parts["cache_ns"], parts["unexplained_ns"]) if v is not None)
    if c["method"] != "counters" or abs(total - c["delta_ns"]) > 1e-6 * max(1, abs(c["delta_ns"])):
        failures.append(f"{c['variant']}: method {c['method']}, parts {parts} sum {total}, delta {c['delta_ns']}")
adds = next((c for c in rep["analysis"]["checks"] if c["id"] == "attribution_adds_up"), None)


def beyond_host(c):
    """The counted parts exceed the delta this host measured beyond its noise."""
    a = c["attribution"]
    parts = (a["tlb_ns"] or 0) + (a["cache_ns"] or 0)
    return a["noise_ns"] is not None and parts - c["delta_ns"] > a["noise_ns"]


# The simulated PMU's walks cost what its model says, whatever this host does: where the host's 2m phase is no
# faster than its 4k (a guest whose host backs it with small pages; a bhyve guest on a Zen 5 host read 2m 6-14 ns
# slower in 2 runs of 4), the parts exceed the delta, and the check is right to warn. Then it must say exceed.
counted = [c for c in rep["analysis"]["comparisons"] if c["method"] == "counters"]
if adds and adds["status"] == "warn" and SIMULATED and counted and all(beyond_host(c) for c in counted) and \
        "exceed the delta" in adds["message"]:
    deltas = "; ".join(f"{c['delta_ns']:.1f} ns, tlb {c['attribution']['tlb_ns']:.1f} ns" for c in counted)
    print(f"attribution_adds_up warned, rightly: the simulated walks exceed this host's own 4k-2m delta ({deltas})")
elif adds and adds["status"] == "warn":
    failures.append(f"attribution_adds_up: {adds['message']}")
for f in failures:
    print("FAIL:", f, file=sys.stderr)
print(f"{len(failures)} failed" if failures else f"hardware counters agree with the workload (PMU "
      f"{rep['environment']['cpu']['pmu']})")
sys.exit(1 if failures else 0)
