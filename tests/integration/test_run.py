#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tlbprof run: the example trap benchmarks fire exactly their check; unmarked commands, perf stat --control
compatibility, protocol errors, exit statuses and signals, the private FIFO directory, and Ctrl-C."""
import json
import os
import re
import signal
import shutil
import subprocess
import sys
import tempfile
import time

from report_check import Failures, ReportError, validate

TLBPROF = sys.argv[1]
# libc's line tables come from its separate debug file (tools/bootstrap --test installs libc6-dbg).
LIBC_DEBUG = subprocess.run(["dpkg-query", "-W", "-f=${Status}", "libc6-dbg"], capture_output=True,
                            text=True).stdout.startswith("install ok")
EXAMPLES = sys.argv[2]
PROBE = sys.argv[3]
OLD_KERNEL_SHIM = sys.argv[4]
fail = Failures()

# Each trap and the one check (and self-check) that must fail for it; the correct benchmark fails none.
TRAPS = {
    "correct": (set(), None),
    "constant_stride": ({"workload_self_checks"}, "strides_not_constant"),
    "small_cycles": ({"workload_self_checks"}, "single_cycle"),
    "thp_control": ({"control_thp_contamination"}, None),
    "deleted_loop": ({"too_fast"}, None),
    "clock_per_access": ({"timer_resolution"}, None),
    "correct_O0": (set(), None),
}


def run(args, timeout=180, **kw):
    with tempfile.TemporaryDirectory() as d:
        out, again = os.path.join(d, "r.json"), os.path.join(d, "a.json")
        p = subprocess.run([TLBPROF, "run", "--json", out, "--quiet", "--fail-on", "never", *args],
                           capture_output=True, text=True, timeout=timeout, **kw)
        rep = json.load(open(out)) if os.path.exists(out) else None
        if rep is not None:
            try:
                validate(rep)
            except ReportError as e:
                fail(f"run {args}: report does not validate: {e}")
            # tlbprof analyze reads a run report back and reaches the same checks.
            a = subprocess.run([TLBPROF, "analyze", out, "--json", again, "--quiet", "--fail-on", "never"],
                               capture_output=True, text=True, timeout=60)
            if a.returncode != 0:
                fail(f"analyze of run {args}: exit {a.returncode}: {a.stderr.strip()}")
            else:
                re = json.load(open(again))
                try:
                    validate(re, kind="reanalysed")
                except ReportError as e:
                    fail(f"analyze of run {args}: {e}")
                before = [(c["id"], c["status"]) for c in rep["analysis"]["checks"]]
                after = [(c["id"], c["status"]) for c in re["analysis"]["checks"]]
                if before != after:
                    fail(f"analyze of run {args}: checks differ: {set(before) ^ set(after)}")
    return p, rep


# THP decides what the 2m phases get: with THP "never" they stay on 4 KiB pages (huge_pages_granted fails, and
# the THP-promoted control cannot be shown).
THP_PATH = "/sys/kernel/mm/transparent_hugepage/enabled"
THP = "[never]" not in (open(THP_PATH).read() if os.path.exists(THP_PATH) else "[never]")
if not THP:
    print("THP is 'never' here: thp_control is skipped and the 2m phases are expected on 4 KiB pages")
    del TRAPS["thp_control"]
    TRAPS["correct"] = ({"huge_pages_granted"}, None)
    TRAPS["correct_O0"] = ({"huge_pages_granted"}, None)


def failing(rep):
    return {c["id"] for c in rep["analysis"]["checks"] if c["status"] == "fail"}


for name, (want, self_check) in TRAPS.items():
    p, rep = run(["--", os.path.join(EXAMPLES, "example-" + name)])
    if p.returncode != 0 or rep is None:
        fail(f"{name}: exit {p.returncode}: {p.stderr.strip()}")
        continue
    got = failing(rep)
    if got != want:
        fail(f"{name}: failing checks {sorted(got)}, want {sorted(want)}")
    phases = {ph["name"]: ph for ph in rep["phases"]}
    for ph in phases.values():
        d = ph["declared"]
        if d["occurrences"] != 5 or ph["params"]["repeat"] != 5 or len(ph["ns_per_access"]["samples"]) != 5:
            fail(f"{name}/{ph['name']}: 5 occurrences aggregate into one phase with 5 samples: {d['occurrences']}")
        if d["page"] and ph["page"]["backing"] is None:
            fail(f"{name}/{ph['name']}: a declared page size must be verified from smaps")
    if self_check:
        bad = [s["id"] for ph in phases.values() for s in ph["self_checks"] if s["status"] == "fail"]
        if bad != [self_check]:
            fail(f"{name}: failed self-checks {bad}, want [{self_check}]")
    if name in ("correct", "correct_O0"):
        if set(phases) != {"chase4k", "chase2m"}:
            fail(f"correct: phases {sorted(phases)}")
        elif phases["chase4k"]["page"]["backing"] != "base" or phases["chase2m"]["page"]["backing"] != (
                "thp" if THP else "base"):
            fail("correct: 4k on base pages and 2m on THP, verified")
        if not rep["analysis"]["comparisons"]:
            fail("correct: the 4k and 2m phases of one size must be compared")
        m = rep["target"]["markers"]
        if not m["phase_markers"] or m["messages"] != 20 or m["refused"] != 0:
            fail(f"correct: 10 begin/end pairs, none refused: {m}")
    build = {c["id"]: c for c in rep["analysis"]["checks"]}.get("build_optimised")
    want_build = "warn" if name == "correct_O0" else "pass"
    if not build or build["status"] != want_build:
        fail(f"{name}: build_optimised {build and (build['status'], build['message'])}, want {want_build}")
    level = rep["target"]["binary"].get("opt_level")
    if level != ("-O0" if name == "correct_O0" else "-O2"):
        fail(f"{name}: the binary's optimisation level read as {level}")
    if name == "thp_control" and phases["chase4k"]["page"]["backing"] != "thp":
        fail("thp_control: the 4k control must be seen on THP")

# --sample page-faults: every fault with its address and instruction, symbolised; the chase phases are prefaulted.
p, rep = run(["--sample", "page-faults", "--", os.path.join(EXAMPLES, "example-correct"), "8"])
smp = rep and rep["target"].get("sampling")
if p.returncode != 0 or not smp or smp["error"] is not None:
    fail(f"--sample: exit {p.returncode}, sampling {smp}: {p.stderr.strip()}")
else:
    regions, fns = smp["top_regions"], smp["top_functions"]
    # The 8 MiB 4k region faults once per 4 KiB page when the benchmark fills it (the 2m one once per 2 MiB).
    if smp["lost"] != 0 or smp["samples"] < 2048 or smp["period"] != 1:
        fail(f"--sample: {smp['samples']} samples, {smp['lost']} lost, period {smp['period']}")
    if not regions or not regions[0]["anonymous"] or regions[0]["count"] < 2048:
        fail(f"--sample: the top region should be the anonymous 8 MiB buffer: {regions[:2]}")
    if not fns or sum(f["count"] for f in fns) > smp["samples"]:
        fail(f"--sample: top functions {fns[:2]}")
    if not any(f["function"] != "[unknown]" and f["object"].startswith("/") for f in fns):
        fail(f"--sample: no faulting instruction resolved to a function: {fns}")
    # Each function names its hottest line where DWARF has one (libdwfl: libc's from libc6-dbg, by build-id),
    # and none where nothing could (the kernel, an unknown address).
    libc = [f for f in fns if f["object"].endswith("/libc.so.6") and f["function"] != "[unknown]"]
    if LIBC_DEBUG and (not libc or any(not re.search(r":\d+", f["source"] or "") for f in libc)):
        fail(f"--sample: libc's faulting functions name no FILE:LINE with libc6-dbg installed: {libc or fns}")
    if any(f["source"] is not None for f in fns if f["function"] == "[unknown]"):
        fail(f"--sample: a source line for an unresolved function: {fns}")
    for ph in rep["phases"]:
        if ph["declared"]["samples_in_phase"] != ph["counters"]["page-faults"]["value"]:
            fail(f"--sample: {ph['name']} sampled {ph['declared']['samples_in_phase']} faults, the counter says "
                 f"{ph['counters']['page-faults']['value']}")

# --sample dtlb-misses: the PMU's precise event where there is one; here (no PMU) the run goes on unsampled and
# says why, on a machine with a PMU the samples come through the same path.
p, rep = run(["--sample", "dtlb-misses", "--", "true"])
smp = rep and rep["target"].get("sampling")
if p.returncode != 0 or not smp or smp["event"] == "page-faults":
    fail(f"--sample dtlb-misses: exit {p.returncode}, sampling {smp}")
elif smp["error"] is not None and ("dtlb-misses" not in p.stderr or smp["event"] != "dtlb-misses"):
    fail(f"--sample dtlb-misses without a PMU: the warning and the report say why: {p.stderr!r} {smp}")
elif smp["error"] is None and "STLB" not in smp["event"].upper():
    fail(f"--sample dtlb-misses with a PMU samples the map's precise event: {smp['event']}")

# An unmarked command is one phase; its faults are its own business.
p, rep = run(["--", "true"])
if p.returncode != 0 or [ph["name"] for ph in rep["phases"]] != ["command"] or rep["target"]["exit_code"] != 0:
    fail(f"run true: exit {p.returncode}, phases {rep and [ph['name'] for ph in rep['phases']]}")
elif "page-faults" not in rep["target"]["counters"] or rep["target"]["counters"]["page-faults"]["value"] <= 0:
    fail("run true: the command's page faults are counted from exec (software counter, inherited)")

# --json -: stdout is the report's, so what the command prints goes to stderr (it was mixed into the JSON).
p = subprocess.run([TLBPROF, "run", "--json", "-", "-q", "--fail-on", "never", "--", "sh", "-c", "echo TARGET-OUT"],
                   capture_output=True, text=True, timeout=60)
try:
    json.loads(p.stdout)
    parsed = True
except ValueError:
    parsed = False
if p.returncode != 0 or not parsed or "TARGET-OUT" not in p.stderr:
    fail(f"run --json - with a command that prints: exit {p.returncode}, stdout {p.stdout[:80]!r}, "
         f"stderr {p.stderr[-200:]!r}")

# A command whose name holds ESC and a newline: the table and the exit line write them as escapes, so that neither
# clears the terminal or splits the command's line; the report keeps the name as it is.
with tempfile.TemporaryDirectory() as d:
    odd = os.path.join(d, "t\x1b[2J\nx")
    shutil.copy("/bin/false", odd)
    p = subprocess.run([TLBPROF, "run", "--fail-on", "never", "--", odd], capture_output=True, text=True, timeout=60)
    if p.returncode != 1 or "\x1b" in p.stdout + p.stderr or "t\\x1b[2J\\nx exited 1" not in p.stdout or \
            "t\\x1b[2J\\nx' exited with status 1" not in p.stderr:
        fail(f"run of a command named with ESC and a newline: exit {p.returncode}, stdout {p.stdout[:300]!r}, "
             f"stderr {p.stderr!r}")

# The cpu-clock samples must add up to the run's task-clock. A shell that runs 1000 short processes: each one
# started after the rate was lowered gets its first sample after 10 ms of its own CPU time, and none runs that long,
# so the samples stand for a fraction of what the task-clock counted, and every check that reads them could not tell
# (before, hot_loop passed on the shell's own 7 %).
p, rep = run(["--", "sh", "-c", "for i in $(seq 1000); do /bin/true; done"])
c = rep and rep["target"]["watch"]["cpu_clock"]
if not c or not c.get("task_clock_ns"):
    fail(f"run sh of 1000 processes: exit {p.returncode}, no task-clock beside the samples: {c}")
else:
    sampled, task = c["samples"] * c["period_ns"], c["task_clock_ns"]
    hot = next(x for x in rep["analysis"]["checks"] if x["id"] == "hot_loop")
    if sampled > 0.75 * task:
        print(f"run sh of 1000 processes: the samples stand for {sampled / 1e6:.0f} of {task / 1e6:.0f} ms here: "
              "the processes took samples (not judged)")
    elif hot["status"] != "skip" or "task-clock counted" not in hot["message"]:
        fail(f"run sh of 1000 processes: samples of {sampled / 1e6:.0f} ms where the task-clock counted "
             f"{task / 1e6:.0f} ms, yet hot_loop {hot['status']}: {hot['message']}")
    else:
        print(f"run sh of 1000 processes: samples of {sampled / 1e6:.0f} ms, task-clock {task / 1e6:.0f} ms: "
              "hot_loop could not tell")

# A kernel before 6.12 refuses inherit with PERF_SAMPLE_READ (an LD_PRELOAD shim answers so here): the watch opens
# without counts, says counted false, and weighs each sample by the period its thread's event was set to. A marked
# 32 MiB chase's samples (0.7 s, most of it after the rate was lowered) still add up to its task-clock, and the hot
# loop is found. Under ASan the shim cannot come before the sanitizer's runtime, so this part needs the plain build.
ldd = subprocess.run(["ldd", TLBPROF], capture_output=True, text=True).stdout
if "libasan" in ldd:
    print("run under a kernel before 6.12: not under ASan (the shim cannot be preloaded before its runtime)")
else:
    for shim, want in ((OLD_KERNEL_SHIM, False), (None, True)):
        env = dict(os.environ, LD_PRELOAD=shim) if shim else None
        p, rep = run(["--", os.path.join(EXAMPLES, "example-correct"), "32"], env=env)
        c = rep and rep["target"]["watch"]["cpu_clock"]
        if not c:
            fail(f"run {'with' if shim else 'without'} the old-kernel shim: exit {p.returncode}: {p.stderr.strip()}")
            continue
        sampled, task = c["samples"] * c["period_ns"], c.get("task_clock_ns") or 0
        hot = next(x for x in rep["analysis"]["checks"] if x["id"] == "hot_loop")
        print(f"run {'before' if shim else 'on'} 6.12: counted {c['counted']}, samples of {sampled / 1e6:.0f} ms, "
              f"task-clock {task / 1e6:.0f} ms, hot_loop {hot['status']}")
        if c["counted"] != want or not task or abs(sampled - task) > 0.25 * task or hot["status"] != "pass":
            fail(f"run {'with' if shim else 'without'} the old-kernel shim: counted {c['counted']} (want {want}), "
                 f"samples of {sampled / 1e6:.0f} ms, task-clock {task / 1e6:.0f} ms: hot_loop {hot['status']}: "
                 f"{hot['message']}")

# Exit statuses and signals are reported and propagated; no shell is involved (sh here is the command itself).
p, rep = run(["--", "sh", "-c", "exit 3"])
if p.returncode != 3 or rep["target"]["exit_code"] != 3 or "status 3" not in p.stderr:
    fail(f"exit 3: tlbprof exit {p.returncode}, report {rep and rep['target']['exit_code']}, stderr {p.stderr!r}")
# ... and the report says it too, for the CI formats that never see the exit status: command_exit fails.
elif next(c["status"] for c in rep["analysis"]["checks"] if c["id"] == "command_exit") != "fail" or \
        rep["verdict"] != "fail":
    fail(f"exit 3: command_exit {[c for c in rep['analysis']['checks'] if c['id'] == 'command_exit']}, verdict "
         f"{rep['verdict']}")
# In gbench each entry of that run is what gbench writes of a benchmark that called SkipWithError (compare.py and
# dashboards read it as an ordinary result before); a command that exits 0 has none.
with tempfile.TemporaryDirectory() as d:
    for script, want in (("exit 3", True), ("exit 0", False)):
        g = os.path.join(d, "g.json")
        subprocess.run([TLBPROF, "run", "-q", "--fail-on", "never", "--output", "gbench=" + g, "--", "sh", "-c",
                        script], capture_output=True, timeout=60)
        bench = json.load(open(g))["benchmarks"] if os.path.exists(g) else []
        if not bench or any(b.get("error_occurred", False) != want or want != ("error_message" in b) for b in bench):
            fail(f"gbench of a run that did {script}: entries {bench}")
p, rep = run(["--", "sh", "-c", "kill -SEGV $$"])
if p.returncode != 128 + signal.SIGSEGV or rep["target"]["signal"] != "SIGSEGV":
    fail(f"SIGSEGV: exit {p.returncode}, signal {rep and rep['target']['signal']}")
p, rep = run(["--", "sh", "-c", "echo 'a b'", "x"])
if p.returncode != 0 or rep["target"]["argv"] != ["sh", "-c", "echo 'a b'", "x"]:
    fail(f"argv passed as given: {rep and rep['target']['argv']}")

# The marker FIFOs live in a private directory (0700) that is gone afterwards.
SCRIPT = ("import os, stat; d = os.path.dirname(os.environ['TLBPROF_MARKER_CTL']);"
          "print(d, oct(stat.S_IMODE(os.stat(d).st_mode)), stat.S_ISFIFO(os.stat(os.environ['TLBPROF_MARKER_ACK']).st_mode))")
p, rep = run(["--", sys.executable, "-c", SCRIPT])
out = p.stdout.split()
if len(out) != 3 or out[1] != "0o700" or out[2] != "True" or os.path.exists(out[0]):
    fail(f"private FIFO directory: {p.stdout!r}")

# Protocol errors are refused with a reason and recorded; the run goes on.
PROTO = ("import os; c = open(os.environ['TLBPROF_MARKER_CTL'], 'w'); a = open(os.environ['TLBPROF_MARKER_ACK']);\n"
         "def send(l):\n c.write(l + '\\n'); c.flush(); return a.readline().strip()\n"
         "print(send('phase end'), send('phase begin bad$name'), send('phase begin ok accesses=10'),"
         " send('phase begin nested'), send('phase end ns=1000'))")
p, rep = run(["--", sys.executable, "-c", PROTO])
replies = p.stdout.split()
if replies[:1] != ["err"] or replies.count("ack") != 2 or rep["target"]["markers"]["refused"] != 3:
    fail(f"protocol errors: replies {p.stdout!r}, refused {rep and rep['target']['markers']}")
elif [ph["name"] for ph in rep["phases"]] != ["ok"] or rep["phases"][0]["ns_per_access"]["median"] != 100:
    fail(f"protocol: phase ok with 1000 ns / 10 accesses: {rep['phases']}")

# A command that exits inside a phase: with one occurrence done, the phase stands on it and says the other was cut
# short; exiting inside the only one, the phase failed (it said ok with no sample, and its report broke its own
# schema), and phases_completed fails with it.
CUT = ("import os; c = open(os.environ['TLBPROF_MARKER_CTL'], 'w'); a = open(os.environ['TLBPROF_MARKER_ACK']);\n"
       "def send(l):\n c.write(l + '\\n'); c.flush(); return a.readline().strip()\n"
       "for i in range(2):\n send('phase begin done accesses=10'); send('phase end ns=1000')\n"
       "send('phase begin open accesses=10'); os._exit(0)")
p, rep = run(["--", sys.executable, "-c", CUT])
st = {ph["name"]: (ph["status"], ph["reason"]) for ph in rep["phases"]} if rep else {}
pc = next((c["status"] for c in rep["analysis"]["checks"] if c["id"] == "phases_completed"), None) if rep else None
if st.get("done", ("",))[0] != "ok" or st.get("open", ("",))[0] != "failed" or \
        "the only occurrence" not in st["open"][1] or pc != "fail":
    fail(f"exit inside a phase: phases {st}, phases_completed {pc}")

# Phases named like another's gbench aggregates ("x_mean" beside "x"): in gbench each name is one series, the
# colliding phase as NAME/phase (compare.py groups by name, and mixed x's mean into x_mean's repetitions).
NAMES = ("import os; c = open(os.environ['TLBPROF_MARKER_CTL'], 'w'); a = open(os.environ['TLBPROF_MARKER_ACK']);\n"
         "def send(l):\n c.write(l + '\\n'); c.flush(); return a.readline().strip()\n"
         "for i in range(3):\n for n in ('x', 'x_mean', 'x_stddev'):\n"
         "  send('phase begin %s accesses=10' % n); send('phase end ns=1000')")
with tempfile.TemporaryDirectory() as d:
    g = os.path.join(d, "g.json")
    subprocess.run([TLBPROF, "run", "-q", "--fail-on", "never", "--output", "gbench=" + g, "--", sys.executable, "-c",
                    NAMES], capture_output=True, timeout=60)
    families = {}
    for b in (json.load(open(g))["benchmarks"] if os.path.exists(g) else []):
        families.setdefault(b["name"], set()).add(b["family_index"])
    if len(families) < 15 or any(len(f) > 1 for f in families.values()) or "x_mean/phase" not in families:
        fail(f"gbench names of phases x, x_mean, x_stddev: {families}")

# perf stat --control compatibility: fifo and fd forms, -D -1, acks.
# As perf stat's protocol has it: commands end with '\n' (or '\0'), the ack is sizeof("ack\n") = "ack\n\0".
PERF = ("import os, sys; c = os.open(sys.argv[1], os.O_WRONLY); a = os.open(sys.argv[2], os.O_RDONLY)\n"
        "for cmd in [b'enable\\n', b'disable\\0', b'ping\\n', b'enable\\0', b'disable\\n']:\n"
        "  os.write(c, cmd)\n"
        "  r = b''\n"
        "  while len(r) < 5: r += os.read(a, 5 - len(r))\n"
        "  assert r == b'ack\\n\\0', r\n")
with tempfile.TemporaryDirectory() as d:
    ctl, ack = os.path.join(d, "ctl"), os.path.join(d, "ack")
    os.mkfifo(ctl)
    os.mkfifo(ack)
    p, rep = run(["--control", f"fifo:{ctl},{ack}", "-D", "-1", "--", sys.executable, "-c", PERF, ctl, ack])
    if p.returncode != 0 or [ph["name"] for ph in rep["phases"]] != ["enabled"] or \
            rep["phases"][0]["declared"]["occurrences"] != 2 or not rep["target"]["markers"]["perf_control"]:
        fail(f"--control fifo: exit {p.returncode} {p.stderr.strip()}, phases {rep and rep['phases']}")
    # Without -D -1 the first window opens at exec (perf stat counts from the start).
    p, rep = run(["--control", f"fifo:{ctl},{ack}", "--", sys.executable, "-c", PERF, ctl, ack])
    if p.returncode != 0 or rep["phases"][0]["declared"]["occurrences"] != 2:
        fail(f"--control without -D -1: {rep and rep['phases'][0]['declared']}")
    # fd:CTL,ACK: fds tlbprof inherits (opened here read-write, like `exec {fd}<>fifo`).
    cfd, afd = os.open(ctl, os.O_RDWR), os.open(ack, os.O_RDWR)
    p, rep = run(["--control", f"fd:{cfd},{afd}", "-D", "-1", "--", sys.executable, "-c", PERF, ctl, ack],
                 pass_fds=(cfd, afd))
    os.close(cfd)
    os.close(afd)
    if p.returncode != 0 or rep["phases"][0]["declared"]["occurrences"] != 2:
        fail(f"--control fd: exit {p.returncode} {p.stderr.strip()}")

def checks_of(rep):
    return {c["id"]: c["status"] for c in rep["analysis"]["checks"]}


# The header notices a program that closed its descriptors and reused them: no marker line lands in its file.
p, rep = run(["--", PROBE, "closefds"])
if p.returncode != 0 or [ph["name"] for ph in rep["phases"]] != ["after_close"]:
    fail(f"closed fds: exit {p.returncode} {p.stdout!r}, phases {rep and [ph['name'] for ph in rep['phases']]}")

# The counter fds handed to the benchmark, replaced by its own files: the marker reads neither an eventfd nor a
# file in their place (it asks each fd for tlbprof's event id first), and tlbprof reads those boundaries itself.
p, rep = run(["--", PROBE, "reusefds"])
m = rep and rep["target"]["markers"]
names = [ph["name"] for ph in rep["phases"]] if rep else []
if p.returncode != 0 or not m or m["messages"] != 4 or m["caller_reads"] != 2 or names != ["handed_over", "replaced"] \
        or any(ph["counters"]["task-clock"]["value"] <= 0 for ph in rep["phases"]):
    fail(f"reused counter fds: exit {p.returncode} {p.stdout!r}, markers {m}, phases {names}")

# The marker channel: the shared page for today's header, the FIFOs for a benchmark built against the first header
# (examples/benchmarks/marker-v1): both served, every call acknowledged, none refused.
for name, channel in (("marker_overhead", "shm"), ("marker_overhead_v1", "fifo")):
    p, rep = run(["--", os.path.join(EXAMPLES, "example-" + name), "50"])
    try:
        got = json.loads(p.stdout)
    except ValueError:
        got = {}
    m = rep and rep["target"]["markers"]
    if p.returncode != 0 or got.get("channel") != channel or not m or m["messages"] != 100 or m["refused"] or \
            [ph["declared"]["occurrences"] for ph in rep["phases"]] != [50]:
        fail(f"{name}: exit {p.returncode}, {p.stdout!r}, markers {m}, phases {rep and rep['phases'][:1]}")

# tlbprof killed while the benchmark calls: the shared page's caller notices (EPIPE) and finishes, never hangs.
proc = subprocess.Popen([TLBPROF, "run", "--json", "/dev/null", "--quiet", "--", os.path.join(EXAMPLES,
                         "example-marker_overhead"), "2000000"], stdout=subprocess.PIPE, text=True)
time.sleep(1.0)
proc.kill()
proc.wait()
try:
    # The benchmark (now orphaned) holds the pipe open until it exits.
    import selectors
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    ended = bool(sel.select(timeout=20)) and proc.stdout.read() is not None
except OSError:
    ended = False
if not ended:
    fail("a benchmark whose tlbprof was killed did not finish within 20 s")

# A phase begun in one translation unit and ended in another: tlbprof's own window times it, never a stale clock.
p, rep = run(["--", PROBE, "two_units"])
ph = rep and rep["phases"][0]
if p.returncode != 0 or not ph or ph["declared"]["wall_ns"][0] > ph["declared"]["tlbprof_window_ns"] or \
        ph["declared"]["wall_ns"][0] < 5e6:
    fail(f"two units: exit {p.returncode}, {ph and ph['declared']}")

# A chain in a region too small for two slots is refused, never read; the refusal is a warning.
p, rep = run(["--", PROBE, "tiny"])
if p.returncode != 0 or rep["target"]["markers"]["refused"] != 1 or checks_of(rep).get("marker_protocol") != "warn":
    fail(f"tiny region: exit {p.returncode}, markers {rep and rep['target']['markers']}")

# Every occurrence's own region is verified: THP on the 2nd..4th occurrence of a "4k" phase contaminates it.
if THP:
    p, rep = run(["--", PROBE, "regchg"])
    if checks_of(rep).get("control_thp_contamination") != "fail" or rep["phases"][0]["page"]["backing"] != "thp":
        fail(f"region change: {checks_of(rep).get('control_thp_contamination')}, backing "
             f"{rep['phases'][0]['page']['backing']}")

# Raw protocol edge cases: one refusal per overlong line, ns beyond tlbprof's window ignored, counts within
# a signed 64-bit integer, tlbprof's own names reserved, and 300 names against the 256-name limit.
EDGES = ("import os; c = open(os.environ['TLBPROF_MARKER_CTL'], 'w'); a = open(os.environ['TLBPROF_MARKER_ACK'])\n"
         "def send(l):\n c.write(l + '\\n'); c.flush(); return a.readline().strip().split()[0]\n"
         "r = [send('x' * 3000), send('phase begin a'), send('phase end ns=99999999999999999'),\n"
         "     send('phase begin b accesses=9223372036854775808'), send('phase begin enabled'),\n"
         "     send('phase begin c accesses=10'), send('phase end')]\n"
         "for i in range(300):\n r.append(send('phase begin n%d' % i)); r.append(send('phase end'))\n"
         "print(' '.join(r[:7]), r[7:].count('err'))\n")
p, rep = run(["--", sys.executable, "-c", EDGES])
out = p.stdout.split()
if out[:7] != ["err", "ack", "ack", "err", "err", "ack", "ack"] or out[7:] != ["92"]:
    fail(f"protocol edges: replies {p.stdout!r}")
else:
    a = {ph["name"]: ph for ph in rep["phases"]}["a"]
    if a["declared"]["wall_ns"][0] > a["declared"]["tlbprof_window_ns"]:
        fail(f"protocol edges: an ns beyond tlbprof's window must be ignored: {a['declared']}")
    if len(rep["phases"]) != 256 or checks_of(rep).get("marker_protocol") != "warn" or \
            rep["target"]["markers"]["refused"] != 4 + 46 * 2:
        fail(f"protocol edges: {len(rep['phases'])} phases, {rep['target']['markers']['refused']} refused, "
             f"marker_protocol {checks_of(rep).get('marker_protocol')}")

# Markers inside a perf-style window: both are measured, neither closes the other.
with tempfile.TemporaryDirectory() as d:
    ctl = os.path.join(d, "ctl")
    os.mkfifo(ctl)
    p, rep = run(["--control", f"fifo:{ctl}", "--", os.path.join(EXAMPLES, "example-correct"), "8"])
    occ = {ph["name"]: ph["declared"]["occurrences"] for ph in rep["phases"]} if rep else {}
    if occ != {"enabled": 1, "chase4k": 5, "chase2m": 5} or rep["target"]["markers"]["refused"]:
        fail(f"markers in a perf window: {occ}, {rep and rep['target']['markers']}")
    # -D -1 and nothing ever enables: no phase is invented.
    p, rep = run(["--control", f"fifo:{ctl}", "-D", "-1", "--", "true"])
    if p.returncode != 0 or rep["phases"]:
        fail(f"-D -1 without enable: phases {rep and [ph['name'] for ph in rep['phases']]}")

# A second signal while the command ignores SIGINT: tlbprof kills it at once and still writes the report.
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "r.json")
    stubborn = "import signal, time; signal.signal(signal.SIGINT, signal.SIG_IGN); time.sleep(60)"
    proc = subprocess.Popen([TLBPROF, "run", "--json", out, "--quiet", "--", sys.executable, "-c", stubborn],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    took = time.monotonic() - t0
    rep = json.load(open(out)) if os.path.exists(out) else None
    if proc.returncode != 130 or not rep or rep["target"]["signal"] != "SIGKILL" or took > 1.8:
        fail(f"second SIGINT: exit {proc.returncode} after {took:.1f} s, report {rep and rep['target']['signal']}")

# Ctrl-C at a terminal signals the whole process group, the command included: still an interruption.
for attempt in range(3):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        proc = subprocess.Popen([TLBPROF, "run", "--json", out, "--quiet", "--", "sleep", "30"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        time.sleep(0.6)
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        rep = json.load(open(out)) if os.path.exists(out) else None
        if proc.returncode != 130 or not rep or not rep["interrupted"]:
            fail(f"group SIGTERM (try {attempt}): exit {proc.returncode}, interrupted {rep and rep['interrupted']}")
            break

# Ctrl-C: the command is stopped, the partial report is written, exit 130, no FIFO directory left behind.
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "r.json")
    env = dict(os.environ, TMPDIR=d)
    proc = subprocess.Popen([TLBPROF, "run", "--json", out, "--quiet", "--", "sleep", "60"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)	# to tlbprof alone, not the group: it must stop the command itself
    try:
        proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("SIGINT: tlbprof did not stop")
    rep = json.load(open(out)) if os.path.exists(out) else None
    if proc.returncode != 130 or not rep or not rep["interrupted"] or rep["target"]["signal"] != "SIGINT":
        fail(f"SIGINT: exit {proc.returncode}, report {rep and (rep['interrupted'], rep['target']['signal'])}")
    left = [f for f in os.listdir(d) if f != "r.json"]
    if left:
        fail(f"SIGINT: left behind {left}")

# What the command started is stopped with it, whatever process group or session it moved to: a shell's children,
# a setsid one, a double fork's grandchild (tlbprof is their subreaper); none is left running under PID 1. Each runs
# a sleep of a length nothing else here uses, to find it afterwards.
marks = ["61.0417", "62.0417", "63.0417"]
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "r.json")
    script = f"sleep {marks[0]} & setsid sleep {marks[1]} & (sleep {marks[2]} &); wait"
    for sig in (signal.SIGINT, signal.SIGTERM):
        proc = subprocess.Popen([TLBPROF, "run", "--json", out, "--quiet", "--", "sh", "-c", script],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)
        proc.send_signal(sig)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        time.sleep(0.2)
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if any(m.encode() in f.read() for m in marks):
                        left.append(pid)
            except OSError:
                pass
        if proc.returncode != 130 or left:
            fail(f"{signal.Signals(sig).name} to run of a shell with children: exit {proc.returncode}, left running "
                 f"{left}")
            for pid in left:
                os.kill(int(pid), signal.SIGKILL)

# Records lost: tlbprof stopped (SIGSTOP) while the command, pinned to one CPU, takes 81920 page faults, more than
# that CPU's ring holds (2 MiB: about 52000 records of 40 bytes), so it overflows. The report counts what the kernel
# dropped, the table says so, and no fault check speaks as if it had seen them all. 320 MiB, not more: the other
# tests run beside this one, and a 512 MiB first touch slowed their faults until their benchmarks' samples were all
# in the kernel.
TOUCH = ("import mmap, time\nm = mmap.mmap(-1, 320 << 20)\nprint('ready', flush=True)\ntime.sleep(0.3)\n"
         "for i in range(0, 320 << 20, 4096): m[i] = 1")
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "r.json")
    proc = subprocess.Popen([TLBPROF, "run", "--cpu", str(min(os.sched_getaffinity(0))), "--json", out, "--",
                             sys.executable, "-c", TOUCH],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready = proc.stdout.readline()	# the command's: it faults 0.3 s later, with tlbprof stopped
    proc.send_signal(signal.SIGSTOP)
    time.sleep(3.0)
    proc.send_signal(signal.SIGCONT)
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
    rep = json.load(open(out)) if os.path.exists(out) else None
    pf = rep["target"]["watch"]["page_faults"] if rep else {}
    checks = {c["id"]: c for c in rep["analysis"]["checks"]} if rep else {}
    first = checks.get("first_touch_in_timed_loop", {})
    if ready.strip() != "ready" or proc.returncode not in (0, 1) or not pf.get("lost") or \
            "page-fault" not in stdout + stderr:
        fail(f"records lost: exit {proc.returncode}, page_faults.lost {pf.get('lost')}, the table: "
             f"{[x for x in (stdout + stderr).splitlines() if 'lost' in x]}")
    elif first.get("evidence", {}).get("lost_records") != pf["lost"]:
        fail(f"records lost: first_touch_in_timed_loop does not weigh the {pf['lost']} lost: {first}")
    else:
        print(f"records lost: {pf['lost']} page-fault records of {pf['lost'] + pf['samples']}; "
              f"first_touch_in_timed_loop: {first.get('status')}: {first.get('message', '')[:160]}")

# Past SAMPLE_KEEP_MAX (262144) fault samples the watch keeps one block of 256 consecutive ones in 2, then 4: its
# memory stays bounded (a million faults held 259 MB before), and the counts are the kept ones times one_in. 400000
# first touches in one ascending loop: 1 in 2 kept, every count within 1 % of the truth, the step still one page.
PAGES = 400000
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "r.json")
    p = subprocess.run([TLBPROF, "run", "--json", out, "--fail-on", "never", "--",
                        os.environ["TLBPROF_TEST_SAMPLE_TARGET"], str(PAGES)],
                       capture_output=True, text=True, timeout=120)
    pf = json.load(open(out))["target"]["watch"]["page_faults"] if os.path.exists(out) else {}
    near = lambda x: x is not None and abs(x - PAGES) <= PAGES // 100
    if p.returncode != 0 or pf.get("kept_one_in") != 2 or pf["samples"] + pf["lost"] < PAGES or \
            not near(pf.get("faults")) or not near(pf.get("pages")) or not near(pf.get("in_hot_loop")) or \
            pf.get("step_mode_pages") != 1 or "1 block of 256 in 2 kept" not in p.stdout:
        fail(f"fault samples past the cap: exit {p.returncode}, page_faults {pf}, the table: "
             f"{[x for x in p.stdout.splitlines() if 'kept' in x]}")
    else:
        print(f"fault samples past the cap: {pf['samples']} seen, 1 in {pf['kept_one_in']} kept; "
              f"{pf['faults']} faults on {pf['pages']} pages ({PAGES} touched), step {pf['step_mode_pages']}")

fail.finish(f"all run checks passed ({len(TRAPS)} example benchmarks)")
