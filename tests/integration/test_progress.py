#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The progress line: on a terminal (a pseudo-terminal here) one line redrawn in place and cleared at the end;
nothing when stderr is a pipe or a file, or with --quiet."""
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time

TLBPROF = sys.argv[1]
failures = []
CLEAR = b"\r\x1b[K"
# Six phases that each sample for their whole --time-budget (a precision no median reaches): the run lasts at
# least 2.4 s on any machine, so phases 4 to 6 start after the first second and the line must appear.
RUN = ["--pages", "4k", "--size", "1M,2M,3M,4M,5M,6M", "--time-budget", "0.4", "--precision", "0.000001",
       "--realloc", "1", "--controls", "none"]


def need(cond, what):
    if not cond:
        failures.append(what)
    return cond


def run_on_pty(args, columns=None):
    """Run with stderr on a pseudo-terminal and stdout on a pipe: (exit status, stderr bytes, stdout, seconds)."""
    master, slave = pty.openpty()
    if columns:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    t0 = time.monotonic()
    p = subprocess.Popen([TLBPROF, *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    err = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the child closed its end
                break
            if not chunk:
                break
            err += chunk
        elif p.poll() is not None:
            break
    out = p.stdout.read().decode()
    p.wait(timeout=120)
    os.close(master)
    return p.returncode, err, out, time.monotonic() - t0


def test_terminal():
    rc, err, out, seconds = run_on_pty(RUN)
    need(rc in (0, 1), f"pty run: exit {rc}: {err[-300:]!r}")
    need("verdict:" in out, "pty run: the table should still go to stdout")
    print(f"pty run: {seconds:.1f} s")
    need(CLEAR + b"tlbprof: phase " in err, f"no progress line on the terminal: {err[:300]!r}")
    draws = err.count(CLEAR + b"tlbprof: phase ")
    need(draws >= 3, f"the line was drawn {draws} times (phases 4 to 6 start after the first second)")
    need(b"\n" not in err.replace(b"\r\n", b"\n").split(b"tlbprof: phase ", 1)[-1].split(CLEAR)[0],
         "the progress line must not end with a newline")
    need(err.endswith(CLEAR), f"the line is not cleared at the end: {err[-120:]!r}")
    need(b"elapsed" in err and b"left" in err, f"no elapsed or time left: {err[:300]!r}")
    # Every drawn line says phase i/N with the same N, and i only grows.

    seen = [(int(a), int(b)) for a, b in re.findall(rb"phase (\d+)/(\d+) ", err)]
    need(seen and len({n for _, n in seen}) == 1 and all(x[0] <= y[0] for x, y in zip(seen, seen[1:])),
         f"phase numbers {seen[:10]}")


# One long phase: 1000 samples of 1 ms or more on one allocation (1 s at least), then more until the 3 s budget
# (a precision it cannot reach): the line must not wait for a phase start that never comes.
LONG = ["--workload", "chase", "--size", "64M", "--pages", "4k", "--controls", "none", "--realloc", "1",
        "--repeat", "1000", "--time-budget", "3", "--precision", "0.000001"]


def test_one_long_phase():
    rc, err, out, seconds = run_on_pty(LONG)
    need(rc in (0, 1), f"long phase: exit {rc}: {err[-300:]!r}")
    print(f"long phase: {seconds:.1f} s")
    lines = re.findall(rb"\r\x1b\[Ktlbprof: phase 1/1 chase/4k/64M/r0, (\d+\.\d) s elapsed", err)
    elapsed = [float(x) for x in lines]
    # The phase lasts its 3 s budget (its 1000 samples alone take 1 s or more): the line, first drawn at 1 s,
    # is redrawn while it runs.
    need(len(elapsed) >= 3, f"one long phase: the line was drawn {len(elapsed)} times: {err[:400]!r}")
    need(all(b > a for a, b in zip(elapsed, elapsed[1:])),
         f"one long phase: the elapsed time should grow with each drawing: {elapsed}")
    # At most four drawings a second: consecutive times are 0.25 s apart or more (0.2 after rounding).
    need(all(b - a >= 0.2 - 1e-9 for a, b in zip(elapsed, elapsed[1:])),
         f"one long phase: drawn more often than 4 times a second: {elapsed}")
    need(err.endswith(CLEAR), f"long phase: the line is not cleared at the end: {err[-120:]!r}")


def test_narrow_terminal():
    """On 44 columns the phase name gives way; i/N, the elapsed time and the time left stay whole."""
    rc, err, _, _ = run_on_pty(RUN, columns=44)
    need(rc in (0, 1), f"narrow pty: exit {rc}")
    lines = [ln for ln in err.split(CLEAR) if ln.startswith(b"tlbprof: ") or ln.startswith(b"phase ")]
    need(lines, f"narrow pty: no progress line: {err[:300]!r}")
    for ln in lines:
        need(len(ln) <= 43, f"narrow pty: {len(ln)} characters on 44 columns: {ln!r}")
        need(re.search(rb"phase \d/6( [^,]+)?, \d+\.\d s elapsed(, about \d+ s left)?$", ln),
             f"narrow pty: i/N, elapsed or time left cut: {ln!r}")
    need(any(ln.endswith(b" s left") for ln in lines), f"narrow pty: no line with the time left: {lines}")


def test_quiet_on_terminal():
    rc, err, out, _ = run_on_pty(RUN + ["--quiet", "--json", os.devnull])
    need(rc in (0, 1), f"--quiet on a pty: exit {rc}")
    need(b"tlbprof: phase" not in err and not out, f"--quiet on a pty printed: {err[:200]!r} {out[:200]!r}")


def test_pipe():
    p = subprocess.run([TLBPROF, *RUN], capture_output=True, timeout=300)
    need(p.returncode in (0, 1), f"pipe run: exit {p.returncode}")
    need(b"tlbprof: phase" not in p.stderr and b"\x1b[" not in p.stderr,
         f"progress written to a pipe: {p.stderr[:200]!r}")


test_terminal()
test_one_long_phase()
test_narrow_terminal()
test_quiet_on_terminal()
test_pipe()
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
