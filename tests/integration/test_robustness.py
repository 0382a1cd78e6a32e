#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Signals, an unprivileged user, and a working set larger than memory: clear outcomes, nothing lost or left behind."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import Failures, validate  # noqa: E402

TLBPROF = sys.argv[1]
fail = Failures()
LONG = ["--pages", "4k,2m", "--size", "64M", "--iters", "20M", "--repeat", "5", "--quiet"]

# 1. SIGINT and SIGTERM: stop at the next safe point, report the finished phases, exit 130, no temp files.
for sig in (signal.SIGINT, signal.SIGTERM):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        proc = subprocess.Popen([TLBPROF, *LONG, "--json", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        time.sleep(1.5)
        proc.send_signal(sig)
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            fail(f"{sig.name}: did not stop within 120 s")
            continue
        if proc.returncode != 130:
            fail(f"{sig.name}: exit {proc.returncode}, want 130: {err!r}")
        if sorted(os.listdir(d)) != ["r.json"]:
            fail(f"{sig.name}: files left: {os.listdir(d)}")
        elif proc.returncode == 130:
            with open(out) as f:
                rep = json.load(f)
            try:
                validate(rep)
            except AssertionError as e:
                fail(f"{sig.name}: partial report invalid: {e}")
                continue
            if rep["interrupted"] is not True or len(rep["phases"]) >= 4:
                fail(f"{sig.name}: interrupted {rep['interrupted']}, {len(rep['phases'])} phases reported")

# 2. A working set larger than memory is refused before anything runs: exit 3, one line, no report.
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "r.json")
    p = subprocess.run([TLBPROF, "--size", "64T", "--json", out], capture_output=True, text=True, timeout=60)
    if p.returncode != 3 or len(p.stderr.strip().splitlines()) != 1 or "MemAvailable" not in p.stderr \
            or os.path.exists(out):
        fail(f"64T working set: exit {p.returncode}, stderr {p.stderr!r}, report written {os.path.exists(out)}")
    # A size of no binary unit and 20 digits: named whole, in bytes (not cut off, no "iB" without a prefix).
    odd = "18446744073709551615"
    p = subprocess.run([TLBPROF, "--size", odd, "--json", out], capture_output=True, text=True, timeout=60)
    if p.returncode != 3 or f"--size '{odd}'" not in p.stderr or not re.search(r"needs \d+B but", p.stderr) \
            or "/" + odd + "/" not in p.stderr or os.path.exists(out):
        fail(f"{odd}-byte working set: exit {p.returncode}, stderr {p.stderr!r}, report written {os.path.exists(out)}")
    # Quoted as typed, not in tlbprof's spelling (976562500K), in a list with another size.
    p = subprocess.run([TLBPROF, "--size", "64M,1000000000000", "--json", out], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 3 or "--size '1000000000000'" not in p.stderr or os.path.exists(out):
        fail(f"1000000000000-byte working set: exit {p.returncode}, stderr {p.stderr!r}")

# 3. As an unprivileged user: the chase and the page faults run; each counter says what it could do.
setpriv = shutil.which("setpriv")
if os.geteuid() != 0 or not setpriv:
    print("SKIP: unprivileged runs need root and setpriv to drop privileges")
else:
    drop = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o1777)
        for args in (["--pages", "4k,2m", "--size", "4M", "--iters", "100k", "--repeat", "2"],
                     ["--workload", "pagefault", "--size", "4M", "--cases", "anon_cold,file_warm", "--processes", "2",
                      "--repeat", "1", "--dir", d]):
            p = subprocess.run(drop + [TLBPROF, *args, "--json", "-", "--quiet"], capture_output=True, text=True,
                               timeout=300)
            if p.returncode not in (0, 1):
                fail(f"unprivileged {args[:2]}: exit {p.returncode}: {p.stderr}")
                continue
            try:
                rep = json.loads(p.stdout)
                validate(rep)
            except (ValueError, AssertionError) as e:
                fail(f"unprivileged {args[:2]}: report invalid: {e}")
                continue
            for c in rep["counters"]:
                if c["status"] not in ("ok", "unsupported", "denied") or (c["status"] != "ok" and not c["reason"]):
                    fail(f"unprivileged: counter {c['name']} {c['status']} {c['reason']!r}")
            denied = [c for c in rep["counters"] if c["status"] == "denied"]
            if denied and not all("perf_event_paranoid" in c["reason"] for c in denied):
                fail(f"a denied counter must say why and how to allow it: {[c['reason'] for c in denied]}")
            for ph in rep["phases"]:
                if ph["status"] != "ok":
                    fail(f"unprivileged {ph['name']}: {ph['status']} {ph['reason']}")
            if args[1] == "pagefault":
                cold = next(x for x in rep["phases"] if x.get("case") == "anon_cold")
                if cold["status"] == "ok" and cold["faults"]["minor"] < 1000:
                    fail(f"unprivileged anon_cold must still count its faults: {cold['faults']}")
        p = subprocess.run(drop + [TLBPROF, "--workload", "pagefault", "--drop-caches"], capture_output=True,
                           text=True, timeout=30)
        if p.returncode != 2 or "--drop-caches" not in p.stderr:
            fail(f"--drop-caches unprivileged: exit {p.returncode} {p.stderr!r}")

fail.finish("robustness checks passed")
