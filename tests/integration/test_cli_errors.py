#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bad input: exit 2, one line on stderr naming the option and the value, nothing on stdout, no report written.
An output that cannot be created: exit 4, the same way, before any work."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

TLBPROF = sys.argv[1]
failures = []

# (arguments, text the one-line error must contain)
CASES = [
    (["--workload", "nope"], "--workload 'nope'"),
    (["--pages", "4k,,2m"], "--pages '4k,,2m'"),
    (["--pages", "16k"], "'16k'"),
    (["--size", "12Q"], "--size '12Q'"),
    (["--size", "0"], "--size '0'"),
    (["--size", "99999999999999999999"], "--size"),
    (["--stride", "3000"], "--stride '3000'"),
    (["--stride", "4"], "--stride '4'"),
    (["--size", "4K", "--stride", "4K"], "--stride '4K'"),
    (["--iters", "0"], "--iters '0'"),
    (["--iters", "1.5"], "--iters '1.5'"),
    (["--warmup-frac", "abc"], "--warmup-frac 'abc'"),
    (["--repeat", "0"], "--repeat '0'"),
    (["--seed", "x"], "--seed 'x'"),
    (["--cpu", "100000"], "--cpu '100000'"),
    (["--layout", "zigzag"], "--layout 'zigzag'"),
    (["-e", "cpu/evnt=1/"], "--event 'cpu/evnt=1/'"),
    (["--event", "cpu/event=1,umask=2"], "--event 'cpu/event=1,umask=2'"),
    (["-e", "a,,b"], "--event 'a,,b'"),
    (["--layout", "colored,colored"], "--layout 'colored,colored'"),
    (["--layout", "colored,aligned,colored"], "--layout 'colored,aligned,colored'"),
    (["--layout", "colored,aligned", "--workload", "stride"], "--layout 'colored,aligned'"),
    (["--events-dir", "/no/such/dir"], "--events-dir '/no/such/dir'"),
    (["--frobnicate"], "'--frobnicate'"),
    (["--quiet=1"], "'--quiet' takes no value"),
    (["--help=x"], "'--help' takes no value"),
    (["-Z"], "'-Z'"),
    (["--controls", "maybe"], "--controls 'maybe'"),
    (["--fail-on", "error"], "--fail-on 'error'"),
    (["analyze"], "analyze"),
    (["analyze", "/no/such.json"], "'/no/such.json'"),
    (["analyze", "/"], "/: Is a directory"),
    (["compare", "/", "/"], "/: Is a directory"),
    (["analyze", "/dev/null", "--size", "1M"], "'--size'"),
    (["compare", "/dev/null"], "compare"),
    (["compare", "/dev/null", "/dev/null", "--threshold", "0"], "--threshold '0'"),
    (["env", "extra"], "'extra'"),
    (["env", "--pages", "4k"], "'--pages'"),
    (["events", "--pmu", "zen9"], "--pmu 'zen9'"),
    (["events", "--pmu", "generic"], "--pmu 'generic'"),
    (["events", "--bogus"], "'--bogus'"),
    (["--size"], "'--size'"),
    (["run"], "run: give the command"),
    (["run", "--", "/no/such/benchmark"], "'/no/such/benchmark'"),
    # A value's control bytes are written as escapes: the error stays one line and sends the terminal nothing.
    (["--size", "1M\nfoo"], "--size '1M\\nfoo'"),
    (["--pages", "4k\u009b2J"], "--pages '4k\\u009b2J'"),
    (["run", "--", "no\nsuch\x1b[2J"], "'no\\nsuch\\x1b[2J'"),
    (["run", "no-such-command-anywhere"], "'no-such-command-anywhere'"),
    (["run", "--control", "fifo:/no/such/fifo", "--", "true"], "--control 'fifo:/no/such/fifo'"),
    (["run", "--control", "socket:1", "--", "true"], "--control 'socket:1'"),
    (["run", "--control", "fd:987", "--", "true"], "--control 'fd:987'"),
    (["run", "--delay", "500", "--", "true"], "--delay '500'"),
    (["run", "--size", "1M", "--", "true"], "'--size' applies only to measuring"),
    (["run", "--cpu", "99999", "--", "true"], "--cpu '99999'"),
    (["run", "--sample", "cycles", "--", "true"], "--sample 'cycles'"),
    (["stray"], "'stray'"),
    (["--format", "nope", "--output", "{d}"], "--format 'nope'"),
    (["--format", "junit,junit", "--output", "{d}"], "--format 'junit,junit'"),
    (["--format", "csv"], "--format 'csv'"),
    (["--output", "/no/such/dir/"], "--output '/no/such/dir/'"),
    (["--format", "json,csv", "--output", "{d}/r.csv"], "--output '{d}/r.csv'"),
    (["--format", "gbench", "--output", "-", "--json", "-"], "--output '-'"),
    (["analyze", "/dev/null", "--format", "openmetrics,bogus", "--output", "{d}"], "--format 'openmetrics,bogus'"),
    (["--output", "junit={d}/a.xml,csv={d}/a.xml"], "--output 'csv={d}/a.xml': the same file as junit"),
    (["--output", "junit={d}/r.json"], "--output 'junit={d}/r.json': the same file as --json"),
    (["--output", "junit={d}/"], "--output 'junit={d}/': a directory"),
    (["--output", "junit={d}/a.xml", "--format", "junit,csv"], "csv has no --output csv=PATH"),
    (["--output", "gbench="], "--output 'gbench=': no path for gbench"),
    (["--output", "junit={d}/a.xml", "--output", "{d}"], "cannot be combined"),
]

# (arguments, text of the one-line error): exit 4, and nothing measured or written.
UNWRITABLE = [
    (["--json", "/no/such/dir/r.json"], "--json '/no/such/dir/r.json'"),
    (["--format", "openmetrics", "--output", "/no/such/dir/node.prom"], "--output '/no/such/dir/node.prom'"),
    (["--output", "gbench=/no/such/dir/g.json"], "--output 'gbench=/no/such/dir/g.json'"),
]

with tempfile.TemporaryDirectory() as d:
    for args, text in CASES:
        args = [a.replace("{d}", d) for a in args]
        text = text.replace("{d}", d)
        out = os.path.join(d, "r.json")
        p = subprocess.run([TLBPROF, *args, "--json", out] if args[-1] not in ("--size", "-") else [TLBPROF, *args],
                           capture_output=True, text=True, timeout=30)
        lines = p.stderr.strip().splitlines()
        problems = []
        if p.returncode != 2:
            problems.append(f"exit {p.returncode}")
        if len(lines) != 1 or text not in lines[0]:
            problems.append(f"stderr {p.stderr!r} should be one line containing {text!r}")
        if any(ord(ch) < 32 and ch != "\n" or 0x7f <= ord(ch) <= 0x9f for ch in p.stderr):
            problems.append(f"stderr {p.stderr!r} holds a control character")
        if p.stdout:
            problems.append(f"stdout not empty: {p.stdout[:80]!r}")
        if os.listdir(d):
            problems.append(f"files written: {os.listdir(d)}")
        if problems:
            failures.append(f"{args}: " + "; ".join(problems))

    for args, text in UNWRITABLE:
        p = subprocess.run([TLBPROF, *args, "--size", "1M"], capture_output=True, text=True, timeout=30)
        lines = p.stderr.strip().splitlines()
        if p.returncode != 4 or len(lines) != 1 or text not in lines[0] or p.stdout or os.listdir(d):
            failures.append(f"{args}: exit {p.returncode} (want 4), stderr {p.stderr!r}, stdout {p.stdout[:80]!r}")

    # -q with no file to write is a usage error in every command that has -q (plot has none: -o is required);
    # tlbprof run does not start CMD (its touch would leave a file), a measurement does not start.
    FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "reports",
                           "kvm-intel-no-pmu.json")
    ran = os.path.join(d, "ran")
    for args in (["-q"], ["--quiet", "--fail-on", "warn"], ["run", "-q", "--", "touch", ran], ["analyze", FIXTURE, "-q"],
                 ["compare", FIXTURE, FIXTURE, "--quiet"], ["env", "-q"], ["events", "-q"], ["plot", FIXTURE, "-q"]):
        p = subprocess.run([TLBPROF, *args], capture_output=True, text=True, timeout=30)
        lines = p.stderr.strip().splitlines()
        want = "'-q'" if args[0] == "plot" else "--quiet: nothing to write"
        if p.returncode != 2 or len(lines) != 1 or want not in lines[0] or p.stdout or os.listdir(d):
            failures.append(f"{args}: exit {p.returncode} (want 2), stderr {p.stderr!r}, stdout {p.stdout[:80]!r}, "
                            f"files {os.listdir(d)}")
        # env and events have no --output: their error names only what they take.
        if args[0] in ("env", "events") and lines and "--output" in lines[0]:
            failures.append(f"{args}: the -q error names --output, which {args[0]} does not take: {lines[0]}")
    # With a file to write, -q is fine and the file is written.
    for args in (["analyze", FIXTURE, "-q", "--fail-on", "never", "--json"], ["env", "-q", "--json"],
                 ["analyze", FIXTURE, "-q", "--fail-on", "never", "--format", "csv", "--output"]):
        out = os.path.join(d, "q.out")
        p = subprocess.run([TLBPROF, *args, out], capture_output=True, text=True, timeout=60)
        if p.returncode != 0 or p.stdout or not os.path.getsize(out):
            failures.append(f"{args} FILE: exit {p.returncode}, stdout {p.stdout[:80]!r}, stderr {p.stderr!r}")
        os.unlink(out)

    # Two outputs on one file, however the path is spelled (./, a dangling link, a --output DIR/ name), and an output
    # over a report being read: exit 2 before any work, nothing written, the report as it was. Text comparison let
    # one document replace the other.
    M = ["--size", "1M", "--iters", "50k", "--repeat", "2", "--pages", "4k", "--realloc", "1", "-q"]
    with tempfile.TemporaryDirectory() as e:
        report = os.path.join(e, "r.json")
        shutil.copy(FIXTURE, report)
        os.makedirs(os.path.join(e, "dir", "tlbprof.csv"))
        os.symlink("new.json", os.path.join(e, "link.json"))
        with open(report, "rb") as f:
            before = f.read()
        for args, text in (
                ([*M, "--json", "n.json", "--format", "gbench", "--output", "gbench=./n.json"], "the same file"),
                ([*M, "--json", "new.json", "--format", "gbench", "--output", "gbench=link.json"], "the same file"),
                ([*M, "--json", "dir/tlbprof.gbench.json", "--format", "gbench", "--output", "dir/"],
                 "is the same file as --json"),
                ([*M, "--format", "json,csv", "--output", "dir/"], "dir/tlbprof.csv is a directory"),
                (["run", "-q", "--format", "json,csv", "--output", "dir/", "--", "touch", "ran"], "is a directory"),
                (["analyze", "r.json", "--format", "gbench", "--output", "gbench=./r.json"], "being read"),
                (["analyze", "r.json", "--format", "csv", "--output", "r.json"], "being read"),
                (["compare", "r.json", FIXTURE, "--output", "r.json"], "being compared"),
                (["compare", FIXTURE, "r.json", "--json", "./r.json"], "being read")):
            p = subprocess.run([TLBPROF, *args], capture_output=True, text=True, timeout=30, cwd=e)
            lines = p.stderr.strip().splitlines()
            with open(report, "rb") as f:
                kept = f.read() == before
            written = sorted(set(os.listdir(e)) - {"r.json", "dir", "link.json"}) + os.listdir(os.path.join(e, "dir"))
            if p.returncode != 2 or len(lines) != 1 or text not in lines[0] or written != ["tlbprof.csv"] or not kept:
                failures.append(f"{args}: exit {p.returncode} (want 2), stderr {p.stderr!r}, written {written}, "
                                f"report kept {kept}")
        # The re-analysed report may replace its source: it holds all of it.
        p = subprocess.run([TLBPROF, "analyze", "r.json", "--json", "./r.json", "-q", "--fail-on", "never"],
                           capture_output=True, text=True, timeout=30, cwd=e)
        with open(report) as f:
            if p.returncode != 0 or '"tlbprof.report/1"' not in f.read():
                failures.append(f"analyze r.json --json ./r.json: exit {p.returncode}, {p.stderr!r}")
        # /dev/stdout or /dev/stderr naming a file the caller redirected to (>>): the document is appended through the
        # redirect (the table goes to stderr, as with --json -), never renamed over the file and what it held.
        for dev, fd in (("/dev/stdout", "stdout"), ("/dev/stderr", "stderr")):
            log = os.path.join(e, "log.txt")
            with open(log, "w") as f:
                f.write("BEFORE\n")
            with open(log, "a") as f:
                p = subprocess.run([TLBPROF, *M[:-1], "--fail-on", "never", "--json", dev],
                                   stdout=f if fd == "stdout" else subprocess.PIPE,
                                   stderr=f if fd == "stderr" else subprocess.PIPE, timeout=60)
            with open(log) as f:
                text = f.read()
            table = (p.stderr if fd == "stdout" else p.stdout).decode()
            try:
                ok = text.startswith("BEFORE\n") and json.loads(text[len("BEFORE\n"):])
            except ValueError:
                ok = False
            if p.returncode != 0 or not ok or (fd == "stdout" and "verdict" not in table):
                failures.append(f"--json {dev} with {fd} appended to a file: exit {p.returncode}, file {text[:80]!r}, "
                                f"table elsewhere {table[:80]!r}")

    p = subprocess.run([TLBPROF, "--help"], capture_output=True, text=True, timeout=30)
    for opt in ("--workload", "--pages", "--size", "--stride", "--iters", "--warmup-frac", "--repeat", "--seed",
                "--cpu", "--layout", "--events-dir", "--json", "--format", "--output", "--quiet", "--help",
                "--version", "--controls", "--fail-on", "analyze", "compare"):
        if opt not in p.stdout:
            failures.append(f"--help does not list {opt}")
    p = subprocess.run([TLBPROF, "analyze", "--help"], capture_output=True, text=True, timeout=30)
    for opt in ("--json", "--format", "--output", "--fail-on"):
        if opt not in p.stdout:
            failures.append(f"analyze --help does not list {opt}")
    if p.returncode != 0 or "default" not in p.stdout:
        failures.append("--help must exit 0 and show defaults")
    p = subprocess.run([TLBPROF, "--version"], capture_output=True, text=True, timeout=30)
    if p.returncode != 0 or not p.stdout.startswith("tlbprof "):
        failures.append(f"--version: {p.stdout!r}")

for f in failures:
    print("FAIL:", f, file=sys.stderr)
print(f"{len(failures)} failed" if failures else f"all {len(CASES) + len(UNWRITABLE)} bad inputs rejected correctly")
sys.exit(1 if failures else 0)
