#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The unstable check on saved reports: judged on the median and a second pass, naming the host facts that moved."""
import copy
import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import Failures, validate  # noqa: E402

TLBPROF = sys.argv[1]
DATA = os.environ.get("TLBPROF_TEST_DATA_DIR", os.path.join(os.path.dirname(__file__), "..", "data"))
fail = Failures()


def unstable(doc, tmp, name):
    """Analyse doc (written to tmp/name) and return (exit status, the unstable check or None, stderr)."""
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    p = subprocess.run([TLBPROF, "analyze", path, "--json", "-"], capture_output=True, text=True, timeout=60)
    if p.returncode not in (0, 1):
        return p.returncode, None, p.stderr
    rep = json.loads(p.stdout)
    return p.returncode, next((c for c in rep["analysis"]["checks"] if c["id"] == "unstable"), None), p.stderr


def snapshot(total, steal, scans, collapsed):
    return {"total_ticks": total, "steal_ticks": steal, "full_scans": scans, "pages_collapsed": collapsed,
            "khugepaged_reason": None}


def damon(actions):
    return {"present": True, "reason": None, "kdamonds": 1, "running": 1, "schemes_active": len(actions),
            "actions": actions}


with open(os.path.join(DATA, "vm-chase-16m-run1.json")) as f:
    old = json.load(f)

with tempfile.TemporaryDirectory() as tmp:
    # 1. A report from before the host facts and the second pass: judged on its median, and it says so.
    rc, c, err = unstable(old, tmp, "old.json")
    if not c:
        fail(f"old report: exit {rc}: {err}")
    else:
        if c["status"] != "pass":
            fail(f"a quiet 16M run whose medians are precise should pass: {c['message']}")
        for want in ("no second pass recorded", "host facts not recorded"):
            if want not in c["message"]:
                fail(f"old report: '{want}' missing from: {c['message']}")

    # 2. The host moved: the clock fell 12 %, 8 % stolen, 40 pages collapsed, a DAMON pageout scheme.
    moved = copy.deepcopy(old)
    env = moved["environment"]
    env["core_clock"].update(end_ghz=env["core_clock_ghz"] * 0.88, end_rel_spread=0.01, end_ratio=0.88)
    env["host"] = {"before": snapshot(10000, 100, 3, 200), "after": snapshot(10500, 140, 4, 240),
                   "steal_share": 0.08, "khugepaged_full_scans": 1, "khugepaged_pages_collapsed": 40,
                   "damon_before": damon(["pageout", "stat"]), "damon_after": damon(["pageout", "stat"])}
    try:
        validate(moved, "document")
    except AssertionError as e:
        fail(f"the moved fixture is not a tlbprof.report/1 document: {e}")
    rc, c, err = unstable(moved, tmp, "moved.json")
    if not c:
        fail(f"moved: exit {rc}: {err}")
    else:
        if c["status"] != "warn":
            fail(f"a core clock 12 % off its calibration warns: {c['message']}")
        for want in ("the core clock fell 12 % between calibration and the end", "steal 8 % of the run",
                     "khugepaged collapsed 40 pages during the run", "DAMON scheme pageout active"):
            if want not in c["message"]:
                fail(f"moved: '{want}' missing from: {c['message']}")
        if "DAMON scheme stat" in c["message"]:
            fail(f"a stat scheme only counts, it moves nothing: {c['message']}")
        if abs(c["evidence"].get("core_clock_end_ratio", 0) - 0.88) > 1e-9:
            fail(f"evidence lacks the clock ratio: {c['evidence']}")

    # 3. khugepaged and DAMON absent: "not present", never a zero that looks measured.
    absent = copy.deepcopy(moved)
    env = absent["environment"]
    env["core_clock"].update(end_ratio=1.0, end_ghz=env["core_clock_ghz"])
    for side in ("before", "after"):
        env["host"][side].update(full_scans=None, pages_collapsed=None,
                                 khugepaged_reason="not present: the kernel has no khugepaged/full_scans (no THP)")
        env["host"]["damon_" + side] = {"present": False, "reason": "not present: no /sys/kernel/mm/damon/admin",
                                        "kdamonds": 0, "running": 0, "schemes_active": 0, "actions": []}
    env["host"].update(khugepaged_full_scans=None, khugepaged_pages_collapsed=None)
    env["host"]["after"]["steal_ticks"] = 101
    rc, c, err = unstable(absent, tmp, "absent.json")
    if not c or c["status"] != "pass" or "khugepaged not present" not in c["message"] or \
            "collapsed" in c["message"] or "DAMON" in c["message"]:
        fail(f"absent khugepaged and DAMON: exit {rc}: {c and c['message']} {err}")

    # 4. A second pass 15 % slower than the phase: the run's own interval did not see it; the claim does.
    second = copy.deepcopy(old)
    ph = second["phases"][1]
    med = ph["ns_per_access"]["median"]
    ph["second_pass"] = {"samples": [med * 1.15] * 5, "after_s": 1.2, "reason": None}
    rc, c, err = unstable(second, tmp, "second.json")
    if not c or c["status"] != "warn" or "from 1 second pass, moved +15.0 %" not in c["message"] or \
            ph["name"] not in c["message"]:
        fail(f"second pass 15 % off: exit {rc}: {c and c['message']} {err}")
    # Three passes tagged by sample_passes: their medians spread ±6 %, a host part of t(3) 3.18 times that.
    three = copy.deepcopy(second)
    ph3 = three["phases"][1]
    ph3["second_pass"].update(samples=[med * f for f in (1.10, 1.09, 1.11, 0.95, 0.94, 0.96, 1.05, 1.04, 1.06)],
                              sample_passes=[1, 1, 1, 2, 2, 2, 3, 3, 3], passes_after_s=[1.2, 1.4, 1.6], kept=True)
    rc, c, err = unstable(three, tmp, "three.json")
    if not c or "from 3 second passes" not in c["message"]:
        fail(f"three second passes: exit {rc}: {c and c['message']} {err}")

    # 5. A malformed new field is a bad file naming the field (exit 2), never a silent default.
    bad = copy.deepcopy(moved)
    bad["environment"]["host"]["before"]["full_scans"] = "twelve"
    rc, c, err = unstable(bad, tmp, "bad.json")
    if rc != 2 or "environment.host.before.full_scans" not in err:
        fail(f"malformed full_scans: exit {rc}, stderr {err!r}")
    bad = copy.deepcopy(second)
    bad["phases"][1]["second_pass"]["samples"] = ["x"]
    rc, c, err = unstable(bad, tmp, "bad2.json")
    if rc != 2 or "second_pass.samples[0]" not in err:
        fail(f"malformed second pass: exit {rc}, stderr {err!r}")
    for key, value, field in (("sample_passes", [1, 1, 1, 2, 2, 2, 3, 3, 4], "second_pass.sample_passes[8]"),
                              ("sample_passes", [1, 1, 1, 3, 3, 3, 3, 3, 3], "second_pass.sample_passes[3]"),
                              ("sample_passes", [2, 2, 2, 2, 2, 2, 2, 2, 2], "second_pass.sample_passes[0]"),
                              ("sample_passes", [1, 2], "second_pass.sample_passes: 2 entries for 9 samples"),
                              ("passes_after_s", [1.2, 1.4], "second_pass.passes_after_s: not one time per pass"),
                              ("warmup_passes", [5, 5], "second_pass.warmup_passes: not one count per pass"),
                              ("warmup_passes", [5, 5, -1], "second_pass.warmup_passes[2]")):
        bad = copy.deepcopy(three)
        bad["phases"][1]["second_pass"][key] = value
        rc, c, err = unstable(bad, tmp, "bad3.json")
        if rc != 2 or field not in err:
            fail(f"malformed {key} {value}: exit {rc}, stderr {err!r}")
    bad = copy.deepcopy(three)
    bad["phases"][1]["second_pass"].update(warmup_passes=[5, 9, 6], unsettled=4)
    rc, c, err = unstable(bad, tmp, "bad4.json")
    if rc != 2 or "second_pass.unsettled: not a count from 0 to the 3 passes" not in err:
        fail(f"malformed unsettled: exit {rc}, stderr {err!r}")

    # 6. A fresh short run records the host facts, the end clock and a second pass, and analyze judges it alike.
    out = os.path.join(tmp, "fresh.json")
    p = subprocess.run([TLBPROF, "--pages", "4k", "--size", "2M", "--repeat", "3", "--realloc", "3",
                        "--time-budget", "0.2", "--controls", "none", "--quiet", "--json", out],
                       capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 1):
        fail(f"fresh run: exit {p.returncode}: {p.stderr}")
    else:
        with open(out) as f:
            fresh = json.load(f)
        env = fresh["environment"]
        host = env.get("host")
        if not host or not isinstance(host["before"]["total_ticks"], int) or host["steal_share"] is None:
            fail(f"fresh run: host facts missing: {host}")
        if not (env["core_clock"].get("end_ghz") or 0) > 0 and env["core_clock_ghz"]:
            fail(f"fresh run: no end clock: {env['core_clock']}")
        for side in ("damon_before", "damon_after"):
            d = host and host[side]
            if d and not d["present"] and not (d["reason"] or "").startswith("not present"):
                fail(f"fresh run: DAMON absent without saying so: {d}")
        phase = fresh["phases"][0]
        sp, prec = phase.get("second_pass", {}), phase["precision"]
        if phase["status"] == "ok":
            if len(sp.get("samples", [])) != 9 or sp.get("reason") is not None or \
                    sp.get("sample_passes") != [1, 1, 1, 2, 2, 2, 3, 3, 3]:
                fail(f"fresh run: three second passes of --repeat samples each: {sp}")
            after = sp.get("passes_after_s") or []
            if len(after) != 3 or after != sorted(after) or after[0] != sp["after_s"] or sp.get("kept") is not True:
                fail(f"fresh run: the passes, in order, on the kept allocation: {sp}")
            warm = sp.get("warmup_passes") or []
            if len(warm) != 3 or min(warm) < 2 or not isinstance(sp.get("unsettled"), int) or \
                    not 0 <= sp["unsettled"] <= 3:
                fail(f"fresh run: each pass's warm-up (at least two passes) and the unsettled count: {sp}")
            if prec["between_runs"] is None or prec.get("host") is None or not prec["claimed"] or \
                    abs(prec["claimed"] - math.hypot(prec["reached"] or 0, prec["host"])) > 1e-9 * prec["claimed"]:
                fail(f"fresh run: the claim is its own half-width and the host's part in quadrature: {prec}")
        # The text's ±95% column is the claim the JSON holds, phase by phase.
        text = subprocess.run([TLBPROF, "analyze", out], capture_output=True, text=True, timeout=60).stdout
        for ph in fresh["phases"]:
            row = next((ln.split() for ln in text.splitlines() if ln.startswith(ph["name"] + " ")), None)
            claim = ph["precision"]["claimed"]
            want = f"±{100 * claim:.1f}%" if claim is not None and claim < 1 else \
                f"±{100 * claim:.0f}%" if claim is not None else "n/a"
            if ph["status"] == "ok" and (not row or want not in row):
                fail(f"the text's ±95% for {ph['name']}: {row} against {want}")
        checks = {c["id"]: c for c in fresh["analysis"]["checks"]}
        rc, c, err = unstable(fresh, tmp, "fresh-again.json")
        if not c or (c["status"], c["message"]) != (checks["unstable"]["status"], checks["unstable"]["message"]):
            fail(f"analyze does not reproduce unstable: {c and c['message']} vs {checks['unstable']['message']}")
    # A fixed --iters run takes no second pass and says why.
    p = subprocess.run([TLBPROF, "--pages", "4k", "--size", "1M", "--iters", "20k", "--repeat", "2", "--controls",
                        "none", "--quiet", "--json", out], capture_output=True, text=True, timeout=120)
    if p.returncode in (0, 1):
        with open(out) as f:
            sp = json.load(f)["phases"][0]["second_pass"]
        if sp["samples"] or "--iters auto" not in (sp["reason"] or ""):
            fail(f"fixed --iters: {sp}")
    else:
        fail(f"fixed run: exit {p.returncode}: {p.stderr}")

fail.finish("stability: old reports, host facts that moved or are absent, a second pass, malformed fields, "
            "fresh runs")
