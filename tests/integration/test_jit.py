#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tlbprof run on a benchmark a JIT compiles (examples/broken/jit.js under node, JitChase.java under HotSpot): the hot
loop is the JIT's code in anonymous memory, named by the JIT's perf map (/tmp/perf-PID.map: node --perf-basic-prof,
java -XX:+DumpPerfMapAtExit) where it writes one. The build before took the hottest function of node's own binary
(1.7 % of the CPU time, V8's heap setup) for the hot loop, where the JIT code held 51 %, and named no JIT function
even with a map."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from report_check import Failures, ReportError, validate

TLBPROF = sys.argv[1]
BROKEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "broken")
NODE, JAVA, JAVAC = shutil.which("node"), shutil.which("java"), shutil.which("javac")
if not NODE and not (JAVA and JAVAC):
    print("neither node nor a JDK is installed here: no JIT to watch")
    sys.exit(77)
UNMARKED = {"hot_loop", "first_touch_in_timed_loop", "sequential_page_order", "same_page_offset", "zero_page_reads",
            "thp_backed_region", "pinning", "exec_image", "coarse_clock", "clock_per_access", "empty_timed_window"}
ENV = {k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}
CPU = str(min(os.sched_getaffinity(0)))
fail = Failures()


CLASSES = tempfile.mkdtemp()
if JAVA and JAVAC:
    subprocess.run([JAVAC, "-d", CLASSES, os.path.join(BROKEN, "JitChase.java")], check=True, timeout=120)
MAP = {"node": ["--perf-basic-prof"], "java": ["-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit"]}


def run(vm, mode, perf_map):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        command = [NODE, *MAP[vm], os.path.join(BROKEN, "jit.js"), mode] if vm == "node" else \
            [JAVA, *MAP[vm], "-cp", CLASSES, "JitChase"]
        if not perf_map:
            command = [a for a in command if a not in MAP[vm]]
        # Pinned from outside, so that pinning and cpu_migrations have nothing to say.
        p = subprocess.run([TLBPROF, "run", "--cpu", CPU, "--json", out, "--quiet", "--fail-on", "never", "--",
                            *command], capture_output=True, text=True, timeout=120, env=ENV,
                           cwd=d)	# where --perf-basic-prof leaves V8's isolate log
        r = json.load(open(out)) if p.returncode == 0 and os.path.exists(out) else None
    if r is None:
        fail(f"{mode}: exit {p.returncode}: {p.stderr.strip()}")
        return None, {}
    pid = r["target"]["watch"]["clocks"]["pid"]
    for f in glob.glob(f"/tmp/perf-{pid}.map"):
        os.unlink(f)	# node leaves its map behind
    try:
        validate(r)
    except ReportError as e:
        fail(f"{mode}: report does not validate: {e}")
    r["_stdout"] = p.stdout.strip()
    return r, {c["id"]: c for c in r["analysis"]["checks"]}


# The chase's name in each JIT's map: V8's "JS:*chase .../jit.js:29:15", HotSpot's OSR of main.
CHASE = {"node": "chase", "java": "JitChase.main"}
RUNS = [("node", "correct", False), ("node", "correct", True), ("node", "first_touch", True),
        ("java", "correct", False), ("java", "correct", True)]
for vm, mode, perf_map in RUNS:
    if not (NODE if vm == "node" else JAVA and JAVAC):
        print(f"{vm}: not installed here: skipped")
        continue
    name = f"{vm} {mode}{' ' + ' '.join(MAP[vm]) if perf_map else ''}"
    # A profile whose samples do not add up to the run's task-clock is one this machine lost, not the JIT's: tlbprof
    # says it could not tell, and the run is taken again (twice at most). The CPU time the samples stand for and the
    # task-clock are printed either way.
    for attempt in range(3):
        r, checks = run(vm, mode, perf_map)
        if r is None:
            break
        clock = r["target"]["watch"]["cpu_clock"]
        print(f"{name}: samples of {clock['samples'] * clock['period_ns'] / 1e6:.0f} ms, task-clock "
              f"{(clock.get('task_clock_ns') or 0) / 1e6:.0f} ms, {clock['lost']} lost, counted {clock.get('counted')}")
        hot = checks["hot_loop"]
        if not (hot["status"] == "skip" and "task-clock" in hot["message"]):
            break
        print(f"{name}: {hot['message']}; taken again")
    if r is None:
        continue
    clock = r["target"]["watch"]["cpu_clock"]
    hot, code = clock.get("hot_function") or "", clock.get("hot_loop_code") or {}
    said = {k: f"{c['status']}: {c['message']}" for k, c in checks.items() if k in UNMARKED}
    if not clock.get("hot_function_jit") or not (clock.get("hot_library") or "").startswith("[anon"):
        fail(f"{name}: hot function {hot!r} in {clock.get('hot_library')!r}, jit {clock.get('hot_function_jit')}: "
             f"want V8's code in anonymous memory (top {clock.get('top_functions')}; {clock.get('samples')} samples, "
             f"{clock.get('lost')} lost; the command ran {r['target']['wall_ns'] / 1e9:.2f} s and printed "
             f"{r['_stdout']!r})")
    if "compiled at run time" not in checks["hot_loop"]["message"] or checks["hot_loop"]["status"] != "pass":
        fail(f"{name}: hot_loop {said['hot_loop']}")
    if code.get("decoded") or "compiled at run time" not in (code.get("error") or ""):
        fail(f"{name}: the JIT code's bytes went with the process, yet hot_loop_code says {code}")
    if perf_map and CHASE[vm] not in hot:
        fail(f"{name}: hot function {hot!r}: the perf map names the chase ({CHASE[vm]})")
    if not perf_map and hot != "[unknown]":
        fail(f"{name}: hot function {hot!r} without a perf map: want [unknown], all the JIT code as one")
    warned = sorted(k for k, c in checks.items() if k in UNMARKED and c["status"] in ("warn", "fail"))
    if mode == "correct" and warned:
        fail(f"{name}: warned {warned} on a correct benchmark: " + "; ".join(said[k] for k in warned))
    ft = checks["first_touch_in_timed_loop"]
    # The faults came from the chain's build: named by the map, else somewhere in the JIT code; never claimed to
    # be before the timing where no clock read placed them (node starts more threads than the probes follow).
    if vm == "node" and perf_map and not (ft["status"] == "pass" and "build" in ft["message"]):
        fail(f"{name}: first_touch_in_timed_loop {said['first_touch_in_timed_loop']}: want the faults placed in "
             "build, by the perf map")
    if r["target"]["watch"]["clocks"]["threads_capped_at_ms"] is not None and "before the measurement" in ft["message"]:
        fail(f"{name}: first_touch_in_timed_loop claims the memory was touched before the measurement, with the "
             f"clock reads unseen: {ft['message']}")
    print(f"{name}: hot function {hot} ({clock['hot_function_samples']} samples); first_touch_in_timed_loop "
          f"{ft['status']}")
shutil.rmtree(CLASSES)
fail.finish("jit: the hot loop is the JIT code, named by its perf map where there is one")
