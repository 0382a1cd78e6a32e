#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tlbprof compare: a report against itself, modified copies (slower, a failed check, another kernel, the machine
slower as a whole, other parameters, an interrupted run), page-fault reports, tlbprof run reports, real back-to-back
runs of this VM (tests/data/vm-*: the noise between runs), nothing to judge, bad inputs, and the tlbprof.compare/1
JSON."""
import copy
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import Failures, command_schema_errors  # noqa: E402

TLBPROF = sys.argv[1]
BENCHMARKS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(TLBPROF), "examples", "benchmarks")
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.environ.get("TLBPROF_TEST_DATA_DIR", os.path.join(SRC, "tests", "data"))
EXAMPLE = os.path.join(SRC, "examples", "reports", "kvm-intel-no-pmu.json")
PAGEFAULT = os.path.join(SRC, "tests", "fuzz", "corpus", "report", "pagefault.json")
VERDICTS = {"insufficient_samples", "no_change", "noise", "better_within_threshold", "worse_within_threshold",
            "better", "regression", "not_comparable", "machine_slower", "machine_faster", "smaller_no_phase_slower",
            "too_few_runs"}
JUDGED = VERDICTS - {"insufficient_samples", "not_comparable", "too_few_runs"}
fail = Failures()


def validate_compare(doc):
    """The shipped schema (compare.schema.json), then the relations between the fields scripts rely on; raises
    AssertionError."""
    errs = command_schema_errors(doc, "compare")
    assert not errs, f"not a valid tlbprof.compare/1 document: {errs[:3]}"
    assert doc["schema"] == "tlbprof.compare/1", doc.get("schema")
    assert doc["tool"]["name"] == "tlbprof" and isinstance(doc["command"], list)
    for side in ("base", "new"):
        assert isinstance(doc[side]["path"], str) and doc[side]["verdict"] in ("ok", "warn", "fail"), doc[side]
    m = doc["method"]
    assert m["alpha"] == 0.01 and m["min_samples"] == 5 and m["threshold_pct"] > 0, m
    for e in doc["environment_differences"]:
        assert set(e) == {"field", "base", "new"} and e["base"] != e["new"], e
    for p in doc["phases"]:
        assert p["match"] in ("matched", "removed", "added") and \
            p["metric"] in ("ns_per_access", "ns_per_page", "wall_ns_per_occurrence"), p
        keys = ("ns",) + (("ns_per_fault",) if p["ns_per_fault"] is not None else ()) + \
            (("against_control",) if p["against_control"] is not None else ())
        for key in keys:
            s = p[key]
            assert s["verdict"] in VERDICTS, s
            for k in ("base", "new", "change_pct", "p_value", "noise_floor_pct"):
                assert s[k] is None or isinstance(s[k], (int, float)), (k, s)
            assert s["interval_pct"] is None or (len(s["interval_pct"]) == 2 and
                                                 s["interval_pct"][0] <= s["interval_pct"][1]), s
            if s["p_value"] is not None:
                assert 0 <= s["p_value"] <= 1, s
            assert isinstance(s["clusters"]["base"], int) and isinstance(s["clusters"]["new"], int), s
        if p["against_control"] is not None:
            assert isinstance(p["against_control"]["control"], str) and not p["control"], p
        assert p["verdict"] in VERDICTS and isinstance(p["control"], bool), p
        assert isinstance(p["regression"], bool) and p["regression"] == (p["verdict"] == "regression")
        assert not p["control"] or p["verdict"] not in ("regression", "better"), p
        assert isinstance(p["checked_against_control"], bool) and isinstance(p["control_inconclusive"], bool), p
        for c in p["counters_per_access"]:
            assert isinstance(c["metric"], str), c
        for c in p["parameters_differ"]:
            assert set(c) == {"param", "base", "new"} and c["base"] != c["new"], c
    for c in doc["comparisons"]:
        assert c["speedup"]["verdict"] in VERDICTS and isinstance(c["regression"], bool), c
    for c in doc["checks"]:
        assert isinstance(c["id"], str) and isinstance(c["worse"], bool), c
    regressions = sum(p["regression"] for p in doc["phases"]) + sum(c["regression"] for c in doc["comparisons"])
    assert doc["regressions"] == regressions, (doc["regressions"], regressions)
    assert doc["checks_worse"] == sum(c["worse"] for c in doc["checks"])
    j = doc["judged"]
    assert j["phases"] == sum(p["match"] == "matched" and p["verdict"] in JUDGED for p in doc["phases"]), j
    assert j["phases_total"] == len(doc["phases"]) and j["comparisons_total"] == len(doc["comparisons"]), j
    assert j["comparisons"] == sum(c["match"] == "matched" and c["speedup"]["verdict"] in JUDGED
                                   for c in doc["comparisons"]), j
    assert doc["machine_shifts"] == sum(p["verdict"] in ("machine_slower", "machine_faster") for p in doc["phases"])
    assert set(doc["interrupted"]) == {"base", "new"} and doc["base"]["interrupted"] == doc["interrupted"]["base"]
    assert doc["phases_parameters_differ"] == sum(bool(p["parameters_differ"]) for p in doc["phases"])
    assert doc["verdict"] in ("ok", "regression", "checks_worse", "nothing_judged")
    assert (doc["verdict"] == "nothing_judged") == (j["phases"] + j["comparisons"] == 0)
    assert doc["exit_status"] == (3 if doc["verdict"] == "nothing_judged" else
                                  1 if doc["verdict"] in ("regression", "checks_worse") and doc["fail_on"] != "never"
                                  else 0), doc["exit_status"]


def compare(base, new, *extra, expect=(0,), what=""):
    """Run compare with the JSON on stdout; return (json, process) or (None, process) after a failure."""
    p = subprocess.run([TLBPROF, "compare", base, new, "--json", "-", *extra], capture_output=True, text=True,
                       timeout=120)
    if p.returncode not in expect:
        fail(f"{what or 'compare'}: exit {p.returncode}, want {expect}: {p.stderr[-600:]}")
        return None, p
    try:
        doc = json.loads(p.stdout)
        validate_compare(doc)
    except (ValueError, AssertionError, KeyError, TypeError) as e:
        fail(f"{what}: not a valid comparison: {e!r}")
        return None, p
    return doc, p


def analysed(path):
    """The report at path as tlbprof analyze recomputes it."""
    p = subprocess.run([TLBPROF, "analyze", path, "--json", "-", "--quiet", "--fail-on", "never"], capture_output=True,
                       text=True, timeout=60)
    return json.loads(p.stdout)


def phase(doc, name):
    return next((p for p in doc["phases"] if p["name"] == name), None)


def check(doc, cid):
    return next((c for c in doc["checks"] if c["id"] == cid), None)


with open(EXAMPLE) as f:
    example = json.load(f)


def write(d, name, fn):
    doc = copy.deepcopy(example) if not isinstance(fn, dict) else fn
    if callable(fn):
        fn(doc)
    path = os.path.join(d, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def scale(name, factor):
    def fn(doc):
        ph = next(p for p in doc["phases"] if p["name"] == name)
        ph["ns_per_access"]["samples"] = [v * factor for v in ph["ns_per_access"]["samples"]]
    return fn


TWO_M = "chase/2m/256M/r0"
with tempfile.TemporaryDirectory() as d:
    # 1. A report against itself: exit 0, nothing changed, nothing to warn about.
    doc, p = compare(EXAMPLE, EXAMPLE, what="itself")
    if doc:
        if doc["regressions"] or doc["checks_worse"] or doc["environment_differences"] or doc["verdict"] != "ok":
            fail(f"itself: {doc['regressions']} regressions, {doc['checks_worse']} checks worse, "
                 f"{doc['environment_differences']}")
        if len(doc["phases"]) != 3 or any(p["match"] != "matched" or p["ns"]["verdict"] != "no_change" or
                                          p["ns"]["change_pct"] != 0 or p["ns"]["p_value"] != 1
                                          for p in doc["phases"]):
            fail(f"itself: every phase unchanged with p = 1: {[(p['name'], p['ns']) for p in doc['phases']]}")
        if [c["speedup"]["verdict"] for c in doc["comparisons"]] != ["no_change"]:
            fail(f"itself: the 4k -> 2m speedup: {doc['comparisons']}")
        if any(c["changed"] for c in doc["checks"]) or len(doc["checks"]) < 10:
            fail("itself: no check changes")
        if "no regression" not in p.stderr or "phase" not in p.stderr:
            fail(f"itself: with --json - the table goes to stderr: {p.stderr[:300]!r}")
    p = subprocess.run([TLBPROF, "compare", EXAMPLE, EXAMPLE], capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or "no significant change" not in p.stdout or p.stderr:
        fail(f"itself, table: exit {p.returncode}, {p.stdout[:300]!r} {p.stderr!r}")
    # Fixtures with one sample a phase: insufficient samples, never a regression, even when 20 % slower.
    fixture = os.path.join(DATA, "cloud-xeon-128m.json")
    with open(fixture) as f:
        fx = json.load(f)
    fx["phases"][1]["ns_per_access"]["samples"] = [v * 1.2 for v in fx["phases"][1]["ns_per_access"]["samples"]]
    # Nothing judged is not "no regression": exit 3, and the result line says how many phases were judged.
    doc, p = compare(fixture, write(d, "fx-slow", fx), expect=(3,), what="one-sample fixture")
    if doc and [p["ns"]["verdict"] for p in doc["phases"]] != ["insufficient_samples"] * 2:
        fail(f"one sample a phase: {[p['ns']['verdict'] for p in doc['phases']]}")
    if doc and (doc["verdict"] != "nothing_judged" or doc["judged"]["phases"] != 0 or
                doc["judged"]["phases_insufficient"] != 2):
        fail(f"one sample a phase: verdict {doc['verdict']}, judged {doc['judged']}")
    if "0 of 2 phases and 0 of 1 page-size comparison judged" not in p.stderr or "no regression" in p.stderr or \
            "exit 3" not in p.stderr:
        fail(f"one sample a phase: the result line says nothing was judged: {p.stderr[-400:]!r}")
    if doc and doc["comparisons"][0]["ns_per_tlb_miss"]["base"] is None:
        fail(f"the fixture's comparison has ns per dTLB miss: {doc['comparisons'][0]}")

    # 2. One phase 20 % slower: exit 1, that phase and the speedup flagged.
    slow = write(d, "slow", scale(TWO_M, 1.2))
    doc, p = compare(EXAMPLE, slow, expect=(1,), what="20 % slower")
    if doc:
        ph = phase(doc, TWO_M)
        if not ph or not ph["regression"] or abs(ph["ns"]["change_pct"] - 20) > 1e-6 or ph["ns"]["p_value"] >= 0.01:
            fail(f"20 % slower: {ph}")
        elif not (ph["ns"]["interval_pct"][0] > 5 and ph["ns"]["interval_pct"][0] <= 20 <= ph["ns"]["interval_pct"][1]):
            fail(f"20 % slower: the interval {ph['ns']['interval_pct']} should hold +20 % and exclude +5 %")
        others = [p for p in doc["phases"] if p["name"] != TWO_M]
        if any(p["regression"] for p in others):
            fail(f"only {TWO_M} is slower: {[p['name'] for p in others if p['regression']]}")
        sp = doc["comparisons"][0]
        if not sp["regression"] or sp["speedup"]["verdict"] != "regression" or sp["speedup"]["change_pct"] > -15:
            fail(f"the 4k -> 2m speedup shrank by a sixth: {sp}")
        if doc["verdict"] != "regression" or doc["regressions"] != 2:
            fail(f"20 % slower: verdict {doc['verdict']}, {doc['regressions']} regressions")
        if "slower (regression)" not in p.stderr or "2 regressions" not in p.stderr:
            fail(f"the table names the regression: {p.stderr[-800:]!r}")
    # ... a 25 % threshold lets it pass, --fail-on never too; and the other way round it is faster.
    compare(EXAMPLE, slow, "--threshold", "25", "--fail-on", "never", expect=(0,), what="threshold 25")
    doc, _ = compare(EXAMPLE, slow, "--threshold", "25", expect=(0, 1), what="threshold 25, fail-on warn")
    if doc and (doc["regressions"] or phase(doc, TWO_M)["ns"]["verdict"] != "worse_within_threshold"):
        fail(f"+20 % within a 25 % threshold: {phase(doc, TWO_M)['ns']}")
    compare(EXAMPLE, slow, "--fail-on", "never", expect=(0,), what="fail-on never")
    doc, _ = compare(slow, EXAMPLE, expect=(0,), what="20 % faster")
    if doc and (phase(doc, TWO_M)["ns"]["verdict"] != "better" or doc["improvements"] < 1):
        fail(f"20 % faster: {phase(doc, TWO_M)['ns']}")

    # 3. 2 % slower: within the 5 % threshold, exit 0.
    doc, _ = compare(EXAMPLE, write(d, "slow2", scale(TWO_M, 1.02)), expect=(0,), what="2 % slower")
    if doc and (phase(doc, TWO_M)["regression"] or phase(doc, TWO_M)["ns"]["verdict"] not in
                ("worse_within_threshold", "no_change")):
        fail(f"2 % slower: {phase(doc, TWO_M)['ns']}")

    # 4. A check that went from pass to fail: flagged, exit 1 (unless --fail-on never).
    def self_check_fails(doc):
        doc["phases"][1]["self_checks"][0]["status"] = "fail"
    broken = write(d, "selfcheck", self_check_fails)
    doc, p = compare(EXAMPLE, broken, expect=(1,), what="failed self-check")
    if doc:
        c = check(doc, "workload_self_checks")
        if not c or c["base"] != "pass" or c["new"] != "fail" or not c["worse"] or not c["changed"]:
            fail(f"workload_self_checks pass -> fail: {c}")
        if doc["verdict"] != "checks_worse" or doc["regressions"] or doc["checks_now_failing"] != 1:
            fail(f"a worse check, no regression: {doc['verdict']} {doc['regressions']}")
        if "workload_self_checks" not in p.stderr or "worse" not in p.stderr:
            fail(f"the table names the check: {p.stderr[-600:]!r}")
    compare(EXAMPLE, broken, "--fail-on", "fail", expect=(1,), what="fail-on fail, a check that fails now")
    compare(EXAMPLE, broken, "--fail-on", "never", expect=(0,), what="fail-on never")
    compare(broken, EXAMPLE, expect=(0,), what="a check that got better")

    # A check that went from pass to warn: flagged (listed, JSON), but by default (--fail-on fail) only a check that
    # now fails makes the exit status 1; --fail-on warn opts in.
    def migrated(doc):
        doc["phases"][1]["counters"]["cpu-migrations"]["value"] = 5
        doc["phases"][1]["counters"]["cpu-migrations"]["raw"] = 5
    moved = write(d, "migrated", migrated)
    doc, p = compare(EXAMPLE, moved, expect=(0,), what="pass -> warn")
    if doc:
        c = check(doc, "cpu_migrations")
        if not c or c["base"] != "pass" or c["new"] != "warn" or not c["worse"]:
            fail(f"cpu_migrations pass -> warn: {c}")
        if doc["checks_worse"] != 1 or doc["checks_now_failing"] != 0 or doc["fail_on"] != "fail":
            fail(f"pass -> warn: flagged but not failing: {doc['checks_worse']} {doc['checks_now_failing']}")
        if "1 check worse: cpu_migrations" not in p.stderr or "passes, exit 0" not in p.stderr:
            fail(f"pass -> warn: the result line lists the check: {p.stderr[-400:]!r}")
    compare(EXAMPLE, moved, "--fail-on", "warn", expect=(1,), what="pass -> warn at --fail-on warn")
    if doc:
        rate = next((r for r in phase(doc, "chase/4k/256M/r0")["counters_per_access"]
                     if r["metric"] == "cpu_migrations"), None)
        if not rate or rate["base"] != 0 or not rate["new"] > 0 or rate["change_pct"] is not None:
            fail(f"cpu migrations per access 0 -> more: {rate}")

    # 5. Another environment: warnings, never a failure by themselves.
    def other_machine(doc):
        doc["environment"]["kernel"] = "Linux 5.10.0-test"
        doc["environment"]["thp"]["enabled"] = "always"
        doc["environment"]["hypervisor"] = None
        doc["environment"]["core_clock_ghz"] *= 1.2
        doc["environment"]["hugepages"]["2M"]["nr"] = 512
    doc, p = compare(EXAMPLE, write(d, "machine", other_machine), expect=(0,), what="other machine")
    if doc:
        fields = [e["field"] for e in doc["environment_differences"]]
        if fields != ["kernel", "thp.enabled", "hypervisor", "core_clock_ghz", "hugepages.2M"]:
            fail(f"environment differences: {fields}")
        k = doc["environment_differences"][0] if fields else {}
        if k.get("new") != "Linux 5.10.0-test" or not k.get("base", "").startswith("Linux 6."):
            fail(f"kernel difference: {k}")
        if "warning: the environments differ" not in p.stderr or "Linux 5.10.0-test" not in p.stderr:
            fail(f"the table warns: {p.stderr[:600]!r}")
    # A clock within 5 % is the same machine.
    doc, _ = compare(EXAMPLE, write(d, "clock", lambda x: x["environment"].update(
        core_clock_ghz=x["environment"]["core_clock_ghz"] * 1.03)), what="clock +3 %")
    if doc and doc["environment_differences"]:
        fail(f"a 3 % clock difference is noise: {doc['environment_differences']}")

    # 6. Phases in one report only; a phase that failed in the new one.
    def drop_and_add(doc):
        extra = copy.deepcopy(doc["phases"][2])
        extra["name"] = "chase/2m/512M/r0"
        doc["phases"] = [doc["phases"][0], doc["phases"][2], extra]
    doc, _ = compare(EXAMPLE, write(d, "reshaped", drop_and_add), expect=(0, 1), what="reshaped")
    if doc:
        got = [(p["name"], p["match"]) for p in doc["phases"]]
        want = [("chase/4k:packed/256M/r0", "matched"), ("chase/4k/256M/r0", "removed"), (TWO_M, "matched"),
                ("chase/2m/512M/r0", "added")]
        if got != want:
            fail(f"matching by name: {got}")
        if doc["comparisons"] and doc["comparisons"][0]["match"] != "removed":
            fail(f"the 4k -> 2m comparison exists only in base: {doc['comparisons']}")

    def failed_phase(doc):
        ph = doc["phases"][2]
        ph["status"] = "failed"
        ph["reason"] = "THP not granted"
    doc, p = compare(EXAMPLE, write(d, "failed", failed_phase), expect=(1,), what="failed phase")
    if doc:
        ph = phase(doc, TWO_M)
        if ph["ns"]["verdict"] != "not_comparable" or ph["status"] != {"base": "ok", "new": "failed"}:
            fail(f"a failed phase is not comparable: {ph['status']} {ph['ns']['verdict']}")
        if not check(doc, "phases_completed")["worse"]:
            fail("phases_completed got worse")

    # 6b. The machine slower as a whole (every phase and the packed control 25 % slower): the phases moved with their
    # control, which ran next to them, so it is the machine, not translation: flagged, exit 0.
    def machine_slower(doc):
        for ph in doc["phases"]:
            ph["ns_per_access"]["samples"] = [v * 1.25 for v in ph["ns_per_access"]["samples"]]
    doc, p = compare(EXAMPLE, write(d, "machine-slower", machine_slower), expect=(0,), what="machine slower")
    if doc:
        got = [(p["name"], p["ns"]["verdict"], p["verdict"]) for p in doc["phases"]]
        if got != [(n, "regression", "machine_slower") for n in ("chase/4k:packed/256M/r0", "chase/4k/256M/r0",
                                                                  TWO_M)]:
            fail(f"machine slower: {got}")
        ctl = phase(doc, TWO_M)["against_control"]
        if not ctl or ctl["control"] != "chase/4k:packed/256M/r0" or abs(ctl["change_pct"]) > 1e-6:
            fail(f"machine slower: 2m against its control unchanged: {ctl}")
        if doc["regressions"] or doc["machine_shifts"] != 3 or "moved with their packed controls" not in p.stderr:
            fail(f"machine slower: {doc['regressions']} regressions, {doc['machine_shifts']} shifts, "
                 f"{p.stderr[-300:]!r}")

    # A smaller huge-page speedup with every phase as fast or faster (4k 20 % faster): reported, not a regression.
    doc, p = compare(EXAMPLE, write(d, "fast4k", scale("chase/4k/256M/r0", 0.8)), expect=(0,), what="4k faster")
    if doc:
        sp = doc["comparisons"][0]["speedup"]
        if sp["verdict"] != "smaller_no_phase_slower" or sp["change_pct"] > -15 or doc["regressions"] or \
                doc["speedups_uncounted"] != 1 or doc["improvements"] < 1:
            fail(f"4k faster: the speedup {sp['verdict']} {sp['change_pct']}, {doc['regressions']} regressions")
        if "smaller speedup with no phase slower" not in p.stderr:
            fail(f"4k faster: the result line mentions the speedup: {p.stderr[-300:]!r}")

    # An exact +10 % at --threshold 10 is not beyond it (a floating-point tolerance); +10.5 % is.
    doc, _ = compare(EXAMPLE, write(d, "ten", scale(TWO_M, 1.1)), "--threshold", "10", expect=(0,), what="+10 %")
    if doc and phase(doc, TWO_M)["verdict"] != "worse_within_threshold":
        fail(f"+10 % at a 10 % threshold: {phase(doc, TWO_M)['verdict']} {phase(doc, TWO_M)['ns']['change_pct']}")
    compare(EXAMPLE, write(d, "ten5", scale(TWO_M, 1.105)), "--threshold", "10", expect=(1,), what="+10.5 %")
    # --threshold given twice: the last one counts (tlbprof-compare(1)).
    compare(EXAMPLE, slow, "--threshold", "50", "--threshold", "5", expect=(1,), what="--threshold twice")

    # Phases measured with other parameters, and an interrupted run: warnings, in the JSON too.
    def reparametrised(doc):
        params = doc["phases"][1]["params"]
        params.update(layout="aligned", stride_bytes=64, cpu=2, iterations_mode="fixed")
        doc["interrupted"] = True
    doc, p = compare(EXAMPLE, write(d, "params", reparametrised), expect=(0, 1), what="other parameters")
    if doc:
        got = [(c["param"], c["base"], c["new"]) for c in phase(doc, "chase/4k/256M/r0")["parameters_differ"]]
        want = [("layout", "colored", "aligned"), ("stride_bytes", "4096", "64"), ("iterations_mode", "auto", "fixed"),
                ("cpu", "not pinned", "2")]
        if got != want or doc["phases_parameters_differ"] != 1 or phase(doc, TWO_M)["parameters_differ"]:
            fail(f"parameters differ: {got}")
        if "measured with other parameters" not in p.stderr or "chase/4k/256M/r0: layout" not in p.stderr:
            fail(f"the table warns about parameters: {p.stderr[:900]!r}")
        if doc["interrupted"] != {"base": False, "new": True} or "the new run was interrupted" not in p.stderr:
            fail(f"interrupted: {doc['interrupted']} {p.stderr[:900]!r}")

    # No phase in common: nothing judged, exit 3.
    doc, p = compare(EXAMPLE, PAGEFAULT, expect=(3,), what="no phase in common")
    if doc and (doc["judged"]["phases"] or doc["verdict"] != "nothing_judged" or
                any(p["match"] == "matched" for p in doc["phases"])):
        fail(f"no phase in common: {doc['judged']} {doc['verdict']}")

    # 7. Page faults: ns per page from the samples, ns per fault next to it.
    with open(PAGEFAULT) as f:
        pf = json.load(f)
    for ph in pf["phases"]:
        fs = ph["fault_samples"][0]
        ph["fault_samples"] = [dict(fs, elapsed_ns=fs["elapsed_ns"] * (1 + 0.02 * math.sin(k))) for k in range(8)]
        ph["ns_per_access"]["samples"] = [s["elapsed_ns"] / s["pages"] for s in ph["fault_samples"]]
    pf_base = write(d, "pf-base", pf)
    pf_slow = copy.deepcopy(pf)
    ph = pf_slow["phases"][0]
    for s in ph["fault_samples"]:
        s["elapsed_ns"] *= 1.3
    ph["ns_per_access"]["samples"] = [s["elapsed_ns"] / s["pages"] for s in ph["fault_samples"]]
    doc, _ = compare(pf_base, write(d, "pf-slow", pf_slow), expect=(1,), what="slower page faults")
    if doc:
        cold = phase(doc, "pagefault/4k/1M/anon_cold/r0")
        if cold["metric"] != "ns_per_page" or cold["ns"]["verdict"] != "regression" or \
                abs(cold["ns"]["change_pct"] - 30) > 1e-6:
            fail(f"4 KiB cold faults 30 % slower per page: {cold['ns']}")
        if not cold["ns_per_fault"] or cold["ns_per_fault"]["verdict"] != "regression" or \
                abs(cold["ns_per_fault"]["change_pct"] - 30) > 1e-6:
            fail(f"... and per fault: {cold['ns_per_fault']}")
        warm = phase(doc, "pagefault/4k/1M/file_warm/r0")
        if warm["ns"]["verdict"] != "no_change" or warm["ns_per_fault"]["verdict"] != "no_change":
            fail(f"file_warm unchanged: {warm['ns']['verdict']} {warm['ns_per_fault']['verdict']}")
    doc, _ = compare(PAGEFAULT, PAGEFAULT, expect=(3,), what="page faults, one sample")
    if doc and {p["ns"]["verdict"] for p in doc["phases"]} != {"insufficient_samples"}:
        fail(f"one fault sample a phase: {[p['ns']['verdict'] for p in doc['phases']]}")

    # 8. tlbprof run reports: phases with declared accesses compare per access; a phase that declared none
    # compares its wall time per occurrence, and never against a phase measured per access.
    run_base = os.path.join(d, "run-base.json")
    p = subprocess.run([TLBPROF, "run", "--quiet", "--fail-on", "never", "--json", run_base, "--",
                        os.path.join(BENCHMARKS, "example-correct"), "8"], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"tlbprof run example-correct: exit {p.returncode} {p.stderr[-400:]}")
    else:
        with open(run_base) as f:
            run = json.load(f)
        name = run["phases"][0]["name"]
        ph = run["phases"][0]
        ph["ns_per_access"] = None
        ph["cycles_per_access"] = None
        ph.pop("sample_allocations", None)
        ph["declared"].pop("accesses", None)
        wall_base = write(d, "wall-base", run)
        walls = ph["declared"]["wall_ns"]
        # Every occurrence 1.5x the slowest of the base: completely separated, the smallest exact p (2/252).
        ph["declared"]["wall_ns"] = [max(walls) * 1.5 * (1 + 0.01 * k) for k in range(len(walls))]
        doc, _ = compare(wall_base, write(d, "wall-slow", run), expect=(1,), what="run: slower wall time")
        if doc:
            wp = phase(doc, name)
            if wp["metric"] != "wall_ns_per_occurrence" or wp["ns"]["verdict"] != "regression" or \
                    wp["ns"]["n_base"] != len(walls):
                fail(f"run: wall time per occurrence: {wp['metric']} {wp['ns']}")
        doc, _ = compare(run_base, wall_base, expect=(0, 1, 3), what="run: per access against wall time")
        if doc:
            wp = phase(doc, name)
            if wp["metric"] != "ns_per_access" or wp["ns"]["verdict"] != "not_comparable" or \
                    wp["ns"]["new"] is not None:
                fail(f"run: a phase measured differently is not comparable: {wp['metric']} {wp['ns']}")
        doc, _ = compare(run_base, run_base, expect=(0, 3), what="run: itself")
        if doc and any(p["ns"]["verdict"] not in ("no_change", "insufficient_samples") for p in doc["phases"]):
            fail(f"run: itself: {[(p['name'], p['ns']['verdict']) for p in doc['phases']]}")
        # The benchmark rebuilt -O0: build_optimised (applied to both sides, as analyze does) goes pass -> warn.
        with open(run_base) as f:
            run = json.load(f)
        run["target"]["binary"].update(opt_level="-O0", opt_levels="-O0")
        doc, p = compare(run_base, write(d, "run-O0", run), expect=(0, 3), what="run: built -O0")
        if doc:
            c = check(doc, "build_optimised")
            if not c or c["base"] != "pass" or c["new"] != "warn" or not c["worse"]:
                fail(f"run: build_optimised pass -> warn: {c}")
            elif "build_optimised" not in p.stderr:
                fail(f"run: the table lists build_optimised: {p.stderr[-500:]!r}")

    # 9. --json FILE: written whole, parses; the table on stdout.
    out = os.path.join(d, "diff.json")
    p = subprocess.run([TLBPROF, "compare", EXAMPLE, slow, "--json", out], capture_output=True, text=True, timeout=60)
    try:
        with open(out) as f:
            validate_compare(json.load(f))
        if p.returncode != 1 or "slower (regression)" not in p.stdout:
            fail(f"--json FILE: exit {p.returncode}, table {p.stdout[:200]!r}")
    except (OSError, ValueError, AssertionError, KeyError) as e:
        fail(f"--json FILE: {e!r}")
    p = subprocess.run([TLBPROF, "compare", EXAMPLE, EXAMPLE, "--quiet", "--json", out], capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 0 or p.stdout or p.stderr:
        fail(f"--quiet --json FILE: exit {p.returncode} {p.stdout!r} {p.stderr!r}")

    # 10. Bad inputs: exit 2, one line naming the file (and the field), nothing written.
    text = json.dumps(example)

    def mutated(fn):
        x = json.loads(text)
        fn(x)
        return json.dumps(x)
    BAD = {
        "truncated": (text[: len(text) // 2], "not valid JSON"),
        "not-json": ("hello", "not valid JSON"),
        "schema-2": (mutated(lambda x: x.update(schema="tlbprof.report/2")), "schema"),
        "compare-schema": (json.dumps({"schema": "tlbprof.compare/1"}), "schema"),
        "sample-string": (mutated(lambda x: x["phases"][1]["ns_per_access"].update(samples=["fast"])),
                          "phases[1].ns_per_access.samples[0]"),
        "no-environment": (mutated(lambda x: x.pop("environment")), "environment"),
        "no-params": (mutated(lambda x: x["phases"][0].pop("params")), "phases[0].params"),
    }
    good = write(d, "good", lambda x: None)
    for name, (body, field) in BAD.items():
        path = os.path.join(d, "bad-" + name + ".json")
        with open(path, "w") as f:
            f.write(body)
        for args in ([path, good], [good, path]):
            out = os.path.join(d, "out.json")
            p = subprocess.run([TLBPROF, "compare", *args, "--json", out], capture_output=True, text=True, timeout=30)
            lines = p.stderr.strip().splitlines()
            if p.returncode != 2 or len(lines) != 1 or path not in lines[0] or field not in lines[0] or \
                    os.path.exists(out) or p.stdout:
                fail(f"bad report '{name}' as {'base' if args[0] == path else 'new'}: exit {p.returncode}, "
                     f"stderr {p.stderr!r}, wrote {os.path.exists(out)}")
    USAGE = [
        (["compare", good], "give two reports"),
        (["compare", good, good, good], "unexpected argument"),
        (["compare", good, os.path.join(d, "missing.json")], "missing.json"),
        (["compare", good, good, "--threshold", "0"], "--threshold '0'"),
        (["compare", good, good, "--threshold", "1000"], "--threshold '1000'"),
        (["compare", good, good, "--threshold", "five"], "--threshold 'five'"),
        (["compare", good, good, "--threshold", "-3"], "--threshold '-3'"),
        (["compare", good, good, "--fail-on", "sometimes"], "--fail-on 'sometimes'"),
        (["compare", good, good, "--pages", "4k"], "'--pages' applies only to measuring"),
    ]
    for args, text_has in USAGE:
        out = os.path.join(d, "out.json")
        p = subprocess.run([TLBPROF, *args, "--json", out], capture_output=True, text=True, timeout=30)
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or len(lines) != 1 or text_has not in lines[0] or os.path.exists(out) or p.stdout:
            fail(f"{args[3:] or args}: exit {p.returncode}, stderr {p.stderr!r}")
    p = subprocess.run([TLBPROF, "compare", good, good, "--json", os.path.join(d, "no", "dir.json")],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 4 or len(p.stderr.strip().splitlines()) != 1:
        fail(f"--json into a missing directory: exit {p.returncode} {p.stderr!r}")
    p = subprocess.run([TLBPROF, "compare", "--help"], capture_output=True, text=True, timeout=30)
    if p.returncode != 0 or "--threshold" not in p.stdout or "BASE.json NEW.json" not in p.stdout:
        fail(f"compare --help: {p.returncode} {p.stdout[:200]!r}")
    p = subprocess.run([TLBPROF, "--help"], capture_output=True, text=True, timeout=30)
    if "compare" not in p.stdout:
        fail("tlbprof --help lists compare")

    # 11. Two real runs of this tlbprof compare cleanly (the verdict is the machine's to decide).
    runs = []
    for i in range(2):
        path = os.path.join(d, f"run{i}.json")
        p = subprocess.run([TLBPROF, "--pages", "4k", "--size", "4M", "--iters", "100k", "--repeat", "5",
                            "--realloc", "1", "--json", path, "--quiet"], capture_output=True, text=True, timeout=120)
        if p.returncode not in (0, 1):
            fail(f"run {i}: exit {p.returncode} {p.stderr}")
        runs.append(path)
    if all(os.path.exists(r) for r in runs):
        doc, _ = compare(runs[0], runs[1], expect=(0, 1), what="two real runs")
        if doc and [p["ns"]["n_base"] for p in doc["phases"]] != [5] * len(doc["phases"]):
            fail(f"two real runs: five samples a phase: {[p['ns']['n_base'] for p in doc['phases']]}")

# 12. Real back-to-back runs of identical code on this VM (tests/data/vm-*, taken one after the other with
# `tlbprof --size 16M` and `tlbprof --workload pagefault --size 32M --processes 2`). They differ by more than their
# own samples spread: the verdicts must not call that a regression, and a real +20 % must still be caught.
def scaled_copy(path, name, factor, controls=False):
    with open(path) as f:
        doc = json.load(f)
    for ph in doc["phases"]:
        if ph.get("role") == "control" and not controls:
            continue
        ph["ns_per_access"]["samples"] = [v * factor for v in ph["ns_per_access"]["samples"]]
        for s in ph.get("fault_samples") or []:
            s["elapsed_ns"] *= factor
    return write(d, name, doc)


with tempfile.TemporaryDirectory() as d:
    c1, c2 = (os.path.join(DATA, f"vm-chase-16m-run{i}.json") for i in (1, 2))
    # The second run found the machine 18 % slower: its packed control too, so every phase moved with it.
    doc, p = compare(c1, c2, expect=(0,), what="real chase runs")
    if doc:
        got = {p["name"]: (p["ns"]["verdict"], p["verdict"]) for p in doc["phases"]}
        if got != {"chase/4k:packed/16M/r0": ("regression", "machine_slower"),
                   "chase/4k/16M/r0": ("regression", "machine_slower"),
                   "chase/2m/16M/r0": ("regression", "machine_slower")}:
            fail(f"real chase runs: {got}")
        if any(p["ns"]["clusters"] != {"base": 3, "new": 3} for p in doc["phases"]):
            fail(f"real chase runs: three allocations a side: {[p['ns']['clusters'] for p in doc['phases']]}")
        # Each report's own interval of its speedup, as its summary gives it, comes along with the pair.
        for pair in doc["comparisons"]:
            for side, path in (("base", c1), ("new", c2)):
                ci = pair["speedup_interval"][side]
                own = analysed(path)["analysis"]["comparisons"][0]
                if not ci or not ci["comparable"] or not ci["lo"] <= pair["speedup"][side] <= ci["hi"] or \
                        ci["lo"] != own["speedup_interval"]["lo"] or ci["hi"] != own["speedup_interval"]["hi"]:
                    fail(f"real chase runs: the {side} speedup's own interval: {ci}, the report's "
                         f"{own['speedup_interval']}")
    # Translation 20 % slower in a copy of the second run (the control as measured): caught.
    doc, _ = compare(c1, scaled_copy(c2, "c2-slow", 1.2), expect=(1,), what="real chase runs, +20 %")
    if doc and sorted(p["name"] for p in doc["phases"] if p["regression"]) != ["chase/2m/16M/r0", "chase/4k/16M/r0"]:
        fail(f"real chase runs +20 %: {[(p['name'], p['verdict']) for p in doc['phases']]}")
    # Everything 20 % slower, the control included, is what the machine did between the two runs: not counted.
    doc, _ = compare(c1, scaled_copy(c2, "c2-all", 1.2, controls=True), expect=(0,), what="real chase runs, all")
    if doc and doc["machine_shifts"] != 3:
        fail(f"real chase runs, all +20 %: {[(p['name'], p['verdict']) for p in doc['phases']]}")

    p1, p2 = (os.path.join(DATA, f"vm-pagefault-32m-run{i}.json") for i in (1, 2))
    cold = "pagefault/4k/32M/anon_cold/r0"
    # 4 KiB cold faults +12.6 %, p < 0.001, but the two processes of the base run were 14.6 % apart: within noise.
    doc, _ = compare(p1, p2, expect=(0,), what="real page-fault runs")
    if doc:
        ns = phase(doc, cold)["ns"]
        if ns["verdict"] != "noise" or ns["clusters"] != {"base": 2, "new": 2} or not \
                ns["noise_floor_pct"] > ns["change_pct"] > 10 or ns["p_value"] >= 0.01:
            fail(f"real page-fault runs: {cold}: {ns}")
    # The same samples without their processes (as if independent): a regression, exit 1.
    with open(p2) as f:
        flat = json.load(f)
    with open(p1) as f:
        flat_base = json.load(f)
    for doc_ in (flat, flat_base):
        for ph in doc_["phases"]:
            ph["processes"] = 1
            for s in ph["fault_samples"]:
                s["process"] = 0
    doc, _ = compare(write(d, "p1-flat", flat_base), write(d, "p2-flat", flat), expect=(1,),
                     what="real page-fault runs, processes ignored")
    if doc and phase(doc, cold)["verdict"] != "regression":
        fail(f"processes ignored: {cold} {phase(doc, cold)['verdict']}")
    doc, _ = compare(p1, scaled_copy(p2, "p2-slow", 1.2), expect=(1,), what="real page-fault runs, +20 %")
    if doc and phase(doc, cold)["verdict"] != "regression":
        fail(f"real page-fault runs +20 %: {cold} {phase(doc, cold)['ns']}")

    # 13. Several runs a side (compare A1 A2 A3 -- B1 B2 B3): judged between runs, each run one value (Welch's t on
    # the logs of the runs' medians). Copies of one real run, 1 % apart a side: +20 % is a regression of the
    # measured phases (the control as it was), ±0.5 % is no change, and one run against three cannot be told.
    base = [scaled_copy(c1, f"base{i}", f) for i, f in enumerate((1.0, 1.01, 0.99))]
    slow = [scaled_copy(c1, f"slow{i}", f) for i, f in enumerate((1.2, 1.21, 1.19))]
    same = [scaled_copy(c1, f"same{i}", f) for i, f in enumerate((1.005, 0.995, 1.0))]

    def runs(old, new, expect, what):
        p = subprocess.run([TLBPROF, "compare", "--json", "-", *old, "--", *new], capture_output=True, text=True,
                           timeout=120)
        if p.returncode not in expect:
            fail(f"{what}: exit {p.returncode}, want {expect}: {p.stderr[-600:]}")
            return None
        doc = json.loads(p.stdout)
        validate_compare(doc)
        if not doc["method"]["between_runs"] or doc["method"]["runs_test"] != "welch_t_log_run_values":
            fail(f"{what}: not judged between runs: {doc['method']}")
        return {ph["name"]: (ph["verdict"], ph["ns"]["runs"]) for ph in doc["phases"]}, doc
    got = runs(base, slow, (1,), "three runs a side, +20 %")
    if got:
        verdicts, doc = got
        want = {"chase/4k:packed/16M/r0": "no_change", "chase/4k/16M/r0": "regression", "chase/2m/16M/r0": "regression"}
        if {n: v for n, (v, _) in verdicts.items()} != want or doc["verdict"] != "regression" or \
                any(r != {"base": 3, "new": 3} for _, r in verdicts.values()):
            fail(f"three runs a side, +20 %: {verdicts}, verdict {doc['verdict']}")
    got = runs(base, same, (0,), "three runs a side, within 1 %")
    if got and (any(v != "no_change" for v, _ in got[0].values()) or got[1]["verdict"] != "ok"):
        fail(f"three runs a side, within 1 %: {got[0]}, verdict {got[1]['verdict']}")
    got = runs(base, slow[:1], (3,), "three runs against one")
    if got and (any(v != "too_few_runs" for v, _ in got[0].values()) or got[1]["verdict"] != "nothing_judged"):
        fail(f"three runs against one: {got[0]}, verdict {got[1]['verdict']}")

    # 14. --format markdown, as GitHub renders a bot's comment: through cmark-gfm (GitHub's own CommonMark fork,
    # Debian's cmark-gfm) with its table extension. One table with the header and a row per phase and comparison;
    # a '|' in a file name stays text and does not split a table cell; -q with --output - still writes it.
    piped = os.path.join(d, "new|1.json")
    shutil.copy(slow[0], piped)
    md = os.path.join(d, "pr.md")
    p = subprocess.run([TLBPROF, "compare", base[0], piped, "--format", "markdown", "--output", md], capture_output=True,
                       text=True, timeout=120)
    cmark = shutil.which("cmark-gfm")
    if p.returncode != 1 or not os.path.exists(md):
        fail(f"markdown: exit {p.returncode}: {p.stderr[-400:]}")
    elif not cmark:
        fail("markdown: cmark-gfm is missing: apt-get install cmark-gfm (tools/bootstrap --test installs it)")
    else:
        with open(md) as f:
            text = f.read()
        html = subprocess.run([cmark, "-e", "table"], input=text, capture_output=True, text=True, timeout=60).stdout
        try:
            root = ET.fromstring("<div>" + html.replace("&nbsp;", " ") + "</div>")
        except ET.ParseError as e:
            fail(f"markdown: cmark-gfm's HTML does not parse: {e}: {html[:300]!r}")
            root = None
        if root is not None:
            heads = [h.text for h in root.findall("h2")]
            tables = root.findall("table")
            header = [th.text for th in tables[0].iter("th")] if tables else []
            rows = [[("".join(td.itertext())) for td in tr.findall("td")] for tr in tables[0].iter("tr")][1:] \
                if tables else []
            paras = " ".join("".join(x.itertext()) for x in root.findall("p"))
            if heads != ["tlbprof compare: regression (exit 1)"]:
                fail(f"markdown: the heading: {heads}")
            if len(tables) != 1 or header != ["phase", "old", "new", "change [99 % interval]", "verdict", "samples"]:
                fail(f"markdown: {len(tables)} tables, header {header}")
            if len(rows) != 4 or any(len(r) != 6 for r in rows) or \
                    [r[0].split(" (")[0] for r in rows[:3]] != ["chase/4k:packed/16M/r0", "chase/4k/16M/r0",
                                                                "chase/2m/16M/r0"] or \
                    "slower (regression)" not in rows[1][4] or "no significant change" not in rows[0][4]:
                fail(f"markdown: the rows: {rows}")
            if piped not in paras:
                fail(f"markdown: the file name with '|' as text: {paras[:300]!r}")
    p = subprocess.run([TLBPROF, "compare", base[0], base[1], "-q", "--format", "markdown", "--output", "-"],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0 or not p.stdout.startswith("## tlbprof compare: no regression (exit 0)") or p.stderr:
        fail(f"markdown -q --output -: exit {p.returncode}, {p.stdout[:80]!r}, {p.stderr[-200:]!r}")

fail.finish("all compare checks passed")
