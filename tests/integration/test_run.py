#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tlbprof run: the example trap benchmarks fire exactly their check; unmarked commands, perf stat --control
compatibility, protocol errors, exit statuses and signals, the private FIFO directory, and Ctrl-C."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from report_check import Failures, ReportError, validate

TLBPROF = sys.argv[1]
EXAMPLES = sys.argv[2]
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
        elif phases["chase4k"]["page"]["backing"] != "base" or phases["chase2m"]["page"]["backing"] != "thp":
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

# Exit statuses and signals are reported and propagated; no shell is involved (sh here is the command itself).
p, rep = run(["--", "sh", "-c", "exit 3"])
if p.returncode != 3 or rep["target"]["exit_code"] != 3 or "status 3" not in p.stderr:
    fail(f"exit 3: tlbprof exit {p.returncode}, report {rep and rep['target']['exit_code']}, stderr {p.stderr!r}")
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

# perf stat --control compatibility: fifo and fd forms, -D -1, acks.
PERF = ("import sys; c = open(sys.argv[1], 'w'); a = open(sys.argv[2]) if len(sys.argv) > 2 else None\n"
        "for cmd in ['enable', 'disable', 'ping', 'enable', 'disable']:\n"
        "  c.write(cmd + '\\n'); c.flush()\n"
        "  r = a.readline().strip() if a else 'ack'\n"
        "  assert r == 'ack', r\n")
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

fail.finish(f"all run checks passed ({len(TRAPS)} example benchmarks)")
