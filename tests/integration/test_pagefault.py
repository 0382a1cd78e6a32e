#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The page-fault workload, all five cases at a small size in two processes: the fault counts are real and consistent."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import Failures, validate  # noqa: E402

TLBPROF = sys.argv[1]
fail = Failures()


PAGES = (16 << 20) // 4096
with tempfile.TemporaryDirectory() as d:
    p = subprocess.run([TLBPROF, "--workload", "pagefault", "--size", "16M", "--pages", "4k,2m", "--repeat", "2",
                        "--processes", "2", "--dir", d, "--json", "-"], capture_output=True, text=True, timeout=300)
    if p.returncode not in (0, 1, 3):
        fail(f"exit {p.returncode}: {p.stderr}")
    rep = json.loads(p.stdout) if p.stdout else None
    if rep:
        try:
            validate(rep)
        except AssertionError as e:
            fail(f"invalid report: {e}")
        if os.listdir(d):
            fail(f"the data file must be removed: {os.listdir(d)}")
        if "anon_cold" not in p.stderr or "ns/fault" not in p.stderr:
            fail("the table (stderr with --json -) must show the fault table")
        ph = {x["name"]: x for x in rep["phases"]}
        want = [f"pagefault/{pg}/16M/{c}/r0" for c in ("anon_cold", "anon_refault", "anon_prefault")
                for pg in ("4k", "2m")] + ["pagefault/4k/16M/file_warm/r0", "pagefault/4k/16M/file_cold/r0"]
        if [x["name"] for x in rep["phases"]] != want:
            fail(f"phases: {[x['name'] for x in rep['phases']]}")
        for name, x in ph.items():
            if x["status"] == "failed":
                fail(f"{name}: {x['reason']}")
                continue
            if x["status"] != "ok":
                continue
            for k in ("case", "pages", "faults", "ns_per_fault", "ns_per_page", "cpu_time"):
                if k not in x:
                    fail(f"{name}: no '{k}'")
            if x["pages"] != PAGES or x["processes"] != 2 or len(x["fault_samples"]) != 4:
                fail(f"{name}: pages {x['pages']}, processes {x['processes']}, samples {len(x['fault_samples'])}")
            if {s["process"] for s in x["fault_samples"]} != {0, 1}:
                fail(f"{name}: samples must come from both processes")
            if x["faults"]["source"] == "perf" and not x["faults"]["rusage_agrees"]:
                fail(f"{name}: perf and getrusage disagree: {x['fault_samples']}")
        c = ph.get("pagefault/4k/16M/anon_cold/r0")
        if c and c["status"] == "ok" and abs(c["faults"]["minor"] - PAGES) > PAGES * 0.02:
            fail(f"anon_cold 4k: {c['faults']} faults for {PAGES} pages")
        c = ph.get("pagefault/2m/16M/anon_cold/r0")
        if c and c["status"] == "ok" and c["page"]["backing"] == "thp" and abs(c["faults"]["minor"] - 8) > 2:
            fail(f"anon_cold on THP: {c['faults']} faults for 8 huge pages")
        c = ph.get("pagefault/4k/16M/anon_refault/r0")
        if c and c["status"] == "ok" and abs(c["faults"]["minor"] - PAGES) > PAGES * 0.02:
            fail(f"anon_refault: {c['faults']} faults for {PAGES} pages")
        for pg in ("4k", "2m"):
            c = ph.get(f"pagefault/{pg}/16M/anon_prefault/r0")
            if c and c["status"] == "ok" and c["faults"]["minor"] + c["faults"]["major"] != 0:
                fail(f"anon_prefault {pg} faulted: {c['faults']}")
        c = ph.get("pagefault/4k/16M/file_warm/r0")
        if c and c["status"] == "ok" and not (0 < c["faults"]["minor"] < PAGES and c["faults"]["major"] == 0):
            fail(f"file_warm: minor faults, fewer than pages (fault-around), none major: {c['faults']}")
        c = ph.get("pagefault/4k/16M/file_cold/r0")
        if c:
            if c["status"] == "ok" and not (c["faults"]["major"] > 0 and c["resident_before"] <= 0.01):
                fail(f"file_cold: {c['faults']}, resident before {c['resident_before']}")
            if c["status"] == "skipped" and "resident" not in c["reason"]:
                fail(f"file_cold skipped without the resident fraction: {c['reason']}")
        checks = {x["id"]: x["status"] for x in rep["analysis"]["checks"]}
        for cid in ("anon_cold_faults_per_page", "anon_prefault_no_faults"):
            if checks.get(cid) != "pass":
                fail(f"{cid}: {checks.get(cid)}")
        if checks.get("file_cold_major_faults") not in ("pass", "skip"):
            fail(f"file_cold_major_faults: {checks.get('file_cold_major_faults')}")
        if checks.get("faults_in_timed_phase") != "skip":
            fail("faults are the measurement here: faults_in_timed_phase must not judge them")

    # Bad values: exit 2, one line, naming the option.
    for args, text in ((["--cases", "anon_warm"], "--cases 'anon_warm'"), (["--processes", "0"], "--processes '0'"),
                       (["--dir", os.path.join(d, "missing")], "--dir"), (["--cases", "anon_cold,,file_warm"], "--cases")):
        p = subprocess.run([TLBPROF, "--workload", "pagefault", *args], capture_output=True, text=True, timeout=30)
        if p.returncode != 2 or len(p.stderr.strip().splitlines()) != 1 or text not in p.stderr:
            fail(f"{args}: exit {p.returncode} {p.stderr!r}")

fail.finish("all page-fault checks passed")
