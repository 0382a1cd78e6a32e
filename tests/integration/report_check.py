# SPDX-License-Identifier: MIT
"""Structural validation of a tlbprof.report/1 document (the v1 contract of DESIGN.md), stdlib only."""

import sys

NUM = (int, float)


class Failures:
    """Collects failures; each prints one line at once, finish() sets the exit status."""

    def __init__(self):
        self.items = []

    def __call__(self, msg):
        self.items.append(msg)
        print("FAIL:", msg, file=sys.stderr)

    def __bool__(self):
        return bool(self.items)

    def finish(self, passed):
        print(f"{len(self.items)} failed" if self.items else passed)
        sys.exit(1 if self.items else 0)
COUNTER_STATUSES = {"ok", "unsupported", "denied", "multiplexed", "error"}
PHASE_STATUSES = {"ok", "failed", "skipped"}
CHECK_STATUSES = {"pass", "warn", "fail", "skip"}


class ReportError(AssertionError):
    pass


def need(cond, what):
    if not cond:
        raise ReportError(what)


def typed(obj, key, types, where, nullable=False):
    need(isinstance(obj, dict), f"{where} is not an object")
    need(key in obj, f"{where}.{key} missing")
    v = obj[key]
    if v is None:
        need(nullable, f"{where}.{key} is null")
        return v
    need(isinstance(v, types) and not (isinstance(v, bool) and bool not in (types if isinstance(types, tuple) else (types,))),
         f"{where}.{key} has type {type(v).__name__}")
    return v


def check_stats(obj, where, n):
    for k in ("median", "min", "max"):
        typed(obj, k, NUM, where)
    need(obj["min"] <= obj["median"] <= obj["max"], f"{where}: min <= median <= max")
    s = typed(obj, "samples", list, where)
    need(len(s) == n, f"{where}.samples has {len(s)} values, want {n}")
    need(all(isinstance(x, NUM) for x in s), f"{where}.samples are numbers")


def validate(rep):
    """Raise ReportError when rep does not follow the v1 contract."""
    need(rep.get("schema") == "tlbprof.report/1", "schema")
    tool = typed(rep, "tool", dict, "report")
    need(tool.get("name") == "tlbprof" and isinstance(tool.get("version"), str), "tool")
    cmd = typed(rep, "command", list, "report")
    need(cmd and all(isinstance(a, str) for a in cmd), "command is a list of strings")
    env = typed(rep, "environment", dict, "report")
    typed(env, "cpu", dict, "environment")
    typed(env, "kernel", str, "environment")
    thp = typed(env, "thp", dict, "environment")
    typed(thp, "enabled", str, "environment.thp", nullable=True)
    typed(env, "hugepages", dict, "environment")
    typed(env, "perf_event_paranoid", int, "environment", nullable=True)
    typed(env, "hypervisor", str, "environment", nullable=True)
    typed(env, "core_clock_ghz", NUM, "environment", nullable=True)
    typed(env, "clock_overhead_ns", NUM, "environment")
    for i, c in enumerate(typed(rep, "counters", list, "report")):
        w = f"counters[{i}]"
        typed(c, "name", str, w)
        typed(c, "metric", str, w)
        st = typed(c, "status", str, w)
        need(st in COUNTER_STATUSES, f"{w}.status {st}")
        r = typed(c, "reason", str, w)
        need(st == "ok" or r, f"{w}: status {st} needs a reason")
    for i, p in enumerate(typed(rep, "phases", list, "report")):
        w = f"phases[{i}]"
        typed(p, "name", str, w)
        typed(p, "workload", str, w)
        st = typed(p, "status", str, w)
        need(st in PHASE_STATUSES, f"{w}.status {st}")
        reason = typed(p, "reason", str, w)
        need(st == "ok" or reason, f"{w}: status {st} needs a reason")
        page = typed(p, "page", dict, w)
        typed(page, "requested", str, w + ".page")
        typed(page, "requested_bytes", int, w + ".page")
        typed(page, "backing", str, w + ".page", nullable=True)
        typed(page, "kernel_page_bytes", int, w + ".page", nullable=True)
        typed(page, "huge_fraction", NUM, w + ".page", nullable=True)
        params = typed(p, "params", dict, w)
        for k in ("size_bytes", "stride_bytes", "slots", "iterations", "warmup_iterations", "repeat", "seed"):
            typed(params, k, int, w + ".params")
        typed(params, "cpu", int, w + ".params", nullable=True)
        declared = p.get("declared")
        if declared is not None:
            # tlbprof run: one sample per occurrence when accesses were declared, else none (wall times only).
            typed(declared, "occurrences", int, w + ".declared")
            wall = typed(declared, "wall_ns", list, w + ".declared")
            need(len(wall) == declared["occurrences"], f"{w}.declared.wall_ns: one per occurrence")
            typed(declared, "accesses", int, w + ".declared", nullable=True)
            if st == "ok" and declared["accesses"] is not None:
                check_stats(typed(p, "ns_per_access", dict, w), w + ".ns_per_access", declared["occurrences"])
            elif st == "ok":
                need(p.get("ns_per_access") is None, f"{w}: no accesses declared, so no ns per access")
        elif st == "ok":
            # Fixed: --repeat samples per allocation (page faults: per process). Auto: at least that many.
            allocations = params.get("allocations", 1) if "processes" not in p else p["processes"]
            want = params["repeat"] * allocations
            ns = typed(p, "ns_per_access", dict, w)
            if params.get("iterations_mode") == "auto":
                need(len(ns.get("samples", [])) >= want, f"{w}: auto mode took fewer than {want} samples")
                want = len(ns["samples"])
                prec = typed(p, "precision", dict, w)
                need(prec.get("stop") in ("precision", "budget", "max_samples"), f"{w}.precision.stop")
            check_stats(ns, w + ".ns_per_access", want)
            cyc = typed(p, "cycles_per_access", dict, w)
            typed(cyc, "median", NUM, w + ".cycles_per_access", nullable=True)
        for name, c in typed(p, "counters", dict, w).items():
            cw = f"{w}.counters[{name}]"
            typed(c, "value", int, cw)
            typed(c, "per_access", NUM, cw, nullable=True)
            typed(c, "enabled_ns", int, cw)
            typed(c, "running_ns", int, cw)
        for j, sc in enumerate(typed(p, "self_checks", list, w)):
            typed(sc, "id", str, f"{w}.self_checks[{j}]")
            need(typed(sc, "status", str, f"{w}.self_checks[{j}]") in CHECK_STATUSES, "self-check status")
    an = typed(rep, "analysis", dict, "report")
    for i, c in enumerate(typed(an, "comparisons", list, "analysis")):
        w = f"analysis.comparisons[{i}]"
        typed(c, "baseline", str, w)
        typed(c, "variant", str, w)
        typed(c, "delta_ns", NUM, w)
        typed(c, "speedup", NUM, w)
        typed(c, "delta_tlb_misses_per_access", NUM, w, nullable=True)
        typed(c, "ns_per_tlb_miss", NUM, w, nullable=True)
        typed(c, "cycles_per_tlb_miss", NUM, w, nullable=True)
        at = typed(c, "attribution", dict, w)
        for k in ("tlb_ns", "cache_ns", "unexplained_ns"):
            typed(at, k, NUM, w + ".attribution")
        need(c.get("method") in ("counters", "differential", "fault_path"), f"{w}.method")
    for i, c in enumerate(typed(an, "checks", list, "analysis")):
        w = f"analysis.checks[{i}]"
        typed(c, "id", str, w)
        need(typed(c, "status", str, w) in CHECK_STATUSES, f"{w}.status")
        typed(c, "message", str, w)
        typed(c, "evidence", dict, w)
    typed(an, "summary", str, "analysis")
    for i, f in enumerate(typed(an, "findings", list, "analysis")):
        typed(f, "id", str, f"analysis.findings[{i}]")
        typed(f, "message", str, f"analysis.findings[{i}]")
    for i, pa in enumerate(typed(an, "phases", list, "analysis")):
        typed(pa, "name", str, f"analysis.phases[{i}]")
        typed(pa, "translation_ns", NUM, f"analysis.phases[{i}]", nullable=True)
    need(rep.get("verdict") in ("ok", "warn", "fail"), "verdict")
    typed(rep, "interrupted", bool, "report")
