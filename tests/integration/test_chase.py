#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run the real binary on small chase workloads and check the JSON report, the page backing and the counters."""
import json
import math
import os
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import Failures, validate  # noqa: E402

TLBPROF = sys.argv[1]
fail = Failures()


def run(args, expect=(0,)):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "report.json")
        p = subprocess.run([TLBPROF, *args, "--json", out], capture_output=True, text=True, timeout=300)
        if p.returncode not in expect:
            fail(f"{args}: exit {p.returncode}, want {expect}\nstderr: {p.stderr}\nstdout: {p.stdout}")
        rep = None
        if os.path.exists(out):
            with open(out) as f:
                rep = json.load(f)
            try:
                validate(rep)
            except AssertionError as e:
                fail(f"{args}: report invalid: {e}")
        leftovers = [n for n in os.listdir(d) if n != "report.json"]
        if leftovers:
            fail(f"{args}: temporary files left behind: {leftovers}")
        return p, rep


def phase(rep, name):
    for p in rep["phases"]:
        if p["name"] == name:
            return p
    fail(f"no phase {name} in {[p['name'] for p in rep['phases']]}")
    return None


def thp_mode():
    try:
        s = open("/sys/kernel/mm/transparent_hugepage/enabled").read()
        return s[s.index("[") + 1:s.index("]")]
    except (OSError, ValueError):
        return "never"


# 1. The first command at a small size: 4k and THP 2m.
p, rep = run(["--workload", "chase", "--pages", "4k,2m", "--size", "16M", "--iters", "200k", "--repeat", "3"],
             expect=(0, 3))
if rep:
    if rep["command"][:2] != [TLBPROF, "--workload"]:
        fail(f"command not recorded: {rep['command']}")
    if "chase/4k/16M/r0" not in p.stdout:
        fail("the table does not list the 4k phase")
    ph = phase(rep, "chase/4k/16M/r0")
    if ph:
        if ph["status"] != "ok":
            fail(f"4k phase: {ph['status']} {ph['reason']}")
        pg = ph["page"]
        if pg["backing"] != "base" or pg["kernel_page_bytes"] != 4096 or pg["huge_fraction"] != 0 \
                or pg["anon_huge_bytes"] != 0:
            fail(f"4k phase not verified on 4 KiB pages: {pg}")
        if ph["params"]["slots"] != 4096:
            fail(f"16M / 4K stride should be 4096 slots: {ph['params']}")
        if {c["id"]: c["status"] for c in ph["self_checks"]} != {"single_cycle": "pass",
                                                                  "strides_not_constant": "pass"}:
            fail(f"self-checks: {ph['self_checks']}")
        if not ph["ns_per_access"]["median"] > 0 or not ph["cycles_per_access"]["median"] > 0:
            fail("ns and cycles per access must be positive")
        # Page faults are real: the counted prefault touched 4096 pages, one fault each on 4 KiB pages...
        pf = ph["prefault"]["counters"].get("page-faults")
        if pf is None:
            fail(f"page-faults did not count: {ph['prefault']}")
        elif not 4096 <= pf <= 4096 + 64:
            fail(f"prefault of 4096 base pages counted {pf} page faults")
        # ... and none were left for the timed samples.
        tf = ph["counters"].get("page-faults")
        if tf is None or tf["value"] != 0:
            fail(f"page faults inside the timed samples: {tf}")
        tc = ph["counters"].get("task-clock")
        if tc is None or tc["value"] <= 0:
            fail(f"task-clock must count during the timed samples: {tc}")
    ph2 = phase(rep, "chase/2m/16M/r0")
    if ph2 and thp_mode() != "never":
        if ph2["status"] == "ok":
            if ph2["page"]["backing"] != "thp" or ph2["page"]["huge_fraction"] < 0.999:
                fail(f"2m phase ok but not THP-backed: {ph2['page']}")
            pf = ph2["prefault"]["counters"].get("page-faults", 0)
            if pf > 64:
                fail(f"a THP-backed 16 MiB region should fault about 8 times, counted {pf}")
        elif "THP" not in ph2["reason"]:
            fail(f"2m failed without saying why: {ph2['reason']}")
    # Hardware events: unsupported with a reason here; ok where a PMU exists.
    for c in rep["counters"]:
        if c["status"] not in ("ok", "multiplexed") and not c["reason"]:
            fail(f"counter {c['name']} is {c['status']} without a reason")
    sw = {c["name"]: c["status"] for c in rep["counters"] if not c["hardware"]}
    for name in ("page-faults", "minor-faults", "major-faults", "task-clock", "cpu-migrations"):
        if sw.get(name) != "ok":
            fail(f"software counter {name}: {sw.get(name)}")
    hw = [c for c in rep["counters"] if c["hardware"]]
    if not hw:
        fail("no hardware events were requested")
    if hw and all(c["status"] == "unsupported" for c in hw):
        if not all(any(w in c["reason"] for w in ("perf_event_open", "encod", "PMU", "no event")) for c in hw):
            fail(f"unsupported hardware events must say why: {[c['reason'] for c in hw]}")
        if "pmu_unavailable" not in [c["id"] for c in rep["analysis"]["checks"]]:
            fail("the report must say the PMU is unavailable")
    if ph and ph2 and ph2["status"] == "ok":
        cmp = [c for c in rep["analysis"]["comparisons"] if c["variant"] == "chase/2m/16M/r0"]
        if len(cmp) != 1 or cmp[0]["baseline"] != "chase/4k/16M/r0":
            fail(f"expected one 4k -> 2m comparison: {rep['analysis']['comparisons']}")

# 1b. Without dTLB counters a packed control runs before each size; --controls none drops it.
if rep:
    dtlb_ok = any(c["metric"] == "dtlb_load_misses" and c["status"] in ("ok", "multiplexed")
                  for c in rep["counters"])
    ctl = [p for p in rep["phases"] if p.get("role") == "control"]
    if not dtlb_ok:
        if len(ctl) != 1 or ctl[0]["name"] != "chase/4k:packed/16M/r0" or ctl[0]["status"] != "ok":
            fail(f"expected one packed control: {[(p['name'], p['status']) for p in ctl]}")
        else:
            c = ctl[0]
            if c["params"]["stride_bytes"] != 128 or c["params"]["slots"] != 4096 or \
                    c["controls"] != {"size_bytes": 16 << 20, "stride_bytes": 4096}:
                fail(f"the control must touch 4096 lines at 128 B stride: {c['params']} {c.get('controls')}")
            tr = [p for p in rep["analysis"]["phases"] if p["name"] == "chase/4k/16M/r0"]
            if not tr or tr[0]["control"] != c["name"] or not isinstance(tr[0]["translation_ns"], (int, float)):
                fail(f"the 4k phase must be analysed against its control: {tr}")
            summ = rep["analysis"]["summary"]
            # A noisy minute may make the phases incomparable: then no share is printed, and the answer says why.
            if "address translation is" not in summ and "could not be compared" not in summ:
                fail(f"summary must state the translation share (or why the phases could not be compared): {summ}")
            tr = rep["analysis"]["comparisons"][0]["translation"]
            if not tr or tr["hi_basis"] != "packed control" or tr["lo_ns"] > tr["hi_ns"] or (
                    not tr["proven"] and "address translation is" in summ and
                    f"{tr['lo_ns']:.1f}–{tr['hi_ns']:.1f} of" not in summ):
                fail(f"the translation range: {tr}, summary {summ}")
p, rep2 = run(["--pages", "4k", "--size", "1M", "--iters", "20k", "--repeat", "2", "--controls", "none"])
if rep2 and any(p.get("role") == "control" for p in rep2["phases"]):
    fail("--controls none still ran a control")

# 2. The aligned layout and a pinned CPU are recorded.
p, rep = run(["--pages", "4k", "--size", "1M", "--stride", "4K", "--layout", "aligned", "--cpu", "0",
              "--iters", "50k", "--repeat", "2", "--seed", "7"])
if rep:
    ph = phase(rep, "chase/4k/1M/r0") or rep["phases"][0]
    if ph["params"]["layout"] != "aligned" or ph["params"]["cpu"] != 0 or ph["params"]["seed"] != 7:
        fail(f"params not recorded: {ph['params']}")
    # Fixed iterations: --repeat samples on each of the --realloc allocations (default 3).
    if len(ph["ns_per_access"]["samples"]) != 2 * 3 or ph["sample_allocations"] != [0, 0, 1, 1, 2, 2]:
        fail(f"two samples on each of three allocations: {ph['sample_allocations']}")
    if ph["params"]["iterations_mode"] != "fixed" or ph["precision"]["stop"] != "samples":
        fail(f"fixed iterations: {ph['params']['iterations_mode']} {ph['precision']}")

# 2b. --iters auto (the default): warm-up until steady, a batch of at least 1 ms, --repeat samples on each of at
# least --realloc allocations, then more allocations until the precision (allocations as the unit) or the budget.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def median(v):
    s = sorted(v)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def iid_ci(v):
    """The median's order-statistic 95 % interval over all samples, relative (as stats_median_ci)."""
    n = len(v)
    if n < 6:
        return float("inf")
    s = sorted(v)
    w = 0.98 * n ** 0.5
    lo, hi = max(0, int(math.floor(n / 2 - w))), min(n - 1, int(math.ceil(n / 2 + w)))
    return (s[hi] - s[lo]) / 2 / median(v)


def clustered_precision(samples, alloc):
    """What precision.reached must be: Student's t over the allocations' medians, never below iid_ci()."""
    groups = {}
    for x, a in zip(samples, alloc):
        groups.setdefault(a, []).append(x)
    if len(groups) < 2:
        return iid_ci(samples)
    meds = [median(g) for g in groups.values()]
    k = len(meds)
    mean = sum(meds) / k
    sd = (sum((m - mean) ** 2 for m in meds) / (k - 1)) ** 0.5
    t = T975[k - 2] if k - 1 <= len(T975) else 1.96 + 2.5 / (k - 1)
    return max(t * sd / k ** 0.5 / median(samples), iid_ci(samples))


p, rep = run(["--pages", "4k", "--size", "4M", "--controls", "none", "--precision", "0.02", "--time-budget", "0.3"],
             expect=(0, 1))
if rep:
    ph = rep["phases"][0]
    pr, ns, al = ph["precision"], ph["ns_per_access"], ph["sample_allocations"]
    # The batch's duration is a timing claim (BENCHMARKS.md), not asserted here; its size is chosen and recorded.
    if ph["params"]["iterations_mode"] != "auto" or ph["params"]["iterations"] < 1000:
        fail(f"auto mode must choose a batch of at least 1000 accesses: {ph['params']}")
    if pr["stop"] == "precision" and (pr["reached"] > 0.02 or pr["allocations"] < 5):
        fail(f"stopped for precision without reaching it over five allocations: {pr}")
    if pr["stop"] not in ("precision", "budget", "max_samples") or pr["allocations"] < 3:
        fail(f"auto stop: {pr}")
    # Balanced: exactly --repeat (5) samples on every allocation, 0..k-1 in order.
    k = pr["allocations"]
    if al != [a for a in range(k) for _ in range(5)]:
        fail(f"five samples on each of {k} allocations, in order: {al}")
    want = clustered_precision(ns["samples"], al)
    if pr["reached"] is None or abs(pr["reached"] - want) > 1e-9 * max(1.0, want):
        fail(f"precision.reached {pr['reached']} is not the clustered interval {want}")
    an = next(x for x in rep["analysis"]["phases"] if x["name"] == ph["name"])
    if an["allocations"] != k or an["between_allocations"] is None or an["within_allocation"] is None:
        fail(f"spread between and within allocations: {an}")
    wu = ph.get("warmup")
    # A settled warm-up is a best pass and three after it (4 at least); one cut short by its time cap ran
    # WARMUP_MIN_PASSES (2) at least. A pass is 20000 accesses at least (1024 slots are fewer).
    if not wu or wu["method"] != "steady" or not 0 <= wu["unsettled"] <= k:
        fail(f"steady warm-up of {k} allocations: {wu}")
    else:
        settled = k - wu["unsettled"]
        if wu["passes"] < 4 * settled + 2 * wu["unsettled"] or wu["max_passes"] > 64 or \
                wu["max_passes"] < (4 if settled else 2) or wu["accesses"] != wu["passes"] * 20000:
            fail(f"steady warm-up of {k} allocations of 1024 slots, 20000 accesses a pass: {wu}")

# 2c. --realloc 1: the one allocation takes more samples instead, judged by the median's interval over them.
p, rep = run(["--pages", "4k", "--size", "1M", "--controls", "none", "--realloc", "1", "--repeat", "8",
              "--precision", "0.02", "--time-budget", "0.2"], expect=(0, 1))
if rep:
    ph = rep["phases"][0]
    pr, ns = ph["precision"], ph["ns_per_access"]
    if pr["allocations"] != 1 or set(ph["sample_allocations"]) != {0} or len(ns["samples"]) < 8:
        fail(f"--realloc 1: every sample on one allocation, 8 at least: {pr} {len(ns['samples'])}")
    if pr["reached"] is None or abs(pr["reached"] - iid_ci(ns["samples"])) > 1e-9:
        fail(f"--realloc 1: precision.reached {pr['reached']} is not the median's interval {iid_ci(ns['samples'])}")

# 2d. Fixed --iters: the warm-up is --warmup-frac of --iters on each allocation.
p, rep = run(["--pages", "4k", "--size", "1M", "--controls", "none", "--iters", "40k", "--repeat", "1",
              "--warmup-frac", "0.25"])
if rep:
    wu = rep["phases"][0].get("warmup")
    if wu != {**(wu or {}), "method": "fraction", "accesses": 3 * 10000, "passes": None, "max_passes": None,
              "unsettled": None}:
        fail(f"fixed warm-up: 10000 accesses on each of 3 allocations: {wu}")

# 3. A hugetlb request on a pool that is too small fails that phase with the fix; the others still run; exit 3.
free_path = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
free = int(open(free_path).read()) if os.path.exists(free_path) else None
if free is not None and free < 2:
    p, rep = run(["--pages", "4k,2m:hugetlb", "--size", "4M", "--iters", "10k", "--repeat", "1"], expect=(3,))
    if rep:
        h = phase(rep, "chase/2m:hugetlb/4M/r0")
        if h and (h["status"] != "failed" or "nr_hugepages" not in h["reason"]):
            fail(f"hugetlb phase on a short pool: {h['status']} {h['reason']}")
        b = phase(rep, "chase/4k/4M/r0")
        if b and b["status"] != "ok":
            fail(f"the 4k phase must still run: {b['reason']}")
        granted = next(c for c in rep["analysis"]["checks"] if c["id"] == "huge_pages_granted")
        if granted["status"] != "fail":
            fail(f"huge_pages_granted must fail when the pool was short: {granted}")
else:
    print("SKIP: the 2 MiB hugetlb pool is not short on this machine")

# 4. With a pool of our own (root only), 2m:hugetlb is verified on hugetlb pages; the pool is restored.
nr_path = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
if os.geteuid() == 0 and os.path.exists(nr_path):
    before = int(open(nr_path).read())
    try:
        with open(nr_path, "w") as f:
            f.write(str(before + 8))
        got = int(open(nr_path).read())
        if got < before + 8:
            print(f"SKIP: could not grow the 2 MiB pool ({got} of {before + 8})")
        else:
            p, rep = run(["--pages", "2m:hugetlb", "--size", "16M", "--iters", "50k", "--repeat", "2"])
            if rep:
                h = phase(rep, "chase/2m:hugetlb/16M/r0") or rep["phases"][0]
                if h["status"] != "ok" or h["page"]["backing"] != "hugetlb" or \
                        h["page"]["kernel_page_bytes"] != 2 << 20:
                    fail(f"2m:hugetlb with a pool: {h['status']} {h['reason']} {h['page']}")
    finally:
        with open(nr_path, "w") as f:
            f.write(str(before))
else:
    print("SKIP: not root, cannot create a hugetlb pool for the test")

# 5. JSON on stdout; the table moves to stderr.
p = subprocess.run([TLBPROF, "--pages", "4k", "--size", "64K", "--stride", "64", "--iters", "20k", "--repeat", "2",
                    "--json", "-"], capture_output=True, text=True, timeout=120)
try:
    validate(json.loads(p.stdout))
except (ValueError, AssertionError) as e:
    fail(f"--json -: stdout is not a valid report: {e}")
if "verdict" not in p.stderr:
    fail("--json -: the table should go to stderr")

# 5b. A device as the target is written in place, never replaced by a file (/dev/stdout, /dev/full).
p = subprocess.run([TLBPROF, "--pages", "4k", "--size", "64K", "--stride", "64", "--iters", "20k", "--repeat", "2",
                    "--quiet", "--json", "/dev/stdout"], capture_output=True, text=True, timeout=60)
try:
    validate(json.loads(p.stdout))
except (ValueError, AssertionError) as e:
    fail(f"--json /dev/stdout: {e}")
if os.path.exists("/dev/full"):
    p = subprocess.run([TLBPROF, "--pages", "4k", "--size", "64K", "--stride", "64", "--iters", "20k", "--repeat", "2",
                        "--quiet", "--json", "/dev/full"], capture_output=True, text=True, timeout=60)
    if p.returncode != 4 or not os.path.exists("/dev/full") or not stat.S_ISCHR(os.stat("/dev/full").st_mode):
        fail(f"--json /dev/full: exit {p.returncode} (want 4) and /dev/full must stay a device")
    p = subprocess.run(f"{TLBPROF} --pages 4k --size 64K --stride 64 --iters 20k --repeat 2 > /dev/full",
                       shell=True, capture_output=True, text=True, timeout=60)
    if p.returncode != 4:
        fail(f"a table that cannot be written: exit {p.returncode}, want 4")

# 6. An unwritable target: exit 4, nothing written.
for target in ("/proc/no-such-dir/r.json", tempfile.gettempdir()):
    p = subprocess.run([TLBPROF, "--pages", "4k", "--size", "64K", "--json", target],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 4 or p.stdout or len(p.stderr.strip().splitlines()) != 1:
        fail(f"unwritable --json {target}: exit {p.returncode}, stderr {p.stderr!r}")

# 7. Both layouts side by side: each page size twice, compared within its layout, and a finding on the layout.
p, rep = run(["--pages", "4k,2m", "--size", "8M", "--layout", "colored,aligned", "--iters", "50k", "--repeat", "3",
              "--controls", "none", "--quiet", "--fail-on", "never"])
if rep:
    got = [(x["name"], x["params"]["layout"]) for x in rep["phases"]]
    want = [("chase/4k/8M/r0", "colored"), ("chase/2m/8M/r0", "colored"), ("chase/4k:aligned/8M/r0", "aligned"),
            ("chase/2m:aligned/8M/r0", "aligned")]
    if got != want:
        fail(f"--layout colored,aligned phases: {got}, want {want}")
    pairs = sorted((c["baseline"], c["variant"]) for c in rep["analysis"]["comparisons"])
    if pairs != [("chase/4k/8M/r0", "chase/2m/8M/r0"), ("chase/4k:aligned/8M/r0", "chase/2m:aligned/8M/r0")]:
        fail(f"each layout is compared within itself: {pairs}")
    lf = [f for f in rep["analysis"]["findings"] if f["id"] == "layout_changes_latency"]
    if len(lf) != 1 or lf[0]["evidence"].get("pairs") != 2:
        fail(f"one layout finding over the two pairs: {lf}")
    if "(aligned)" not in rep["analysis"]["summary"] and "could not be compared" not in rep["analysis"]["summary"]:
        fail(f"the summary names the aligned layout: {rep['analysis']['summary']}")

fail.finish("all checks passed")
