#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The perf stat habits of tlbprof run. -r N, as perf stat -r N: the command runs N times; each phase holds every
run's occurrences, the samples of run k tagged as allocation k, so the interval and spread are between runs; a
phase only some runs had is kept with its own runs; a failing run stops the repeats with its exit status; Ctrl-C
stops them with the runs so far. -I MS, as perf stat -I MS: the whole command's counts in each interval, which add
up to its total, in the report, the table and the plot. -p PID, as perf stat -p: a running process counted on
every thread until it exits, a timing command exits or Ctrl-C, never signalled; --per-thread gives each thread's
counts, which add up. Bad values and combinations are exit 2 naming the option."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from report_check import Failures, ReportError, validate

TLBPROF = sys.argv[1]
THREADS_PROBE = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(TLBPROF), "tests", "threads-probe")
CLOCK_PROBE = sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(TLBPROF), "tests",
                                                                   "clock-threads-probe")
LIBC_PROBE = sys.argv[4] if len(sys.argv) > 4 else os.path.join(os.path.dirname(TLBPROF), "tests", "libc-probe")
fail = Failures()

# A marked benchmark through the raw protocol: phase "p" 4 times (1000 accesses each), and on its second run
# (a count kept in a file) one phase "late" too; it exits with the status in EXIT_ON_RUN_<k>, if set.
BENCH = (
    "import os, sys, time\n"
    "n = os.path.join(os.environ['COUNT_DIR'], 'runs')\n"
    "k = int(open(n).read()) + 1 if os.path.exists(n) else 1\n"
    "open(n, 'w').write(str(k))\n"
    "c = open(os.environ['TLBPROF_MARKER_CTL'], 'w'); a = open(os.environ['TLBPROF_MARKER_ACK'])\n"
    "def send(line):\n c.write(line + '\\n'); c.flush(); a.readline()\n"
    "for i in range(4):\n send('phase begin p accesses=1000'); time.sleep(0.003); send('phase end')\n"
    "if k == 2:\n send('phase begin late accesses=1000'); time.sleep(0.003); send('phase end')\n"
    "sys.exit(int(os.environ.get('EXIT_ON_RUN_%d' % k, '0')))\n")


def run(args, env=None, timeout=120):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        p = subprocess.run([TLBPROF, "run", "--json", out, "--fail-on", "never", *args], capture_output=True,
                           text=True, timeout=timeout, env=env)
        rep = json.load(open(out)) if os.path.exists(out) else None
    if rep is not None:
        try:
            validate(rep)
        except ReportError as e:
            fail(f"run {args}: the report does not validate: {e}")
    return p, rep


def bench_env(d, **extra):
    return dict(os.environ, COUNT_DIR=d, **extra)


# 1. Three runs of a marked benchmark: one phase over all of them, each run one allocation.
with tempfile.TemporaryDirectory() as d:
    p, rep = run(["-r", "3", "--", sys.executable, "-c", BENCH], env=bench_env(d))
    phases = {ph["name"]: ph for ph in rep["phases"]} if rep else {}
    ph = phases.get("p")
    if p.returncode != 0 or not ph:
        fail(f"-r 3: exit {p.returncode}, phases {list(phases)}: {p.stderr.strip()}")
    else:
        if ph["declared"]["occurrences"] != 12 or len(ph["declared"]["wall_ns"]) != 12:
            fail(f"-r 3: phase p has {ph['declared']['occurrences']} occurrences (want 4 a run, 12)")
        if ph.get("sample_allocations") != [0] * 4 + [1] * 4 + [2] * 4:
            fail(f"-r 3: phase p's samples tagged {ph.get('sample_allocations')} (want each run its allocation)")
        if ph["params"]["allocations"] != 3 or ph["precision"]["allocations"] != 3:
            fail(f"-r 3: allocations {ph['params']['allocations']} / {ph['precision']['allocations']} (want 3)")
        reps = rep["target"]["repeats"]
        if reps["requested"] != 3 or [r["exit_code"] for r in reps["runs"]] != [0, 0, 0]:
            fail(f"-r 3: repeats {reps}")
        total = sum(r["wall_ns"] for r in reps["runs"])
        if abs(rep["target"]["wall_ns"] - total) > 1e-6 * total:
            fail(f"-r 3: target.wall_ns {rep['target']['wall_ns']} is not the runs' {total}")
        late = phases.get("late")
        if not late or late["declared"]["occurrences"] != 1 or late.get("sample_allocations") != [1] or \
                late["params"]["allocations"] != 1:
            fail(f"-r 3: the phase only run 2 had: {late and (late['declared']['occurrences'], late.get('sample_allocations'))}")
        if "3 of 3 runs (-r)" not in p.stdout:
            fail(f"-r 3: the table does not say the runs: {[line for line in p.stdout.splitlines() if 'command:' in line]}")
        # The reanalysis from the JSON reaches the same checks (the runs are in sample_allocations).
        with tempfile.TemporaryDirectory() as t:
            src = os.path.join(t, "r.json")
            with open(src, "w") as f:
                json.dump(rep, f)
            a = subprocess.run([TLBPROF, "analyze", src, "--json", os.path.join(t, "a.json"), "-q", "--fail-on",
                                "never"], capture_output=True, text=True, timeout=60)
            again = json.load(open(os.path.join(t, "a.json"))) if a.returncode == 0 else None
            if not again or [(c["id"], c["status"]) for c in again["analysis"]["checks"]] != \
                    [(c["id"], c["status"]) for c in rep["analysis"]["checks"]]:
                fail(f"-r 3: analyze of the report reaches other checks (exit {a.returncode})")

# 2. An unmarked command: its one phase holds one occurrence a run; without -r, repeats says one run.
p, rep = run(["-r", "4", "--", "true"])
ph = rep and rep["phases"][0]
if p.returncode != 0 or not ph or ph["declared"]["occurrences"] != 4 or len(rep["target"]["repeats"]["runs"]) != 4:
    fail(f"-r 4 true: exit {p.returncode}, {ph and ph['declared']['occurrences']} occurrences")
p, rep = run(["--", "true"])
if not rep or rep["target"]["repeats"] != {"requested": 1, "runs": [{"wall_ns": rep["target"]["wall_ns"],
                                                                     "exit_code": 0, "signal": None}]}:
    fail(f"one run: repeats {rep and rep['target']['repeats']}")

# 3. A run that fails ends the repeats: its exit status is tlbprof's, the report holds the runs so far.
with tempfile.TemporaryDirectory() as d:
    p, rep = run(["-r", "5", "--", sys.executable, "-c", BENCH], env=bench_env(d, EXIT_ON_RUN_2="3"))
    runs = rep and rep["target"]["repeats"]["runs"]
    if p.returncode != 3 or not runs or [r["exit_code"] for r in runs] != [0, 3] or \
            rep["target"]["exit_code"] != 3:
        fail(f"-r 5, run 2 exits 3: exit {p.returncode}, runs {runs}")

# 4. Ctrl-C between or inside runs: exit 130, the runs so far, interrupted.
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "r.json")
    proc = subprocess.Popen([TLBPROF, "run", "-r", "1000", "--json", out, "-q", "--", "sleep", "0.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("-r 1000 and SIGINT: tlbprof did not stop")
    rep = json.load(open(out)) if os.path.exists(out) else None
    n = rep and len(rep["target"]["repeats"]["runs"])
    if proc.returncode != 130 or not rep or not rep["interrupted"] or not n or n >= 1000:
        fail(f"-r 1000 and SIGINT: exit {proc.returncode}, {n} runs, interrupted {rep and rep['interrupted']}")

# 5. A bad N: one line naming the option and the value, exit 2, nothing written.
for bad in ("0", "x", "1001", "-1"):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        p = subprocess.run([TLBPROF, "run", "-r", bad, "--json", out, "--", "true"], capture_output=True, text=True,
                           timeout=30)
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or len(lines) != 1 or "--repeat" not in lines[0] or f"'{bad}'" not in lines[0] or \
                os.path.exists(out):
            fail(f"-r {bad}: exit {p.returncode}, stderr {p.stderr.strip()!r}")

# 6. -I 50: intervals that end no earlier than due, in order, whose counts add up to the command's own.
with tempfile.TemporaryDirectory() as d:
    out, svg = os.path.join(d, "r.json"), os.path.join(d, "r.svg")
    touch = "import time; b = bytearray(32 << 20); time.sleep(0.3); b = bytearray(32 << 20); time.sleep(0.1)"
    p = subprocess.run([TLBPROF, "run", "-I", "50", "--json", out, "--", sys.executable, "-c", touch],
                       capture_output=True, text=True, timeout=120)
    rep = json.load(open(out)) if os.path.exists(out) else None
    iv = rep and rep["target"]["intervals"]
    if p.returncode != 0 or not iv:
        fail(f"-I 50: exit {p.returncode}, intervals {iv}: {p.stderr.strip()}")
    else:
        try:
            validate(rep)
        except ReportError as e:
            fail(f"-I 50: {e}")
        ends = iv["end_ns"]
        # An interval is read once due, never before; the last one ends at the exit.
        if iv["interval_ms"] != 50 or len(ends) < 2 or ends != sorted(ends) or \
                any(e < (i + 1) * 50e6 for i, e in enumerate(ends[:-1])):
            fail(f"-I 50: interval ends {ends[:5]}")
        for name, c in iv["counters"].items():
            total = rep["target"]["counters"].get(name, {}).get("value")
            if len(c["values"]) != len(ends) or sum(c["values"]) != total:
                fail(f"-I 50: {name}'s intervals add up to {sum(c['values'])}, its whole count is {total}")
        faults = iv["counters"].get("page-faults", {}).get("values", [])
        if sum(1 for v in faults if v > 1000) < 2:
            fail(f"-I 50: the two 32 MiB first touches are not two intervals of faults: {faults}")
        if "intervals (-I 50 ms" not in p.stdout or p.stdout.count("\n") < len(ends):
            fail("-I 50: the table has no interval rows")
        # The plot draws them: one line per counter that counted, a point per interval with a count.
        pl = subprocess.run([TLBPROF, "plot", out, "-o", svg], capture_output=True, text=True, timeout=60)
        text = open(svg).read() if pl.returncode == 0 else ""
        chart = text[text.find('data-chart="intervals"'):]
        if 'data-chart="intervals"' not in text or chart.count('class="point"') != \
                sum(1 for c in iv["counters"].values() for v in c["values"] if v > 0):
            fail(f"-I 50: plot exit {pl.returncode}: no intervals chart, or not a point per interval with a count")
# Without -I there are none; with -r, the first run's.
p, rep = run(["--", "true"])
if not rep or rep["target"]["intervals"] is not None:
    fail(f"no -I: intervals {rep and rep['target']['intervals']}")
p, rep = run(["-r", "2", "-I", "20", "--", "sleep", "0.1"])
if not rep or not rep["target"]["intervals"] or rep["target"]["intervals"]["end_ns"][-1] > \
        1.5 * rep["target"]["repeats"]["runs"][0]["wall_ns"]:
    fail(f"-r 2 -I 20: intervals {rep and rep['target']['intervals']}")
for bad in ("5", "0", "x"):
    p = subprocess.run([TLBPROF, "run", "-I", bad, "--", "true"], capture_output=True, text=True, timeout=30)
    if p.returncode != 2 or "--interval-print" not in p.stderr or f"'{bad}'" not in p.stderr or \
            len(p.stderr.strip().splitlines()) != 1:
        fail(f"-I {bad}: exit {p.returncode}, stderr {p.stderr.strip()!r}")

# 7. -p PID: a process with two busy threads, counted while `sleep 0.5` runs; it is left running.
BUSY = ("import sys, threading, time\n"
        "def spin():\n x = 0\n while True: x += 1\n"
        "for _ in range(2): threading.Thread(target=spin, daemon=True).start()\n"
        "print('ready', flush=True); time.sleep(float(sys.argv[1]))\n")


def busy(seconds):
    proc = subprocess.Popen([sys.executable, "-c", BUSY, str(seconds)], stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()      # its threads exist before tlbprof attaches
    return proc


proc = busy(60)
try:
    p, rep = run(["-p", str(proc.pid), "--per-thread", "--", "sleep", "0.5"])
    at = rep and rep["target"]["attached"]
    if p.returncode != 0 or not at or at["pid"] != proc.pid or at["ended_by"] != "command" or at["threads"] != 3:
        fail(f"-p -- sleep 0.5: exit {p.returncode}, attached {at and {k: at[k] for k in ('pid', 'ended_by', 'threads')}}"
             f": {p.stderr.strip()}")
    else:
        per = at["per_thread"] or []
        total = rep["target"]["counters"]["task-clock"]["value"]
        parts = sum(t["counters"]["task-clock"] for t in per)
        if len(per) != 3 or abs(parts - total) > len(per) or sum(t["counters"]["task-clock"] > 0 for t in per) < 2:
            fail(f"-p --per-thread: {len(per)} threads, task-clock {parts} of {total}")
        if [ph["name"] for ph in rep["phases"]] != ["attached"] or rep["phases"][0]["declared"]["occurrences"] != 1:
            fail(f"-p: phases {[ph['name'] for ph in rep['phases']]}")
    if proc.poll() is not None:
        fail(f"-p: the attached process is gone (exit {proc.returncode}): tlbprof must never signal it")
    # Ctrl-C ends an attached count as its normal end: exit 0, ended by the signal, the process still running.
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        t = subprocess.Popen([TLBPROF, "run", "-p", str(proc.pid), "--json", out, "-q"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        t.send_signal(signal.SIGINT)
        t.communicate(timeout=30)
        rep = json.load(open(out)) if os.path.exists(out) else None
        if t.returncode != 0 or not rep or rep["target"]["attached"]["ended_by"] != "signal" or rep["interrupted"] \
                or proc.poll() is not None:
            fail(f"-p and SIGINT: exit {t.returncode}, {rep and rep['target']['attached']}, process {proc.poll()}")
finally:
    proc.kill()
    proc.wait()
# It ends when the process exits, with no timing command.
proc = busy(0.5)
p, rep = run(["-p", str(proc.pid)])
proc.wait()
if p.returncode != 0 or not rep or rep["target"]["attached"]["ended_by"] != "exit" or \
        rep["target"]["attached"]["per_thread"] is not None:
    fail(f"-p until exit: exit {p.returncode}, {rep and rep['target']['attached']}")
# Bad values and combinations: one line naming the option, exit 2.
gone = next(n for n in range(4194000, 4194304) if not os.path.exists(f"/proc/{n}"))
for args, want in ((["-p", "abc"], "--pid 'abc'"), (["-p", str(gone)], f"--pid '{gone}': no such process"),
                   (["-p", str(os.getpid()), "-r", "3"], "--repeat"),
                   (["-p", str(os.getpid()), "--sample", "page-faults"], "--sample")):
    p = subprocess.run([TLBPROF, "run", *args], capture_output=True, text=True, timeout=30)
    if p.returncode != 2 or want not in p.stderr or len(p.stderr.strip().splitlines()) != 1:
        fail(f"run {args}: exit {p.returncode}, stderr {p.stderr.strip()!r}")

# --per-thread of a started command: each task's own counts, reported at its exit. The probe's two threads fault
# 1000 and 3000 pages, its child process 600, the first thread 200 after them (each a page a fault, plus a few of the
# task's own: its stack, the libc it touches). The parts add up to the whole, each within its touches and a margin.
TOUCH = {"a": 1000, "b": 3000, "child": 600, "first": 200}
p, rep = run(["--per-thread", "--", THREADS_PROBE, *(str(TOUCH[k]) for k in ("a", "b", "child", "first"))])
pt = rep and rep["target"]["per_thread"]
if p.returncode != 0 or not pt or pt["error"] is not None or pt["lost_records"] != 0:
    fail(f"--per-thread of a started command: exit {p.returncode}, per_thread {pt}: {p.stderr.strip()[-300:]}")
else:
    threads, total = pt["threads"], rep["target"]["counters"]
    first = [t for t in threads if t["first"]]
    pid = rep["target"]["pid"]
    faults = sorted(t["counters"]["page-faults"] for t in threads if not t["first"])
    children = [t for t in threads if t["pid"] != pid]
    if len(threads) != 4 or len(first) != 1 or first[0]["tid"] != pid or not first[0]["exact"] or \
            first[0]["comm"] != os.path.basename(THREADS_PROBE)[:15] or len(children) != 1:
        fail(f"--per-thread: 4 tasks (the first, two threads, a child process): "
             f"{[(t['pid'], t['tid'], t['comm'], t['first']) for t in threads]}")
    for name, n in zip(("child", "a", "b"), faults):
        if not TOUCH[name] <= n <= TOUCH[name] + 150:
            fail(f"--per-thread: page faults {faults}, want {TOUCH['child']}, {TOUCH['a']} and {TOUCH['b']} "
                 f"(+150 at most each)")
            break
    if first and first[0]["counters"]["page-faults"] < TOUCH["first"]:
        fail(f"--per-thread: the first thread's faults {first[0]['counters']['page-faults']} < {TOUCH['first']}")
    for name, c in total.items():
        parts = sum(t["counters"].get(name, 0) for t in threads)
        if abs(parts - c["value"]) > len(threads):
            fail(f"--per-thread: {name}: the tasks' {parts} against the whole command's {c['value']}")
    if "each task's own counts" not in p.stdout or f"{pid:>8d} {pid:>8d}" not in p.stdout:
        fail(f"--per-thread: the table's rows: {p.stdout[-800:]!r}")
p, rep = run(["--", THREADS_PROBE, "10", "10", "10", "10"])
if not rep or rep["target"]["per_thread"] is not None:
    fail(f"without --per-thread: target.per_thread {rep and rep['target']['per_thread']}")

# The clock probes follow the threads of the command's process: a worker thread's reads are seen (a uprobe traps
# every thread of a process, traced or not), and one thread more than tlbprof follows stops all tracing, said so.
READS = 2000
p, rep = run(["--", CLOCK_PROBE, "0", str(READS)])
c = rep and rep["target"]["watch"] and rep["target"]["watch"]["clocks"]
if p.returncode != 0 or not rep or rep["target"]["exit_code"] != 0:
    fail(f"clock probes on a worker thread: exit {p.returncode}, the command's {rep and rep['target']['exit_code']} "
         f"(3: a thread could not be created): {p.stderr.strip()[-300:]}")
elif not c or not c["traced"]:
    print(f"clock probes: not traced here ({c and c['error']}): the thread-following part is not checked")
else:
    calls = c["functions"][0]["calls"]
    if c["threads"] != 2 or not c["hot_thread_traced"] or c["threads_capped_at_ms"] is not None or \
            not READS <= calls <= READS + 50 or c["hot_reads"] < READS:
        fail(f"clock probes on a worker thread: threads {c['threads']} (want 2), hot thread traced "
             f"{c['hot_thread_traced']}, capped {c['threads_capped_at_ms']}, clock_gettime calls {calls} and hot "
             f"reads {c['hot_reads']} (want {READS})")
    # Five workers one after the other: an ended thread's probes close and free its place, so none is capped.
    p, rep = run(["--", CLOCK_PROBE, "0", "400", "5"])
    c = rep and rep["target"]["watch"]["clocks"]
    if p.returncode != 0 or not rep or rep["target"]["exit_code"] != 0 or c["threads"] != 6 or \
            c["threads_capped_at_ms"] is not None or c["functions"][0]["calls"] < 5 * 400:
        fail(f"clock probes, 5 workers in turn: threads {c and c['threads']} (want 6), capped "
             f"{c and c['threads_capped_at_ms']}, clock_gettime calls {c and c['functions'][0]['calls']} (want 2000)")
    # A shell that forks the probe: the watch follows the process it started, and its worker thread.
    p, rep = run(["--", "sh", "-c", '"$0" 0 "$1"; exit $?', CLOCK_PROBE, str(READS)])
    w = rep and rep["target"]["watch"]
    if p.returncode != 0 or not rep or not (w["program"] or "").endswith("clock-threads-probe") or \
            w["processes"] != 2 or not w["clocks"]["hot_thread_traced"] or w["clocks"]["hot_reads"] < READS // 2:
        fail(f"clock probes through sh: program {w and w['program']}, processes {w and w['processes']}, hot thread "
             f"traced {w and w['clocks']['hot_thread_traced']}, hot reads {w and w['clocks']['hot_reads']}")
    # The first thread leaves with pthread_exit while its worker runs: the process's smaps is then read through
    # the worker (the leader's is empty), so its 4 MiB region is seen.
    p, rep = run(["--", CLOCK_PROBE, "0", "100", "1", "main-exits"])
    regs = rep and [r for r in rep["target"]["watch"]["regions"] if r["anonymous"] and r["size_bytes"] >= 4 << 20
                    and r["pid"] == rep["target"]["pid"]]
    if p.returncode != 0 or not rep or not regs or max(r["rss_max_bytes"] for r in regs) < 4 << 20:
        fail(f"main thread exited: the worker's 4 MiB region unseen: {rep and rep['target']['watch']['regions']}")
    p, rep = run(["--", CLOCK_PROBE, "4", str(READS)])
    c = rep and rep["target"]["watch"]["clocks"]
    checks = {k["id"]: k for k in rep["analysis"]["checks"]} if rep else {}
    said = checks.get("clock_per_access", {}).get("message", "")
    if p.returncode != 0 or not rep or rep["target"]["exit_code"] != 0:
        fail(f"clock probes, 5 threads: exit {p.returncode}, the command's {rep and rep['target']['exit_code']}")
    elif c["threads"] != 4 or c["threads_capped_at_ms"] is None or c["hot_thread_traced"] or \
            "was not traced" not in said or "called none" in said:
        fail(f"clock probes, 5 threads: threads {c['threads']} (want 4), capped at {c['threads_capped_at_ms']} ms, "
             f"hot thread traced {c['hot_thread_traced']}; clock_per_access: {said}")

# A command whose time is all in libc and the kernel: no hot loop of its own, but a hot thread all the same (the
# busiest), whose two reads bracket its memset: its clock checks judge it rather than skip.
p, rep = run(["--", LIBC_PROBE, "256"])
if rep and rep["target"]["watch"]["clocks"]["traced"]:
    w, checks = rep["target"]["watch"], {c["id"]: c for c in rep["analysis"]["checks"]}
    if w["cpu_clock"]["hot_tid"] != rep["target"]["pid"] or checks["empty_timed_window"]["status"] != "pass":
        fail(f"libc-only command: hot thread {w['cpu_clock']['hot_tid']} (want {rep['target']['pid']}), own share "
             f"{w['cpu_clock']['shares']['own']}; empty_timed_window: {checks['empty_timed_window']['message']}")

fail.finish("run -r, -I and -p: phases over all runs, each run an allocation; failures, Ctrl-C; intervals that add up, "
            "in the table and the plot; an attached process counted per thread and left running; bad values; clock probes "
            "that follow a command's threads")
