#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tlbprof analyze: re-analysis of fixtures built from published measurements, round trips, and bad input files."""
import calendar
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import Failures, validate  # noqa: E402

TLBPROF = sys.argv[1]
DATA = os.environ.get("TLBPROF_TEST_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "data"))
fail = Failures()


def analyze(path, *extra, expect=(0,), fresh=False):
    """Re-analyse path; the output is a re-analysed report, and also a complete one when path came from a run."""
    p = subprocess.run([TLBPROF, "analyze", path, "--json", "-", *extra], capture_output=True, text=True, timeout=60)
    if p.returncode not in expect:
        fail(f"analyze {path} {extra}: exit {p.returncode}, want {expect}: {p.stderr}")
        return None, p
    try:
        rep = json.loads(p.stdout)
        validate(rep, "reanalysed")
        if fresh:
            validate(rep, "written")
    except (ValueError, AssertionError) as e:
        fail(f"analyze {path}: output is not a valid report: {e}")
        return None, p
    return rep, p


def load_run_report(path, args):
    """The report a run wrote, validated as this tlbprof writes it; None (and a failure) when it is not."""
    try:
        with open(path) as f:
            rep = json.load(f)
        validate(rep)
        return rep
    except (OSError, ValueError, AssertionError) as e:
        fail(f"run {args[:2]}: report invalid: {e}")
        return None


def check(rep, cid):
    return next((c for c in rep["analysis"]["checks"] if c["id"] == cid), None)


def analyze_doc(doc, name):
    """Re-analyse a report altered in memory (written to a temporary NAME.json); the re-analysed report or None."""
    with tempfile.TemporaryDirectory() as td:
        path = os.path.join(td, name + ".json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return analyze(path, "--fail-on", "never")[0]


def reanalysed(fixture):
    """A report fixture as stored, and tlbprof analyze's re-analysis of it (None where analyze failed, which it says),
    which must reach the report's own analysis."""
    path = os.path.join(DATA, fixture)
    with open(path) as f:
        doc = json.load(f)
    rep, _ = analyze(path, "--fail-on", "never")
    if rep and rep["analysis"] != doc["analysis"]:
        fail(f"{fixture}: the re-analysis differs from the run's own analysis")
    return doc, rep


# 1. The cloud Xeon at 128 MiB: about 12.3 ns, 48 cycles per dTLB miss, from the counters.
rep, p = analyze(os.path.join(DATA, "cloud-xeon-128m.json"))
if rep:
    c = rep["analysis"]["comparisons"]
    if len(c) != 1:
        fail(f"one comparison expected: {c}")
    else:
        c = c[0]
        if c["method"] != "counters" or abs(c["ns_per_tlb_miss"] - 12.3) > 0.1 or \
                abs(c["cycles_per_tlb_miss"] - 48) > 1 or abs(c["delta_ns"] - 12.27) > 1e-6:
            fail(f"cloud Xeon comparison: {c}")
        if abs(c["delta_tlb_misses_per_access"] - 1.0) > 0.01:
            fail(f"about one avoided miss per access: {c['delta_tlb_misses_per_access']}")
    if check(rep, "tlb_pressure_expected")["status"] != "pass":
        fail(f"tlb_pressure_expected: {check(rep, 'tlb_pressure_expected')}")
    if rep["verdict"] != "ok" or "all checks passed" not in rep["analysis"]["summary"]:
        fail(f"verdict {rep['verdict']}: {rep['analysis']['summary']}")
    if rep.get("reanalysis", {}).get("source") is None or "_source" not in rep:
        fail("a re-analysed report keeps its fields and says where it came from")
    if "1.35× faster" not in p.stderr:
        fail(f"the table (on stderr with --json -) opens with the answer: {p.stderr[:200]!r}")

# 1b. Walk cycles end to end (tests/data/published/: published latencies, counts derived by derive.py there).
# SKX at 1 GiB: ~70 walk cycles per miss at 4k, the 2m phase in the STLB (9 cycles a hit): the TLB part is walk time
# less STLB time, each side in its own counted clock, ns per miss is that part per avoided miss, and the parts sum.
rep, p = analyze(os.path.join(DATA, "published", "skx-1g-walk.json"))
if rep:
    c = rep["analysis"]["comparisons"][0]
    a = c["attribution"]
    tlb = (0.99 * 70 - 1e-4 * 70 - 9.0) / 3.9
    if c["method"] != "counters" or not c["walk_cycles"] or abs(c["cycles_per_walk"]["baseline"] - 70) > 1e-6:
        fail(f"SKX 1 GiB: the walk method with 70 cycles per walk: {c}")
    if abs(a["tlb_ns"] - tlb) > 1e-6 or abs(a["stlb_ns"] - 9.0 / 3.9) > 1e-6 or not c["clock_ghz"]["counted"]:
        fail(f"SKX 1 GiB: tlb_ns {a['tlb_ns']} want {tlb:.3f}, stlb_ns {a['stlb_ns']}, clock {c['clock_ghz']}")
    if abs(c["ns_per_tlb_miss"] - a["tlb_ns"] / c["delta_tlb_misses_per_access"]) > 1e-6:
        fail(f"SKX 1 GiB: ns per miss is the TLB part per avoided miss, not the whole delta: {c['ns_per_tlb_miss']}")
    if abs(a["tlb_ns"] + a["cache_ns"] + a["unexplained_ns"] - c["delta_ns"]) > 1e-6 or a["unexplained_ns"] < 0:
        fail(f"SKX 1 GiB: the parts do not sum to the delta: {a}")
    # One published median per phase: whether the 5 % LLC change is beyond the noise cannot be told, and is said.
    if a["llc_change"] != "unknown" or not a["llc_cache_bound_ns"] > 0 or "could not be judged" not in c["assumption"]:
        fail(f"SKX 1 GiB: an LLC change without an interval is unknown, and said so: {a}, {c['assumption']}")
    if "EPT" not in a["cannot_see"] or "overlapping walks" not in a["cannot_see"]:
        fail(f"SKX 1 GiB: what walk_active cannot see: {a['cannot_see']}")
    if check(rep, "counters_plausible")["status"] != "pass" or "70.0" not in check(rep, "counters_plausible")["message"]:
        fail(f"SKX 1 GiB: counters_plausible {check(rep, 'counters_plausible')}")
    if rep["verdict"] != "ok":
        fail(f"SKX 1 GiB: verdict {rep['verdict']}: {rep['analysis']['summary']}")
# SKX at 256 MiB: 40 walk cycles (10.26 ns) for a 7.71 ns delta, the 2m phase hitting the STLB on every access.
# Without the STLB hits the TLB part would be 10.26 ns and 2.54 ns of the delta negative; with them, 7.95 ns, and the
# 0.24 ns over the delta is within what one median a side can tell: said, never silently negative.
rep, p = analyze(os.path.join(DATA, "published", "skx-256m-stlb.json"))
if rep:
    a = rep["analysis"]["comparisons"][0]["attribution"]
    if abs(a["tlb_ns"] - 31.0 / 3.9) > 1e-6 or abs(a["unexplained_ns"] - (7.71 - 31.0 / 3.9)) > 1e-6:
        fail(f"SKX 256 MiB: the STLB hits are used: {a}")
    if a["adds_up"] is not None or "no interval tells whether that is noise" not in (a["inconsistency"] or ""):
        fail(f"SKX 256 MiB: 0.24 ns over the delta with no interval is said, not judged: {a}")
    if not check(rep, "attribution_adds_up")["message"].startswith("could not tell, because"):
        fail(f"SKX 256 MiB: attribution_adds_up {check(rep, 'attribution_adds_up')}")
with open(os.path.join(DATA, "published", "skx-256m-stlb.json")) as f:
    nostlb = json.load(f)
nostlb["counters"] = [c for c in nostlb["counters"] if c["metric"] != "stlb_hits"]
for ph in nostlb["phases"]:
    ph["counters"].pop("stlb-hits")
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump(nostlb, f)
rep, p = analyze(f.name)
os.unlink(f.name)
if rep:
    a = rep["analysis"]["comparisons"][0]["attribution"]
    if abs(a["unexplained_ns"] - (7.71 - 40.0 / 3.9)) > 1e-6 or "STLB hits were not counted" not in a["cannot_see"]:
        fail(f"SKX 256 MiB without STLB hits: the issue's -2.54 ns, and why: {a}")

# 2. The size sweep: the speedup shrinks while the delta stays put.
rep, p = analyze(os.path.join(DATA, "cloud-xeon-size-sweep.json"))
if rep:
    ids = [f["id"] for f in rep["analysis"]["findings"]]
    if ids != ["speedup_shrinks_with_size"]:
        fail(f"size sweep findings: {ids}")
    sizes = [c["size_bytes"] >> 20 for c in rep["analysis"]["comparisons"]]
    if sizes != [64, 128, 256, 512, 1024]:
        fail(f"one comparison per size: {sizes}")
    # The published sweep used page-aligned slots: the aliasing check must say so.
    if check(rep, "cache_set_aliasing")["status"] != "warn":
        fail(f"cache_set_aliasing on an aligned sweep: {check(rep, 'cache_set_aliasing')}")
    if rep["verdict"] != "warn":
        fail(f"verdict {rep['verdict']}")
# --fail-on: a warning fails the run only when asked.
analyze(os.path.join(DATA, "cloud-xeon-size-sweep.json"), "--fail-on", "warn", expect=(1,))
analyze(os.path.join(DATA, "cloud-xeon-size-sweep.json"), "--fail-on", "never", expect=(0,))

# The default command on a PVM guest (tests/data/pvm-chase-256m.json: Zen 5 under a hypervisor CPUID calls bhyve,
# whose kernel says PVM): the first user write to each kernel-populated 4 KiB page took microseconds, a trap per
# page, and shadow_paging says so from the phases' first_access, as the run did. With a TLB miss's cost on every
# 4 KiB phase, or without first_access (reports from before it), it says nothing.
PVM = os.path.join(DATA, "pvm-chase-256m.json")
with open(PVM) as f:
    pvm_text = f.read()
pvm = json.loads(pvm_text)


def shadow(rep):
    return next((f for f in rep["analysis"]["findings"] if f["id"] == "shadow_paging"), None)


def first_access_4k(doc):
    """Each 4 KiB phase's first write to populated pages, ns a page: a chase's first_access, the median sample of
    anon_prefault (which times the same write), and the command's own probe (environment.first_access); over 1024
    pages only."""
    probe = doc["environment"].get("first_access") or {}
    out = [probe["ns_per_page"]] if probe.get("pages", 0) >= 1024 else []
    for p in doc["phases"]:
        if p["page"]["requested"] != "4k" or p["status"] != "ok":
            continue
        fa = p.get("first_access") or {}
        if p.get("case") == "anon_prefault":
            samples = p["ns_per_access"]["samples"]
            if p["params"]["size_bytes"] // 4096 * len(samples) >= 1024:
                out.append(statistics.median(samples))
        elif fa.get("pages", 0) >= 1024:
            out.append(fa["ns_per_page"])
    return out


for fixture in ("pvm-chase-256m.json", "pvm-pagefault-32m.json"):
    doc, rep = reanalysed(fixture)
    if rep:
        small = first_access_4k(doc)
        f = shadow(rep)
        if not f or not small or abs(f["evidence"]["ns_per_page"] - max(small)) > 1e-6 * max(small) or max(small) < 1000:
            fail(f"{fixture}: shadow_paging from the most expensive 4 KiB phase's first access ({small}): {f}")
# tlbprof run on broken-populate_first_pass on the PVM guest (tests/data/run-populated.json, run from /opt/bench): its
# 32 MiB populated by the kernel, no fault, and the probe's trap per page: first_touch_in_timed_loop could not tell,
# and shadow_paging stands on the probe alone. With a probe at a TLB miss's cost, the check passes and no finding.
doc, rep = reanalysed("run-populated.json")
probe = doc["environment"]["first_access"]
if rep:
    ft = check(rep, "first_touch_in_timed_loop")
    if not ft or ft["status"] != "skip" or "populated by the kernel" not in ft["message"] or not shadow(rep) or \
            shadow(rep)["evidence"]["ns_per_page"] != probe["ns_per_page"]:
        fail(f"run-populated: first_touch_in_timed_loop {ft}, shadow_paging {shadow(rep)} (probe {probe})")
probe["ns_per_page"] = 38.0
rep = analyze_doc(doc, "native")
ft = check(rep, "first_touch_in_timed_loop") if rep else None
if rep and (not ft or ft["status"] != "pass" or shadow(rep)):
    fail(f"run-populated with a native probe: first_touch_in_timed_loop {ft}, shadow_paging {shadow(rep)}")
# The same workload on the KVM guest with EPT (21-22 ns a page in anon_prefault): no trap, no finding.
rep, _ = analyze(os.path.join(DATA, "vm-pagefault-32m-run1.json"), "--fail-on", "never")
if rep and shadow(rep):
    fail(f"vm-pagefault-32m-run1 (KVM, EPT): no shadow_paging expected: {shadow(rep)['message']}")
for name, change in (("native", lambda p: p["first_access"].update(ns_per_page=150.0)),
                     ("older", lambda p: p.pop("first_access"))):
    d = json.loads(pvm_text)
    for ph in d["phases"] + [d["environment"]]:
        if ph.get("first_access"):
            change(ph)
    rep = analyze_doc(d, name)
    if rep and shadow(rep):
        fail(f"pvm {name}: no shadow_paging expected: {shadow(rep)['message']}")

# tlbprof run's cpu-clock samples against the run's task-clock, both real runs on the PVM guest, from /tmp: the JVM's
# chase with its perf map (tests/data/run-jit-java.json: each sample counted by its own event, 829 ms of samples for
# 847 ms of task-clock), and a shell of 1000 short processes (run-short-processes.json: 175 ms of samples for 2079
# ms, since a process started after the rate was lowered takes its first sample after 10 ms of its CPU time). The
# second could not tell where the first passes; without task_clock_ns (an older report) the second passed too.
for fixture, want in (("run-jit-java.json", "pass"), ("run-short-processes.json", "skip")):
    doc, rep = reanalysed(fixture)
    if not rep:
        continue
    c = doc["target"]["watch"]["cpu_clock"]
    hot = check(rep, "hot_loop")
    sampled = c["samples"] * c["period_ns"]
    if not c["counted"] or hot["status"] != want or (want == "skip") != (abs(sampled - c["task_clock_ns"]) >
                                                                        0.25 * c["task_clock_ns"]):
        fail(f"{fixture}: samples of {sampled / 1e6:.0f} ms, task-clock {c['task_clock_ns'] / 1e6:.0f} ms, "
             f"counted {c['counted']}: hot_loop {hot['status']}, want {want}: {hot['message']}")
    if want == "skip" and f"task-clock counted {c['task_clock_ns'] / 1e6:.0f} ms" not in hot["message"]:
        fail(f"{fixture}: hot_loop names the task-clock it was held against: {hot['message']}")
    if want == "skip":
        del doc["target"]["watch"]["cpu_clock"]["task_clock_ns"]
        rep = analyze_doc(doc, "older")
        if rep and check(rep, "hot_loop")["status"] != "pass":
            fail(f"{fixture} without task_clock_ns: hot_loop {check(rep, 'hot_loop')}")

# The marked example on the PVM guest (tests/data/run-marked-thp.json, from /tmp): its 2m phase's declared region on
# THP, as it asked, is judged against the page declared (huge_pages_granted), not warned about by thp_backed_region,
# which reads the declared region's address back from the report; without the address it warns as for any region.
doc, rep = reanalysed("run-marked-thp.json")
if rep:
    thp = check(rep, "thp_backed_region")
    if thp["status"] != "pass" or thp["evidence"].get("declared_regions") != 1 or \
            check(rep, "huge_pages_granted")["status"] != "pass":
        fail(f"run-marked-thp: thp_backed_region {thp}, huge_pages_granted {check(rep, 'huge_pages_granted')}")
    for ph in doc["phases"]:
        ph["declared"]["region_address"] = None
    rep = analyze_doc(doc, "undeclared")
    if rep and check(rep, "thp_backed_region")["status"] != "warn":
        fail(f"run-marked-thp without declared addresses: thp_backed_region {check(rep, 'thp_backed_region')}")

# broken-sleep_in_window on a bhyve guest (tests/data/run-sleep-in-window.json, run from /opt/bench): a 10 ms sleep
# inside each of ten timed reps, the whole command off every CPU for half the windows its hot loop ran in. The
# same windows with the sleep taken out of the idle time pass; spent waiting for a CPU instead, they warn of a busy
# machine; and a report from before the switches were weighed could not tell.
doc, rep = reanalysed("run-sleep-in-window.json")
clocks = doc["target"]["watch"]["clocks"]
if rep:
    off = check(rep, "off_cpu_in_timed_window")
    share = clocks["measured_idle_ns"] / clocks["measured_windows_span_ns"]
    if off["status"] != "warn" or share < 0.1 or f"{100 * share:.0f} % of the windows" not in off["message"]:
        fail(f"run-sleep-in-window: idle {share:.2f} of the measured windows: off_cpu_in_timed_window {off}")
    for name, change, want in (("awake", {"measured_idle_ns": 0, "measured_blocked_ns": 0}, "pass"),
                               ("busy", {"measured_idle_ns": 0, "measured_blocked_ns": 0,
                                         "measured_preempted_ns": int(0.6 * clocks["measured_windows_span_ns"])},
                                "warn"),
                               ("older", {k: None for k in ("measured_windows_span_ns", "command_cpus",
                                                            "measured_preempted_ns", "measured_preempted_own_ns",
                                                            "measured_blocked_ns", "measured_idle_ns")}, "skip")):
        d = json.loads(json.dumps(doc))
        d["target"]["watch"]["clocks"].update(change)
        rep = analyze_doc(d, name)
        off = check(rep, "off_cpu_in_timed_window") if rep else None
        if rep and (not off or off["status"] != want or (name == "busy") != ("machine was busy" in off["message"])):
            fail(f"run-sleep-in-window {name}: off_cpu_in_timed_window {off}, want {want}")

def refused_pair_field(doc, key, value, named, fixture, within="paired_clock"):
    """A report whose watch.clocks.paired_clock[key] (watch.clocks[key] with within None) is a string: analyze exits
    2 with one line naming the field."""
    d = json.loads(json.dumps(doc))
    clocks = d["target"]["watch"]["clocks"]
    (clocks[within] if within else clocks)[key] = value
    with tempfile.TemporaryDirectory() as td:
        path = os.path.join(td, "bad.json")
        with open(path, "w") as f:
            json.dump(d, f)
        p = subprocess.run([TLBPROF, "analyze", path, "--json", "-"], capture_output=True, text=True, timeout=60)
        if p.returncode != 2 or p.stdout or named not in p.stderr or len(p.stderr.strip().splitlines()) != 1:
            fail(f"{fixture} with {named} a string: exit {p.returncode}, want 2 and one line naming the field: "
                 f"{p.stderr!r}")


# broken-gbench_paused under libbenchmark 1.7.1 on a bhyve guest (tests/data/run-gbench-paused.json, run from
# /opt/bench): the chain written again between PauseTiming() and ResumeTiming() before each timed pass, in the
# timed function, the first writing the memory's first touch. The reads pair as the library's timer; its faults
# lie between a stop and the next start. Without the pairs (a report from before them, the faults then counted in
# the windows as they were) the check warns, as every build before did; a paired_clock of the wrong shape is refused.
doc, rep = reanalysed("run-gbench-paused.json")
pairs = doc["target"]["watch"]["clocks"]["paired_clock"]
if rep:
    touch = check(rep, "first_touch_in_timed_loop")
    said = (f"{pairs['region_faults_in_gaps']} of them between a stop and the next start of a timer (its "
            f"{pairs['reads']} clock_gettime CLOCK_MONOTONIC reads start and stop it in turn")
    if touch["status"] != "pass" or said not in touch["message"] or \
            touch["evidence"].get("faults_in_timer_gaps") != pairs["region_faults_in_gaps"]:
        fail(f"run-gbench-paused: first_touch_in_timed_loop {touch}, want a pass saying '{said}'")
    d = json.loads(json.dumps(doc))
    c = d["target"]["watch"]["clocks"]
    del c["paired_clock"]
    c["region_faults_in_measured_windows"] = pairs["region_faults_in_gaps"]
    c["measured_windows_faulted"] = 1
    rep = analyze_doc(d, "unpaired")
    touch = check(rep, "first_touch_in_timed_loop") if rep else None
    if rep and (not touch or touch["status"] != "warn" or "between a stop" in touch["message"]):
        fail(f"run-gbench-paused without its pairs: first_touch_in_timed_loop {touch}, want the old warning")
    refused_pair_field(doc, "reads", "many", "paired_clock", "run-gbench-paused")

# broken-gbench_deleted under libbenchmark 1.7.1 on a bhyve guest (tests/data/run-gbench-deleted.json, run from
# /opt/bench): the chase's result never used, so -O2 deleted the loop, each run's start and stop back to back, the
# setup between them. The pairs hold nothing but their reads: the timer times nothing. Without "empty" (a report from
# before it) the span from the first read to the last holds the setups and the check passes, as every build before
# did; an "empty" that is not a boolean is refused.
doc, rep = reanalysed("run-gbench-deleted.json")
pairs = doc["target"]["watch"]["clocks"]["paired_clock"]
if rep:
    empty = check(rep, "empty_timed_window")
    said = f"timer times nothing: its {pairs['reads']} clock_gettime CLOCK_MONOTONIC reads start and stop it in turn"
    if not pairs["empty"] or empty["status"] != "warn" or said not in empty["message"] or \
            empty["evidence"].get("pair_work_p75_ns") != pairs["pair_work_p75_ns"]:
        fail(f"run-gbench-deleted: empty_timed_window {empty}, want a warning saying '{said}'")
    touch = check(rep, "first_touch_in_timed_loop")
    if touch["status"] == "warn":
        fail(f"run-gbench-deleted: first_touch_in_timed_loop warned on the setups' faults: {touch['message']}")
    d = json.loads(json.dumps(doc))
    del d["target"]["watch"]["clocks"]["paired_clock"]["empty"]
    rep = analyze_doc(d, "no empty")
    empty = check(rep, "empty_timed_window") if rep else None
    if rep and (not empty or empty["status"] != "pass"):
        fail(f"run-gbench-deleted without paired_clock.empty: empty_timed_window {empty}, want the old pass")
    refused_pair_field(doc, "empty", "yes", "paired_clock.empty", "run-gbench-deleted")
    # The same span with bare_pair_reads (a clock read alone at each start and stop, its runs bare): could not tell.
    d = json.loads(json.dumps(doc))
    del d["target"]["watch"]["clocks"]["paired_clock"]["empty"]
    d["target"]["watch"]["clocks"]["bare_pair_reads"] = 20
    rep = analyze_doc(d, "bare")
    empty = check(rep, "empty_timed_window") if rep else None
    if rep and (not empty or empty["status"] != "skip" or "because 20 of the hot thread's clock reads pair into runs "
                "that hold nothing but a read" not in empty["message"] or empty["evidence"].get("bare_pair_reads") != 20):
        fail(f"run-gbench-deleted with bare_pair_reads 20: empty_timed_window {empty}, want could not tell")
    refused_pair_field(doc, "bare_pair_reads", "many", "bare_pair_reads", "run-gbench-deleted", within=None)

# 3. Bad report files: exit 2, one line naming the file, nothing written.
with open(os.path.join(DATA, "cloud-xeon-128m.json")) as f:
    good = json.load(f)
text = json.dumps(good)


def mutated(fn):
    d = json.loads(text)
    fn(d)
    return json.dumps(d)


BAD = {
    "truncated": text[: len(text) // 2],
    "not-json": "hello",
    "empty": "",
    "array": "[1, 2]",
    "schema-2": mutated(lambda d: d.update(schema="tlbprof.report/2")),
    "no-schema": mutated(lambda d: d.pop("schema")),
    "phases-string": mutated(lambda d: d.update(phases="many")),
    "size-string": mutated(lambda d: d["phases"][0]["params"].update(size_bytes="128M")),
    "size-negative": mutated(lambda d: d["phases"][0]["params"].update(size_bytes=-1)),
    "sample-string": mutated(lambda d: d["phases"][0]["ns_per_access"].update(samples=["fast"])),
    "no-params": mutated(lambda d: d["phases"][1].pop("params")),
    "unknown-workload": mutated(lambda d: d["phases"][0].update(workload="nope")),
    "unknown-page": mutated(lambda d: d["phases"][0]["page"].update(requested="3m")),
    "unknown-metric": mutated(lambda d: d["counters"][0].update(metric="bogus")),
    "huge-number": mutated(lambda d: d["phases"][0]["params"].update(iterations=1e300)),
    "no-environment": mutated(lambda d: d.pop("environment")),
    "ok-without-samples": mutated(lambda d: d["phases"][0]["ns_per_access"].update(samples=[])),
    "measured-at-local": mutated(lambda d: d.update(measured_at="2026-12-05T23:09:45+01:00")),
    "measured-at-feb-31": mutated(lambda d: d.update(measured_at="2026-02-31T12:00:00Z")),
    "measured-at-number": mutated(lambda d: d.update(measured_at=1765000000)),
}
# first_access (the first user write to each kernel-populated page, which shadow_paging judges) is read strictly.
FIRST_BAD = {
    "first-access-string": ("fast", "phases[0].first_access: not an object"),
    "first-access-pages-string": ({"pages": "x", "ns_per_page": 5.0}, "phases[0].first_access.pages"),
    "first-access-pages-zero": ({"pages": 0, "ns_per_page": 5.0}, "phases[0].first_access: pages: 0"),
    "first-access-ns-string": ({"pages": 4096, "ns_per_page": "slow"}, "phases[0].first_access.ns_per_page"),
    "first-access-ns-negative": ({"pages": 4096, "ns_per_page": -1}, "phases[0].first_access: ns_per_page"),
    "first-access-no-ns": ({"pages": 4096}, "phases[0].first_access.ns_per_page"),
}
for name, (value, _) in FIRST_BAD.items():
    BAD[name] = mutated(lambda d, v=value: d["phases"][0].update(first_access=v))
# The same object in the environment (the command's own probe), which the unmarked checks and shadow_paging read.
ENV_FIRST_BAD = {
    "env-first-access-string": ("slow", "environment.first_access: not an object"),
    "env-first-access-pages-negative": ({"pages": -4, "ns_per_page": 5.0}, "environment.first_access.pages"),
    "env-first-access-ns-huge": ({"pages": 4096, "ns_per_page": 1e300}, "environment.first_access: ns_per_page"),
}
for name, (value, _) in ENV_FIRST_BAD.items():
    BAD[name] = mutated(lambda d, v=value: d["environment"].update(first_access=v))
FIRST_BAD.update(ENV_FIRST_BAD)
# A tlbprof run report (tests/data/run-overlapped.json: the marker-gaps probe's overlapped mode, run from /opt/bench
# on a Zen 5 guest, so that no path in it is the checkout's): its watch section is read as strictly as the rest,
# since the unmarked checks judge it again. A field of the wrong type is the file's error, never a 0 a check would
# then judge.
with open(os.path.join(DATA, "run-overlapped.json")) as f:
    run_text = f.read()


def run_mutated(fn):
    d = json.loads(run_text)
    fn(d["target"]["watch"])
    return json.dumps(d)


BODY = ("cpu_clock", "hot_loop_code", "body")
WATCH_BAD = {
    "watch-loads-string": (BODY, "loads", "x", "body.loads: not a count"),
    "watch-loads-negative": (BODY, "loads", -5, "body.loads: not a count"),
    "watch-start-not-hex": (BODY, "start", "nothex", "body.start: not an address"),
    "watch-chained-over-loads": (BODY, "chained_loads", 99, "body.chained_loads: not at most loads"),
    "watch-samples-fraction": (("cpu_clock",), "samples", 1.5, "cpu_clock.samples: not a count"),
    "watch-share-over-one": (("cpu_clock", "shares"), "own", 7, "cpu_clock.shares.own: not a share"),
    "watch-sampled-string": (("page_faults",), "sampled", "yes", "page_faults.sampled: not true or false"),
    "watch-polls-2-40": ((), "polls", 2 ** 40, "target.watch.polls: not a count below 2^32"),
    # A region's residency and THP advice, which the unmarked checks judge (a string read as never resident).
    "watch-resident-string": (("regions", 0), "resident_ms", "soon", "regions[0].resident_ms: not a number"),
    "watch-thp-control-number": (("regions", 0), "thp_control", 1, "regions[0].thp_control: not a string"),
}


def set_at(where, key, value):
    def fn(w):
        for k in where:
            w = w[k]
        w[key] = value
    return fn


for name, (where, key, value, _) in WATCH_BAD.items():
    BAD[name] = run_mutated(set_at(where, key, value))

# The same report as it is, and with null where a field may be null: read, and its checks judged again alike.
rep, _ = analyze(os.path.join(DATA, "run-overlapped.json"), "--fail-on", "never")
if rep:
    got = {c["id"]: c["status"] for c in rep["analysis"]["checks"]}
    was = {c["id"]: c["status"] for c in json.loads(run_text)["analysis"]["checks"]}
    if got.get("load_dependence") != "warn" or any(got.get(k) != was[k] for k in ("too_fast", "load_dependence",
                                                                                   "declared_accesses_plausible")):
        fail(f"run-overlapped: load_dependence warns again from the report, and the checks judge as the run did: "
             f"got {got}, the run {was}")
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "nulls.json")
    with open(path, "w") as f:
        f.write(run_mutated(set_at(BODY, "chained_load_at", None)))
    analyze(path, "--fail-on", "never")

with tempfile.TemporaryDirectory() as d:
    for name, body in BAD.items():
        path = os.path.join(d, name + ".json")
        with open(path, "w") as f:
            f.write(body)
        out = os.path.join(d, "out.json")
        p = subprocess.run([TLBPROF, "analyze", path, "--json", out], capture_output=True, text=True, timeout=30)
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or len(lines) != 1 or path not in lines[0] or os.path.exists(out) or p.stdout:
            fail(f"bad report '{name}': exit {p.returncode}, stderr {p.stderr!r}, wrote {os.path.exists(out)}")
        elif name in WATCH_BAD and WATCH_BAD[name][3] not in lines[0]:
            fail(f"bad report '{name}': the line must name the field ({WATCH_BAD[name][3]}): {lines[0]}")
        elif name in FIRST_BAD and FIRST_BAD[name][1] not in lines[0]:
            fail(f"bad report '{name}': the line must name the field ({FIRST_BAD[name][1]}): {lines[0]}")
    p = subprocess.run([TLBPROF, "analyze", os.path.join(d, "missing.json")], capture_output=True, text=True)
    if p.returncode != 2 or "missing.json" not in p.stderr:
        fail(f"missing report: exit {p.returncode} {p.stderr!r}")

    # 4. A report from a real run analyses to the same analysis.
    first = os.path.join(d, "run.json")
    p = subprocess.run([TLBPROF, "--pages", "4k,2m", "--size", "8M", "--iters", "200k", "--repeat", "3",
                        "--json", first, "--quiet"], capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 3):
        fail(f"run for round trip: exit {p.returncode} {p.stderr}")
    elif (orig := load_run_report(first, ["--pages", "4k,2m"])):
        rep, _ = analyze(first, expect=(0, 1), fresh=True)
        if rep and rep["analysis"] != orig["analysis"]:
            fail("re-analysis of a fresh report differs from its own analysis")
        if rep and (rep["phases"] != orig["phases"] or rep["environment"] != orig["environment"]):
            fail("re-analysis must keep phases and environment as they were")
        # When it was measured: written by the run (UTC, to the second, within this test's minutes), kept as is.
        at = orig.get("measured_at") or ""
        try:
            age = time.time() - calendar.timegm(time.strptime(at, "%Y-%m-%dT%H:%M:%SZ"))
        except ValueError:
            age = None
        if age is None or not -5 <= age <= 600 or (rep and rep.get("measured_at") != at):
            fail(f"measured_at: {at!r} ({age} s ago), re-analysed {rep and rep.get('measured_at')!r}")

    # 5. Round trips keep page-fault data and failed phases: the analysis is the same.
    runs = [["--workload", "pagefault", "--size", "4M", "--cases", "anon_cold,anon_prefault,file_warm",
             "--processes", "2", "--repeat", "1", "--dir", d]]
    free_path = "/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages"
    if os.path.exists(free_path) and int(open(free_path).read()) < 2:
        runs.append(["--pages", "4k,2m:hugetlb", "--size", "4M", "--iters", "20k", "--repeat", "2"])
    for args in runs:
        first = os.path.join(d, "trip.json")
        p = subprocess.run([TLBPROF, *args, "--json", first, "--quiet"], capture_output=True, text=True, timeout=300)
        if p.returncode not in (0, 1, 3):
            fail(f"round trip run {args}: exit {p.returncode} {p.stderr}")
            continue
        orig = load_run_report(first, args)
        if not orig:
            continue
        rep, _ = analyze(first, expect=(0, 1), fresh=True)
        if rep and rep["analysis"] != orig["analysis"]:
            diff = [(a["id"], a["status"], b["status"]) for a, b in zip(orig["analysis"]["checks"],
                                                                         rep["analysis"]["checks"]) if a != b]
            fail(f"re-analysis of {args[:2]} differs: {diff or rep['analysis']['summary']}")

# 4. tlbsize runs recorded on the development VMs (vm-icx: Ice Lake-SP; vm-emr: Emerald Rapids, where runs 1 and 4
#    rise from the L1d plateau into the STLB as a ramp that a lower window of MIN_LOWER_SPAN missed; KVM zeroes
#    the CPUID TLB leaves on both): in every run,
#    a knee labelled tlb within 20 % of the documented L1 dTLB, one within 25 % of the STLB, and the knee where
#    the L1d fills labelled cache. The capacities are the ones the report itself names.
def rise_distance(k, e):
    """Distance of capacity e from a knee's rise [pages, pages_after], relative to e."""
    return 0 if k["pages"] <= e <= k["pages_after"] else min(abs(k["pages"] - e), abs(k["pages_after"] - e)) / e


TLBSIZE = os.path.join(DATA, "tlbsize")
for name in sorted(os.listdir(TLBSIZE)):
    rep, _ = analyze(os.path.join(TLBSIZE, name), expect=(0, 1))
    if not rep:
        continue
    doc = rep["environment"]["cpu"]["identification"]["documented_tlb"]
    knees = rep["analysis"]["knees"]
    l1d = next(c for c in rep["environment"]["cpu"]["caches"] if c["level"] == 1 and c["type"] == "Data")
    fill = l1d["size_bytes"] / 64 / 1.125
    for want, level, tol in ((doc["l1d_4k_entries"], "L1 dTLB", 0.20), (doc["l2d_4k_entries"], "L2 TLB", 0.25)):
        hit = [k for k in knees if k["kind"] == "tlb" and k["level"] == level and rise_distance(k, want) <= tol]
        if len(hit) != 1:
            fail(f"{name}: want one knee labelled tlb ({level}) within {tol:.0%} of {want}, got "
                 f"{[(k['pages'], k['pages_after'], k['kind'], k['level']) for k in knees]}")
    near = [k for k in knees if rise_distance(k, fill) <= 0.25]
    if not near or any(k["kind"] != "cache" or k["level"] != "L1d" for k in near):
        fail(f"{name}: the knee where the L1d fills ({fill:.0f} pages) must be labelled cache: "
             f"{[(k['pages'], k['pages_after'], k['kind'], k['level']) for k in knees]}")
    if any(not k["evidence"] for k in knees):
        fail(f"{name}: every knee gives its evidence")

fail.finish("all analyze checks passed")
