#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tlbprof run, marked phases whose declarations hide a trap (issue 17, item 8): each probe mode fires its check
and the correct mode fires none of them; the correct example benchmark's first sample after tlbprof's own copy of
its chain is not a warm-up warning."""
import json
import os
import subprocess
import sys
import tempfile

from machine_probe import zero_page_on_read, zero_page_rss_kib
from report_check import Failures, ReportError, validate

TLBPROF, EXAMPLES, PROBE = sys.argv[1], sys.argv[2], sys.argv[3]
fail = Failures()
NEW = ("declared_region_resident", "declared_accesses_plausible")
THP_PATH = "/sys/kernel/mm/transparent_hugepage/enabled"
THP = "[never]" not in (open(THP_PATH).read() if os.path.exists(THP_PATH) else "[never]")


def run(mode):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        p = subprocess.run([TLBPROF, "run", "--json", out, "--quiet", "--fail-on", "never", "--", PROBE, mode],
                           capture_output=True, text=True, timeout=300)
        rep = json.load(open(out)) if os.path.exists(out) else None
        again = os.path.join(d, "a.json")
        if rep is not None:
            try:
                validate(rep)
            except ReportError as e:
                fail(f"{mode}: report does not validate: {e}")
            # analyze reads the new declared fields back and reaches the same checks.
            a = subprocess.run([TLBPROF, "analyze", out, "--json", again, "--quiet", "--fail-on", "never"],
                               capture_output=True, text=True, timeout=60)
            re = json.load(open(again)) if a.returncode == 0 else None
            # The checks analyze makes (not those only a live run can: what was watched while it ran).
            ids = {c["id"] for c in re["analysis"]["checks"]} if re else set()
            if re is None or [(c["id"], c["status"]) for c in re["analysis"]["checks"]] != [
                    (c["id"], c["status"]) for c in rep["analysis"]["checks"] if c["id"] in ids] or not set(NEW) <= ids:
                fail(f"{mode}: analyze of the report does not reach the same checks: {a.stderr.strip()}")
    if p.returncode != 0 or rep is None:
        fail(f"{mode}: exit {p.returncode}: {p.stderr.strip()}")
        return None, None, None
    return rep, {c["id"]: c for c in rep["analysis"]["checks"]}, rep["phases"][0]


rep, checks, ph = run("correct")
if rep:
    for cid in NEW:
        if checks[cid]["status"] != "pass":
            fail(f"correct: {cid} {checks[cid]['status']}: {checks[cid]['message']}")
    if [s["status"] for s in ph["self_checks"]] != ["pass", "pass"]:
        fail(f"correct: self-checks {ph['self_checks']}")
    d = ph["declared"]
    if d["resident_fraction"] != 1.0 or d["reference_ns_per_access"] is None or not d["vm_nohugepage"]:
        fail(f"correct: resident 1.0, a reference chase, VmFlags nh: {d}")
    if os.geteuid() == 0 and d["backing_source"] != "pagemap":
        fail(f"correct: as root the backing is read per page: {d['backing_source']}")
    # Its hot loop's machine code chains its loads (p = *p): a latency, as declared.
    c = checks["load_dependence"]
    if c["status"] != "pass" or c["evidence"]["chained_loads"] < 1:
        fail(f"correct: load_dependence must find the chase's chained load: {c['status']}: {c['message']}")

# Random for 20 steps, then sequential: the whole walk is judged.
rep, checks, ph = run("rotated")
if rep:
    st = {s["id"]: s for s in ph["self_checks"]}
    if st["strides_not_constant"]["status"] != "fail" or "steps 20 to" not in st["strides_not_constant"]["message"]:
        fail(f"rotated: strides_not_constant must fail from step 20: {st['strides_not_constant']}")
    if checks["workload_self_checks"]["status"] != "fail":
        fail(f"rotated: workload_self_checks {checks['workload_self_checks']['status']}")

# Two slots 32 MiB apart, no slots declared.
rep, checks, ph = run("two_slots")
if rep:
    st = {s["id"]: s for s in ph["self_checks"]}
    if st["single_cycle"]["status"] != "fail" or "sliver" not in st["single_cycle"]["message"]:
        fail(f"two_slots: single_cycle must fail on coverage: {st['single_cycle']}")
    if ph["declared"]["chain_cycle_slots"] != 2:
        fail(f"two_slots: the cycle holds 2 slots: {ph['declared']['chain_cycle_slots']}")

# 16 of 64 MiB written, the rest read: resident 25 %, the zero page for the rest (exact as root). A kernel that maps
# no zero page on a read fault gives the read pages frames of their own: all resident, and the check must say so.
ZERO_RSS, ZERO_ALL = zero_page_rss_kib()
rep, checks, ph = run("partly_resident")
if rep and not zero_page_on_read(ZERO_RSS, ZERO_ALL):
    print(f"partly_resident: this kernel maps no zero page on a read fault ({ZERO_RSS} of {ZERO_ALL} KiB resident "
          "after a read of each page): the region must be all resident and pass")
    c, d = checks["declared_region_resident"], ph["declared"]
    if c["status"] != "pass" or d["resident_fraction"] < 0.98 or (d.get("zero_page_fraction") or 0) > 0.02:
        fail(f"partly_resident without a zero page: declared_region_resident {c['status']} at "
             f"{d['resident_fraction']}, zero page {d.get('zero_page_fraction')}: {c['message']}")
elif rep:
    c, d = checks["declared_region_resident"], ph["declared"]
    if c["status"] != "warn" or abs(d["resident_fraction"] - 0.25) > 0.02:
        fail(f"partly_resident: declared_region_resident {c['status']} at {d['resident_fraction']}: {c['message']}")
    if os.geteuid() == 0 and (abs(d["zero_page_fraction"] - 0.75) > 0.02 or "zero page" not in c["message"]):
        fail(f"partly_resident: as root the rest is seen on the zero page: {d['zero_page_fraction']}")
if rep and checks["declared_accesses_plausible"]["status"] == "warn":
    fail("partly_resident: the access count is honest")

# 8 of the declared 64 MiB on THP inside a 128 MiB VMA that is 56 % THP: the range's share, never the VMA's.
if THP:
    rep, checks, ph = run("thp_range")
    if rep:
        hf = ph["page"]["huge_fraction"]
        # khugepaged may collapse more of the 4 KiB part while the probe runs; never the VMA's 56 %.
        if checks["control_thp_contamination"]["status"] != "fail" or not 0.1 <= hf < 0.5:
            fail(f"thp_range: control_thp_contamination {checks['control_thp_contamination']['status']}, "
                 f"huge_fraction {hf} (12.5 % of the range, 56 % of its VMA)")
        if "despite MADV_NOHUGEPAGE" in ph["reason"] or "never advised MADV_NOHUGEPAGE" not in ph["reason"]:
            fail(f"thp_range: the reason must say the range was never advised: {ph['reason']}")
        if ph["declared"]["vm_nohugepage"] or not ph["declared"]["vm_hugepage"]:
            fail(f"thp_range: VmFlags hg, not nh: {ph['declared']}")

# "2m" declared, advised MADV_HUGEPAGE only after its first write, from an unaligned start: the phase's reason says
# what the benchmark should change (advise before the first write, align), not tlbprof's --pages, which run has not.
if THP:
    rep, checks, ph = run("late_thp")
    if rep and ph["page"]["huge_fraction"] < 0.999:
        if checks["huge_pages_granted"]["status"] != "fail" or "advice after the first write" not in ph["reason"] or \
                "not 2 MiB-aligned" not in ph["reason"] or "--pages" in ph["reason"]:
            fail(f"late_thp: huge_pages_granted {checks['huge_pages_granted']['status']}, reason {ph['reason']!r}")
    elif rep:
        print(f"late_thp: khugepaged collapsed the range before the phase ended ({ph['page']['huge_fraction']}): "
              "not judged")

# Twenty times the accesses it makes (the probe says why not ten: on a PVM guest the chase's speed differs up to 3x
# between its allocation and the reference's, and a tenfold count read 2.21 and 2.91 times faster, under the check's
# 3x, in 2 runs of 17).
rep, checks, ph = run("inflated")
if rep:
    c = checks["declared_accesses_plausible"]
    if c["status"] != "warn" or c["evidence"]["faster_than_reference"] < 3:
        fail(f"inflated: declared_accesses_plausible {c['status']}: {c['message']}")
    if "the count is what is off" not in c["message"]:
        fail(f"inflated: its hot loop chains its loads, so the warning must blame the count: {c['message']}")
    if checks["too_fast"]["status"] == "fail":
        fail("inflated: 20x inflated is still slower than an L1 hit: too_fast must not be what catches it")

# "A chase" read through an index array of its slots, declared as latency accesses: its loads overlap.
rep, checks, ph = run("overlapped")
if rep:
    c = checks["load_dependence"]
    if c["status"] != "warn" or c["evidence"]["loads"] < 1 or c["evidence"]["chained_loads"] != 0:
        fail(f"overlapped: load_dependence {c['status']}: {c['message']}")
    body = ((rep["target"]["watch"]["cpu_clock"].get("hot_loop_code") or {}).get("body") or {})
    if body.get("loads") != 2 or body.get("chained_load_at") is not None:
        fail(f"overlapped: the gather's body holds two loads (at[k], then what it points to), none chained: {body}")
    # The count is honest: where the declared check warns, or too_fast fails (faster than an L1 hit, as here), each
    # says from the code that what is off is what the loads wait on.
    for cid in ("declared_accesses_plausible", "too_fast"):
        c = checks[cid]
        if c["status"] in ("warn", "fail") and "what the loads wait on that is off" not in c["message"]:
            fail(f"overlapped: {cid} must blame what the loads wait on, not the count: {c['message']}")

fail.finish("run-declared: every declared trap fires its check, the correct probe none")
