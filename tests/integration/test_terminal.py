#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Colour and width on a terminal: run under a pseudo-terminal of a known size, the text of analyze, compare and
env colours failed checks red, warnings yellow and passes green, and wraps long messages to the terminal's width
without losing a word. NO_COLOR and TERM=dumb turn the colour off; in a pipe the output is as it always was."""
import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import sys
import tempfile
import termios

TLBPROF = sys.argv[1]
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.environ.get("TLBPROF_TEST_DATA_DIR", os.path.join(SRC, "tests", "data"))
ESC = re.compile(r"\x1b\[[0-9;]*m")
RED, YELLOW, GREEN, RESET = "\x1b[1;31m", "\x1b[33m", "\x1b[32m", "\x1b[0m"
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, file=sys.stderr)


def environ(**changes):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS")}
    env["TERM"] = "xterm-256color"
    env.update(changes)
    return env


def on_terminal(argv, cols, **changes):
    """argv's stdout and stderr on a pseudo-terminal cols wide: (exit status, text without the CRs)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=environ(**changes))
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            p.kill()
            fail(f"{argv}: no output for 120 s")
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:     # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return p.wait(), out.decode("utf-8", "replace").replace("\r\n", "\n")


def in_pipe(argv, **changes):
    p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, env=environ(**changes), timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def words(text):
    return ESC.sub("", text).split()


def check_colours(what, text):
    """Every escape is one of the three colours or the reset, each colour closed by a reset right after its word."""
    for m in re.finditer(r"\x1b\[[0-9;]*m([^\x1b]*)(\x1b\[[0-9;]*m)?", text):
        start = m.group(0)[:m.group(0).index("m") + 1]
        if start == RESET:
            continue
        if start not in (RED, YELLOW, GREEN):
            fail(f"{what}: unexpected escape {start!r}")
        elif m.group(2) != RESET or not m.group(1).strip() or " " in m.group(1).strip() and start != GREEN:
            fail(f"{what}: colour {start!r} not closed around one word: {m.group(0)!r}")


def check_width(what, lines, cols, allowed=lambda line: False):
    """No line wider than cols, but a single word that cannot be broken or a line allowed() says stays whole."""
    for line in lines:
        plain = ESC.sub("", line)
        if len(plain) > cols and " " in plain.strip() and not allowed(plain):
            fail(f"{what}: line of {len(plain)} columns on a {cols}-column terminal: {plain!r}")


def status_colour(text, status, colour):
    """Whether every check line with this status shows it in colour (and no line shows it without)."""
    plain_lines = [line for line in text.splitlines() if re.match(rf"  {status} ", line)]
    coloured = [line for line in text.splitlines() if line.startswith(f"  {colour}{status}{RESET}")]
    return not plain_lines and bool(coloured)


with tempfile.TemporaryDirectory() as tmp:
    # A report with a failed phase (phases_completed fails), and one whose unstable check warns.
    base = os.path.join(DATA, "vm-chase-16m-run1.json")
    with open(base) as f:
        rep = json.load(f)
    rep["phases"][1]["status"] = "failed"
    failed = os.path.join(tmp, "failed.json")
    with open(failed, "w") as f:
        json.dump(rep, f)
    warned = os.path.join(SRC, "examples", "reports", "kvm-intel-no-pmu.json")

    # 1. analyze on an 80-column terminal: colours, width, every word of the pipe's text.
    for report, status, colour in ((failed, "fail", RED), (warned, "warn", YELLOW)):
        argv = [TLBPROF, "analyze", report, "--fail-on", "never"]
        rc, tty = on_terminal(argv, 80)
        prc, piped = in_pipe(argv)
        what = f"analyze {os.path.basename(report)}"
        if rc != prc:
            fail(f"{what}: exit {rc} on a terminal, {prc} in a pipe")
        check_colours(what, tty)
        for st, col in ((status, colour), ("pass", GREEN)):
            if not status_colour(tty, st, col):
                fail(f"{what}: the {st} checks are not in {col!r} on a terminal")
        verdict = "fail" if status == "fail" else "warn"
        if f"verdict: {RED if verdict == 'fail' else YELLOW}{verdict}{RESET}" not in tty:
            fail(f"{what}: the verdict line is not coloured: "
                 f"{[line for line in tty.splitlines() if line.startswith('verdict')]}")
        # The phase table's rows are a table, as perf stat's: only the checks and the notes wrap.
        table = re.compile(r"^\S+/\S+\s|^phase\s|^size\s|^\d+[KMG]\s|^\s+(95% CI|[a-z_]+ +\d)")
        check_width(what, tty.splitlines(), 80, lambda line: bool(table.match(line)))
        if words(tty) != words(piped):
            a, b = words(tty), words(piped)
            i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
            fail(f"{what}: the terminal's text differs from the pipe's at word {i}: {a[i - 3:i + 3]} "
                 f"against {b[i - 3:i + 3]}")
        if "\x1b" in piped:
            fail(f"{what}: an escape in a pipe")
        longest = max(len(line) for line in piped.splitlines())
        if longest <= 80:
            fail(f"{what}: no line over 80 columns in the pipe, so the width test proves nothing")
        # The continuation of a wrapped check message starts under the message's column.
        lines = ESC.sub("", tty).splitlines()
        start = lines.index("checks:")
        for prev, line in zip(lines[start:], lines[start + 1:]):
            if line.startswith(" " * 35) and not re.match(r"  (pass|warn|fail|skip) |^ {35}\S", prev + "|" + line):
                fail(f"{what}: a wrapped check message is not indented by 35: {line!r}")

    # 2. NO_COLOR (set, not empty) and TERM=dumb: no colour, still the terminal's width.
    argv = [TLBPROF, "analyze", failed, "--fail-on", "never"]
    for changes in ({"NO_COLOR": "1"}, {"TERM": "dumb"}):
        _, tty = on_terminal(argv, 72, **changes)
        if "\x1b" in tty:
            fail(f"{changes}: an escape on the terminal: {tty[tty.index(chr(27)) - 20:][:60]!r}")
        check_width(f"analyze with {changes}", [line for line in tty.splitlines() if "checks:" in tty and
                                                 re.match(r"  (pass|warn|fail|skip) | {35}\S", line)], 72)
    _, tty = on_terminal(argv, 72, NO_COLOR="")
    if RED not in tty:
        fail("NO_COLOR='' (empty) turned the colour off; no-color.org: only a non-empty value does")

    # 3. In a pipe, NO_COLOR and COLUMNS change nothing, byte for byte.
    _, plain = in_pipe(argv)
    for changes in ({"NO_COLOR": "1"}, {"COLUMNS": "40"}):
        if in_pipe(argv, **changes)[1] != plain:
            fail(f"{changes} changed the output in a pipe")

    # 4. A terminal narrower than 40 columns wraps as one of 40, and a message keeps at least 20 columns a line
    # beyond its column (35), not a column of single words.
    _, tty = on_terminal(argv, 20)
    check_lines = [ESC.sub("", line) for line in tty.splitlines() if re.match(r" {35}\S", ESC.sub("", line))]
    if not check_lines or any(len(line) > 55 and " " in line.strip() for line in check_lines):
        fail(f"a 20-column terminal: continuation lines {check_lines[:3]} (want wrapped at 35 + 20)")
    if not any(len(line) > 45 for line in check_lines):
        fail(f"a 20-column terminal: no continuation line uses its 20 columns: {check_lines[:3]}")

    # 5. compare: the check that got worse, the statuses and the result's last word in colour; the result wraps.
    argv = [TLBPROF, "compare", base, failed]
    rc, tty = on_terminal(argv, 70)
    prc, piped = in_pipe(argv)
    if rc != 1 or prc != 1:
        fail(f"compare against a failed phase: exit {rc} on a terminal, {prc} in a pipe (want 1)")
    check_colours("compare", tty)
    if f"{GREEN}pass{RESET} -> {RED}fail{RESET}  {YELLOW}worse{RESET}" not in tty:
        fail("compare: 'pass -> fail  worse' is not in its colours")
    if f"({RED}fails{RESET}, exit 1)" not in tty:
        fail("compare: the result's 'fails' is not red")
    result = ESC.sub("", tty)[ESC.sub("", tty).index("\nresult: "):].splitlines()[1:]
    check_width("compare result", result, 70)
    if len(result) < 2:
        fail(f"compare: the result line did not wrap on a 70-column terminal: {result}")
    if words(tty) != words(piped):
        fail("compare: the terminal's text holds other words than the pipe's")

    # 6. env: the Problems section wrapped to the terminal, a warning's severity yellow. A fix command stays whole
    # (it is meant to be pasted), as does the table of facts above.
    rc, tty = on_terminal([TLBPROF, "env", "--json", os.path.join(tmp, "env.json")], 60)
    with open(os.path.join(tmp, "env.json")) as f:
        problems = json.load(f)["problems"]
    section = ESC.sub("", tty)[ESC.sub("", tty).index("\nProblems ("):].splitlines()
    check_width("env Problems", section, 60, lambda line: line.lstrip().startswith("fix:"))
    if any(p["severity"] == "warn" for p in problems) and f"  {YELLOW}warn{RESET}  " not in tty:
        fail("env: a warn problem's severity is not yellow")
    if rc != 0:
        fail(f"env on a terminal: exit {rc}")

if failures:
    print(f"{len(failures)} failed")
    sys.exit(1)
print("colour and width: analyze, compare and env on a terminal; NO_COLOR, TERM=dumb and pipes unchanged")
