#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The stride and tlbsize workloads at small sizes, and 1 GiB pages for chase and stride (created, then restored)."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import Failures, validate  # noqa: E402

TLBPROF = sys.argv[1]
fail = Failures()


def run(args, expect=(0,)):
    p = subprocess.run([TLBPROF, *args, "--quiet", "--json", "-"], capture_output=True, text=True, timeout=300)
    if p.returncode not in expect:
        fail(f"{args}: exit {p.returncode}, want {expect}: {p.stderr}")
        return None
    try:
        rep = json.loads(p.stdout)
        validate(rep)
        return rep
    except (ValueError, AssertionError) as e:
        fail(f"{args}: invalid report: {e}")
        return None


# 1. stride: one phase per stride, steps labelled, the TLB step reported.
# Each step gets the label the geometry predicts, or none where it did not rise past its own noise: these
# are independent loads, and on some cores (Raptor Cove guests) the walks overlap so well that 512 B -> 4 KiB
# does not rise at all. The labels must follow the evidence, and the summary must claim only what they say.
rep = run(["--workload", "stride", "--pages", "4k", "--size", "4M", "--strides", "8,64,512,4K,8K", "--iters", "200k",
           "--repeat", "3"], expect=(0, 1))
if rep:
    names = [p["name"] for p in rep["phases"]]
    want = [f"stride/4k/4M/s{s}/r0" for s in ("8", "64", "512", "4K", "8K")]
    if names != want:
        fail(f"stride phases: {names}")
    labels = [s["label"] for s in rep["analysis"]["stride_steps"]]
    if len(labels) != 4 or labels[0] not in ("cache", "none") or labels[1] not in ("cache", "none") or \
            labels[2] not in ("tlb", "none") or labels[3] != "flat":
        fail(f"stride step labels: {labels}")
    for s in rep["analysis"]["stride_steps"]:
        if s["label"] == "none" and s["delta_ns"] > s["noise_ns"]:
            fail(f"a step that rose past its noise is labelled none: {s}")
        if s["label"] in ("cache", "tlb") and not s["delta_ns"] > s["noise_ns"]:
            fail(f"a step labelled {s['label']} must rise past its noise: {s}")
    for p in rep["phases"]:
        if p["status"] != "ok" or p["params"]["slots"] != (4 << 20) // p["params"]["stride_bytes"]:
            fail(f"{p['name']}: {p['status']} {p['reason']} slots {p['params']['slots']}")
    named = "TLB step (512B -> 4KB stride)" in rep["analysis"]["summary"]
    if named != (labels[2] == "tlb") or (named and "the translation part could not be told: no huge-page sweep"
                                        not in rep["analysis"]["summary"]):
        fail(f"the summary names the TLB step: {rep['analysis']['summary']}")
    tf = next(c for c in rep["analysis"]["checks"] if c["id"] == "too_fast")
    if tf["status"] != "skip":
        fail(f"strided independent loads are not a latency: {tf}")

# 2. tlbsize: a small sweep, pinned, in random order, analysed into knees.
rep = run(["--workload", "tlbsize", "--max-pages", "256", "--repeat", "3", "--iters", "50k"], expect=(0, 1))
if rep:
    pages = [p["params"]["slots"] for p in rep["phases"]]
    if sorted(pages) == pages or len(set(pages)) != len(pages) or max(pages) != 256 or min(pages) != 1:
        fail(f"tlbsize points: random order, unique, 1..256: {pages}")
    cpus = {p["params"]["cpu"] for p in rep["phases"]}
    if len(cpus) != 1 or None in cpus:
        fail(f"tlbsize must pin every point to one CPU: {cpus}")
    if any(p["params"]["stride_bytes"] != 4096 or p["params"]["layout"] != "colored" for p in rep["phases"]):
        fail("tlbsize: one colored slot per 4 KiB page")
    if not isinstance(rep["analysis"]["knees"], list):
        fail("analysis.knees must be a list")
    geo = next(c for c in rep["analysis"]["checks"] if c["id"] == "tlb_geometry")
    if geo["status"] == "skip":
        fail(f"tlb_geometry must judge a tlbsize sweep: {geo}")
    reach = rep["environment"]["tlb_reach"]
    tlb = rep["environment"]["tlb"]
    if tlb["l2d_4k_entries"] and reach["l2d_4k_bytes"] != tlb["l2d_4k_entries"] * 4096:
        fail(f"tlb_reach: {reach} vs {tlb}")

# 3. 1 GiB pages: an empty pool fails the phase with the fix (no crash); with a page of our own it works.
nr_path = "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages"
free_path = "/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages"
if os.path.exists(free_path):
    if int(open(free_path).read()) == 0:
        for wl in ("chase", "stride"):
            extra = ["--strides", "4K"] if wl == "stride" else []
            rep = run(["--workload", wl, "--pages", "1g", "--size", "8M", "--iters", "10k", "--repeat", "1", *extra],
                      expect=(3,))
            if rep:
                ph = rep["phases"][-1]
                if ph["status"] != "failed" or "nr_hugepages" not in ph["reason"]:
                    fail(f"{wl} on an empty 1 GiB pool: {ph['status']} {ph['reason']}")
    if os.geteuid() == 0:
        before = int(open(nr_path).read())
        try:
            with open(nr_path, "w") as f:
                f.write(str(before + 1))
            if int(open(free_path).read()) < 1:
                print("SKIP: could not reserve a 1 GiB page (memory too fragmented)")
            else:
                for wl in ("chase", "stride"):
                    extra = ["--strides", "4K"] if wl == "stride" else ["--controls", "none"]
                    rep = run(["--workload", wl, "--pages", "1g", "--size", "64M", "--iters", "50k", "--repeat", "2",
                               *extra], expect=(0, 1))
                    if rep:
                        ph = rep["phases"][-1]
                        if ph["status"] != "ok" or ph["page"]["backing"] != "hugetlb" or \
                                ph["page"]["kernel_page_bytes"] != 1 << 30:
                            fail(f"{wl} on a 1 GiB page: {ph['status']} {ph['reason']} {ph['page']}")
        finally:
            with open(nr_path, "w") as f:
                f.write(str(before))
    else:
        print("SKIP: not root, cannot reserve a 1 GiB page")
else:
    print("SKIP: this kernel has no 1 GiB hugetlb pool")

# 4. Every workload as a user types it: the table on stdout, no --json, no -q. The page-fault workload runs its
#    samples in child processes given the parent's command line; from 8e93b5e (-q with nothing to write is a
#    usage error) to the fix, each child refused the "--quiet" added to it, and every phase failed, while every
#    test passed --json. So each workload here, at a small size, with no file named.
known = subprocess.run([TLBPROF, "--workload", "?"], capture_output=True, text=True, timeout=30).stderr
names = known[known.find("(known: ") + 8:known.rfind(")")].split(", ") if "(known: " in known else []
if sorted(names) != sorted(["chase", "stride", "tlbsize", "pagefault"]):
    fail(f"the workloads tlbprof names: {names}")
SMALL = {"chase": ["--size", "2M"], "stride": ["--size", "2M"], "tlbsize": ["--max-pages", "64"],
         "pagefault": ["--size", "1M", "--processes", "2", "--cases", "anon_cold,anon_prefault,file_warm"]}
with tempfile.TemporaryDirectory() as d:
    for name in names:
        args = [TLBPROF, "--workload", name, "--pages", "4k", "--repeat", "1", *SMALL.get(name, [])]
        if name == "pagefault":
            args += ["--dir", d]
        p = subprocess.run(args, capture_output=True, text=True, timeout=300, cwd=d)
        failed = [line for line in p.stdout.splitlines() if " failed: " in line]
        if p.returncode not in (0, 1) or failed or "phase" not in p.stdout or p.stderr.strip():
            fail(f"--workload {name} as typed: exit {p.returncode}, failed phases {failed}, stderr {p.stderr!r}")

fail.finish("all workload checks passed")
