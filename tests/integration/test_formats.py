#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""--format/--output: golden files re-rendered from fixed reports, every format validated against its public
schema or a real parser, a report with failed and skipped phases and hostile strings, a live run, a live
tlbprof run (a phase measured by wall time alone, a command path that is not UTF-8) and --output FORMAT=FILE.

Debian's python3 (not a virtualenv's): the validators are Debian packages (tools/bootstrap installs them):
python3-jsonschema (gbench JSON), python3-prometheus-client (OpenMetrics and Prometheus text parsers) and
xmllint from libxml2-utils (JUnit against the Jenkins xunit plugin's public junit-10.xsd, vendored unmodified
under its MIT license in tests/data/schema/) and google/benchmark's own tools/compare.py from libbenchmark-tools
(with python3-scipy: its --utest).

Regenerate the golden files after an intended change of a format, then review the diff:
    tests/integration/test_formats.py build/tlbprof --regenerate
"""
import csv
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from report_check import Failures, validate  # noqa: E402

try:
    import jsonschema
    import pandas
    from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
    from prometheus_client.parser import text_string_to_metric_families as parse_prometheus
except ImportError as e:
    print(f"FAIL: {e} (install python3-jsonschema, python3-pandas and python3-prometheus-client: tools/bootstrap "
          "--test)", file=sys.stderr)
    sys.exit(1)

TLBPROF = os.path.abspath(sys.argv[1])
REGENERATE = "--regenerate" in sys.argv[2:]
DATA = os.environ.get("TLBPROF_TEST_DATA_DIR", os.path.join(HERE, "..", "data"))
GOLDEN = os.path.join(DATA, "golden")
SCHEMA = os.path.join(DATA, "schema")
ALL = "json,gbench,openmetrics,junit,csv"
FILES = {"json": "tlbprof.json", "gbench": "tlbprof.gbench.json", "openmetrics": "tlbprof.prom",
         "junit": "tlbprof.junit.xml", "csv": "tlbprof.csv"}
fail = Failures()

with open(os.path.join(SCHEMA, "gbench.schema.json")) as f:
    GBENCH_SCHEMA = json.load(f)
jsonschema.Draft7Validator.check_schema(GBENCH_SCHEMA)


def run(args, cwd=None, expect=(0,)):
    p = subprocess.run([TLBPROF, *args], capture_output=True, text=True, timeout=300, cwd=cwd)
    if p.returncode not in expect:
        fail(f"tlbprof {' '.join(args)}: exit {p.returncode}, want {expect}: {p.stderr.strip()[-300:]}")
    return p


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


def phases_of(rep):
    return {p["name"]: p for p in rep["phases"]}


def wall_only(p):
    """A tlbprof run phase that declared no accesses: measured by its wall time per occurrence alone."""
    return p["status"] == "ok" and p["ns_per_access"] is None and bool((p.get("declared") or {}).get("wall_ns"))


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def no_nan(text, where):
    """NaN and infinities mean nothing on a dashboard or in a test report: never written."""
    m = re.search(r"(?<![A-Za-z])(NaN|[+-]?Inf)(?![A-Za-z])", text)
    if m:
        fail(f"{where}: {m.group(0)} written: ...{text[max(0, m.start() - 80):m.end() + 20]!r}")


# ---- one validator per format: the public schema or parser, then what the numbers must say ----

def check_native(text, where):
    try:
        rep = json.loads(text)
        # A re-rendered fixture is a re-analysis (it keeps the fixture's fields); a live run is written whole.
        validate(rep, kind="reanalysed" if "reanalysis" in rep else "written")
        return rep
    except (ValueError, AssertionError) as e:
        fail(f"{where}: not a valid tlbprof.report/1: {e}")
        return None


GBENCH_AGGREGATES = {"mean": "time", "median": "time", "stddev": "time", "cv": "percentage"}
UTEST_MIN_REPETITIONS = 2       # compare.py --utest runs from 2 repetitions a side (tools/gbench/report.py)


def gbench_units(p):
    """The repetitions tlbprof-report(5) promises for a phase, as lists of its samples (ns per access): one per
    allocation; a page-fault phase in several processes one per process; a tlbprof run phase one per occurrence."""
    if wall_only(p):
        return [[w] for w in p["declared"]["wall_ns"]]
    xs = p["ns_per_access"]["samples"]
    if p.get("processes", 0) > 1 and len(p.get("fault_samples", [])) == len(xs):
        tags = [f["process"] for f in p["fault_samples"]]
    elif p.get("declared") is not None:
        tags = list(range(len(xs)))
    else:
        tags = p.get("sample_allocations") or [0] * len(xs)
    return [[x for x, t in zip(xs, tags) if t == u] for u in sorted(set(tags))]


def gbench_stat(name, xs):
    """Google Benchmark's aggregates (src/statistics.cc): the mean; the median (the mean below 3 values); the sample
    standard deviation (n - 1); cv, the standard deviation over the mean."""
    n = len(xs)
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return {"mean": mean, "median": median(xs) if n >= 3 else mean, "stddev": sd,
            "cv": sd / mean if n > 1 and mean else 0.0}[name]


def compare_py_rules(doc, where):
    """What google/benchmark's tools/compare.py does with a file, as our own check (tools/compare.py,
    tools/gbench/report.py, tools/gbench/util.py): it reads context.json_schema_version (1 if present), sorts the
    entries by family_index, per_family_instance_index, iterations before aggregates, repetition_index; pairs
    entries of the same name across two files, using those with the first entry's time_unit and real_time and
    cpu_time; an aggregate is named RUN_NAME_AGGREGATE with run_type aggregate; --utest takes the real and cpu times
    of one name's entries. Returns {name: [entries]} in the order compare.py sees them."""
    ctx = doc.get("context", {})
    if ctx.get("json_schema_version", 1) != 1:
        fail(f"{where}: context.json_schema_version {ctx['json_schema_version']}: compare.py reads 1")
    bench = doc["benchmarks"]
    key = [(b.get("family_index", -1), b.get("per_family_instance_index", -1), b.get("run_type") == "aggregate",
            b.get("repetition_index", -1)) for b in bench]
    if key != sorted(key):
        fail(f"{where}: not in the order compare.py sorts entries into (family, instance, iterations first, "
             "repetition)")
    groups = {}
    for b in bench:
        groups.setdefault(b["name"], []).append(b)
    for name, entries in groups.items():
        first = entries[0]
        if not all(k in first for k in ("time_unit", "real_time", "cpu_time")):
            fail(f"{where}: {name}: compare.py skips a name whose first entry lacks time_unit, real_time or cpu_time")
        if any(e["time_unit"] != first["time_unit"] for e in entries):
            fail(f"{where}: {name}: compare.py drops entries of another time_unit than the first")
        kinds = {e.get("run_type") for e in entries}
        if len(kinds) != 1:
            fail(f"{where}: {name}: iterations and aggregates under one name are compared as repetitions")
        if kinds == {"aggregate"}:
            agg = first.get("aggregate_name")
            if len(entries) != 1 or name != f"{first['run_name']}_{agg}" or \
                    GBENCH_AGGREGATES.get(agg) != first.get("aggregate_unit"):
                fail(f"{where}: {name}: an aggregate is one entry RUN_NAME_AGGREGATE with gbench's aggregate_unit")
        else:
            if [e.get("repetition_index") for e in entries] != list(range(len(entries))) or any(
                    e["repetitions"] != len(entries) or e["run_name"] != name for e in entries):
                fail(f"{where}: {name}: repetitions {[e['repetitions'] for e in entries][:3]}, repetition_index "
                     f"{[e.get('repetition_index') for e in entries][:5]}, want {len(entries)} and "
                     f"0..{len(entries) - 1}")
            # The geometric mean of real and cpu times over the iterations: a time of 0 makes it 0 (or fails).
            if any(not (e["real_time"] > 0 and e["cpu_time"] > 0) for e in entries):
                fail(f"{where}: {name}: a zero time spoils compare.py's geomean and its change in %")
    return groups


def check_gbench(text, rep, where):
    try:
        doc = json.loads(text)
        jsonschema.validate(doc, GBENCH_SCHEMA, cls=jsonschema.Draft7Validator)
    except (ValueError, jsonschema.ValidationError) as e:
        fail(f"{where}: gbench JSON invalid: {str(e)[:300]}")
        return None
    bench = doc["benchmarks"]
    groups = compare_py_rules(doc, where)
    # What github-action-benchmark's googlecpp extractor builds from each entry.
    for b in bench:
        extra = f"iterations: {b['iterations']}\ncpu: {b['cpu_time']} {b['time_unit']}\nthreads: {b['threads']}"
        if "undefined" in extra or not isinstance(b["real_time"], (int, float)):
            fail(f"{where}: {b['name']}: an entry the googlecpp extractor cannot read")
    if not all(isinstance(c, dict) for c in doc["context"]["caches"]):
        fail(f"{where}: context.caches must be objects (Bencher's cpp_google adapter)")
    if rep is None:
        return doc
    ph = phases_of(rep)
    measured = [p["name"] for p in rep["phases"] if p["status"] == "ok" and (p["ns_per_access"] or wall_only(p))]
    runs = list(dict.fromkeys(b["run_name"] for b in bench))
    if runs != measured:
        fail(f"{where}: the entries of each measured phase, in order: {runs}, want {measured}")
    # A phase that was not measured has no entry (dashboards would plot 0 ns), and is named in the context.
    for p in rep["phases"]:
        if p["name"] in measured:
            continue
        why = doc["context"].get("not_measured:" + p["name"])
        if not why or not why.startswith(p["status"] + ": ") or (p["reason"] and p["reason"] not in why):
            fail(f"{where}: phase {p['name']!r} ({p['status']}) must be named in the context with its reason: {why!r}")
    # A run whose command failed (command_exit): every entry says so as gbench's SkipWithError does, times kept.
    failed_run = any(c["id"] == "command_exit" and c["status"] == "fail" for c in rep["analysis"]["checks"])
    for b in bench:
        if b["real_time"] <= 0 and b.get("aggregate_name") not in ("stddev", "cv") or \
                b.get("error_occurred", False) != failed_run or b.get("skipped"):
            fail(f"{where}: {b['name']}: a benchmark entry is a measurement, error_occurred exactly when the "
                 f"command failed ({failed_run}): {b}")
    for name in measured:
        p, its = ph[name], groups.get(name, [])
        units = gbench_units(p)
        if [len(u) for u in units] and len(its) != len(units):
            fail(f"{where}: {name}: {len(its)} iteration entries, want one per repetition unit: {len(units)}")
            continue
        for e, u in zip(its, units):
            if not close(e["real_time"], median(u)) or e["time_unit"] != "ns":
                fail(f"{where}: {name}#{e['repetition_index']}: real_time {e['real_time']} is not its median "
                     f"{median(u)}")
        # cpu_time is real_time scaled by one CPU share of the phase: the same statistic, never a mean beside a median.
        shares = {round(e["cpu_time"] / e["real_time"], 12) for e in its}
        if len(shares) != 1 or (p.get("declared") is None and max(shares) > 1):
            fail(f"{where}: {name}: cpu_time / real_time {sorted(shares)[:3]}: one share of the phase, at most 1")
        if wall_only(p):
            if any(e["iterations"] != 1 for e in its):
                fail(f"{where}: {name}: one iteration per occurrence")
        elif p.get("declared") is None and sum(e["iterations"] for e in its) != round(
                p["params"]["iterations"] * len(p["ns_per_access"]["samples"])):
            fail(f"{where}: {name}: iterations {[e['iterations'] for e in its]} do not add up to the timed accesses")
        aggs = {a: groups.get(f"{name}_{a}", [None])[0] for a in GBENCH_AGGREGATES}
        if len(its) < 2:
            if any(aggs.values()):
                fail(f"{where}: {name}: aggregates of a single repetition (gbench writes none)")
            home = its[0] if its else {}
        else:
            for a, e in aggs.items():
                if e is None:
                    fail(f"{where}: {name}: no {a} aggregate over {len(its)} repetitions")
                    continue
                for f in ("real_time", "cpu_time"):
                    want = gbench_stat(a, [x[f] for x in its])
                    if not math.isclose(e[f], want, rel_tol=1e-9, abs_tol=1e-12) or e["iterations"] != len(its):
                        fail(f"{where}: {name}_{a}.{f} {e[f]}, gbench's {a} of the repetitions is {want}")
            home = aggs["median"] or {}
        # The phase's own figures sit on the median aggregate (on the only entry of a single repetition).
        if not wall_only(p):
            if not close(home.get("ns_per_access_median", -1), p["ns_per_access"]["median"]):
                fail(f"{where}: {name}: ns_per_access_median {home.get('ns_per_access_median')}, the report says "
                     f"{p['ns_per_access']['median']}")
            for cname, c in p["counters"].items():
                key = c["metric"] + "_per_access"
                if c.get("per_access") is not None and not close(home.get(key, -1), c["per_access"]):
                    fail(f"{where}: {name}: counter {key} {home.get(key)} != {c['per_access']}")
    for c in rep["analysis"]["comparisons"]:
        its = groups.get(c["variant"], [])
        b = (groups.get(c["variant"] + "_median") or its[:1] or [{}])[0]
        if not close(b.get("speedup", -1), c["speedup"]):
            fail(f"{where}: speedup of {c['variant']}: {b.get('speedup')} != {c['speedup']}")
        ci = c["speedup_interval"]
        if (ci and not (close(b.get("speedup_lo", -1), ci["lo"]) and close(b.get("speedup_hi", -1), ci["hi"]))) or (
                not ci and ("speedup_lo" in b or "speedup_hi" in b)):
            fail(f"{where}: the interval of {c['variant']}: {b.get('speedup_lo')}..{b.get('speedup_hi')}, want {ci}")
        if b.get("speedup_comparable") != float(c["comparable"]):
            fail(f"{where}: speedup_comparable of {c['variant']}: {b.get('speedup_comparable')}, want {c['comparable']}")
        tr = c["translation"]
        want = {} if not tr else {"translation_lo_ns": tr["lo_ns"], "translation_proven": float(tr["proven"]),
                                  **({"translation_hi_ns": tr["hi_ns"]} if tr["hi_ns"] is not None else {})}
        got = {k: v for k, v in b.items() if k.startswith("translation_") and k != "translation_ns"}
        if set(got) != set(want) or any(not close(got[k], want[k]) for k in want):
            fail(f"{where}: the translation range of {c['variant']}: {got}, want {want}")
    return doc


def check_utest_pairs(doc_a, doc_b, where):
    """compare.py --utest on two runs: every phase of both has at least UTEST_MIN_REPETITIONS iteration entries a
    side, under the same name and time unit, so the Mann-Whitney U test runs for each."""
    a = compare_py_rules(doc_a, where + " (baseline)")
    b = compare_py_rules(doc_b, where + " (contender)")
    pairs = [n for n in a if n in b and a[n][0].get("run_type") == "iteration"]
    if not pairs:
        fail(f"{where}: no benchmark name in both files")
    for n in pairs:
        if min(len(a[n]), len(b[n])) < UTEST_MIN_REPETITIONS or a[n][0]["time_unit"] != b[n][0]["time_unit"]:
            fail(f"{where}: {n}: {len(a[n])} vs {len(b[n])} repetitions: --utest needs {UTEST_MIN_REPETITIONS} a side")
    return pairs


COMPARE_PY = "/usr/share/benchmark/compare.py"   # Debian's libbenchmark-tools: google/benchmark's own tools/


def check_compare_py(paths, docs, where):
    """google/benchmark's own tools/compare.py (Debian's libbenchmark-tools, with python3-scipy for its U test) on
    two files: it must exit 0, and its JSON dump (-d) must hold, for every phase both files name, the U test over
    exactly the repetitions each file has (a p-value in [0, 1]) and the median aggregate's old and new times as the
    files give them. Run it by hand the same way: compare.py benchmarks A.json B.json."""
    if not os.path.exists(COMPARE_PY):
        fail(f"{where}: {COMPARE_PY} is missing: apt-get install libbenchmark-tools python3-scipy (tools/bootstrap "
             "--test installs them)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        dump = os.path.join(tmp, "diff.json")
        p = subprocess.run([sys.executable, COMPARE_PY, "--no-color", "-d", dump, "benchmarks", *paths],
                           capture_output=True, text=True)
        if p.returncode != 0 or not os.path.exists(dump):
            fail(f"{where}: compare.py: exit {p.returncode}: {(p.stdout + p.stderr).strip()[-400:]}")
            return
        with open(dump) as f:
            diff = {e["name"]: e for e in json.load(f)}
    reps = [{}, {}]
    medians = [{}, {}]
    for side, doc in enumerate(docs):
        for b in doc["benchmarks"]:
            if b["run_type"] == "iteration":
                reps[side][b["run_name"]] = reps[side].get(b["run_name"], 0) + 1
            elif b.get("aggregate_name") == "median":
                medians[side][b["run_name"]] = b["real_time"]
    names = [n for n in reps[0] if n in reps[1]]
    if not names:
        fail(f"{where}: compare.py: no phase in both files")
    for n in names:
        e = diff.get(n)
        u = e.get("utest", {}) if e else {}
        if not e or u.get("nr_of_repetitions") != reps[0][n] or u.get("nr_of_repetitions_other") != reps[1][n]:
            fail(f"{where}: compare.py: {n}: U test over {u.get('nr_of_repetitions')} vs "
                 f"{u.get('nr_of_repetitions_other')} repetitions, the files hold {reps[0][n]} vs {reps[1][n]}")
            continue
        if not all(isinstance(u.get(k), float) and 0 <= u[k] <= 1 for k in ("time_pvalue", "cpu_pvalue")):
            fail(f"{where}: compare.py: {n}: p-values {u.get('time_pvalue')}, {u.get('cpu_pvalue')}")
        m = diff.get(n + "_median")
        got = (m["measurements"][0]["real_time"], m["measurements"][0]["real_time_other"]) if m else None
        if got != (medians[0].get(n), medians[1].get(n)):
            fail(f"{where}: compare.py: {n}_median: old, new {got}, the files' medians "
                 f"{(medians[0].get(n), medians[1].get(n))}")
    if "OVERALL_GEOMEAN" not in diff:
        fail(f"{where}: compare.py printed no OVERALL_GEOMEAN: a phase's time it could not use")


def report_workload(rep):
    """What the formats name as the workload: the phases' own ("run" or "command" for tlbprof run)."""
    return rep["phases"][0]["workload"] if rep["phases"] else "run" if "target" in rep else ""


def samples(families):
    return {(s.name, tuple(sorted(s.labels.items()))): s for f in families for s in f.samples}


PROMTOOL = shutil.which("promtool")
METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*$")
CLOCK_EVENTS = ("task-clock", "cpu-clock")      # count ns, not events: families in seconds of their own


def check_promtool(text, where):
    """promtool check metrics (Debian's prometheus): the Prometheus linter, naming and units included."""
    if PROMTOOL is None:
        fail(f"{where}: promtool is missing: apt-get install prometheus (tools/bootstrap --test installs it)")
        return
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    if p.returncode != 0 or p.stdout.strip() or p.stderr.strip():
        fail(f"{where}: promtool check metrics: exit {p.returncode}: {(p.stdout + p.stderr).strip()[:400]}")


def check_textfile_rules(text, families, where):
    """What node_exporter's textfile collector (collector/textfile.go) does with a .prom file, as our own check:
    the Prometheus text parser (expfmt) reads it, so a family's TYPE comes before its samples and its samples are
    not split by another family's; a file with any timestamp is skipped whole; label names missing from some
    samples of a family are added with the value "", after which no two samples of a family may have the same
    labels (the registry refuses a metric collected twice); names, label names and label values must be valid."""
    if not text.endswith("\n"):
        fail(f"{where}: a .prom file ends with a line feed")
    typed, seen, last = set(), set(), None
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            name = line.split()[2]
            if name in typed:
                fail(f"{where}: a second TYPE line for {name}")
            typed.add(name)
            continue
        if not line or line.startswith("#"):
            continue
        name = re.match(r"[^{ ]+", line).group(0)
        if name != last and name in seen:
            fail(f"{where}: the samples of {name} are split by another family")
        if name not in typed:
            fail(f"{where}: {name}: a sample before its TYPE line")
        seen.add(name)
        last = name
    for fam in families:
        if not METRIC_NAME.match(fam.name):
            fail(f"{where}: metric name {fam.name!r}")
        names = {k for s in fam.samples for k in s.labels}
        padded = set()
        for s in fam.samples:
            if s.timestamp is not None:
                fail(f"{where}: {s.name}: a timestamp (the textfile collector skips the whole file)")
            for k, v in s.labels.items():
                if not LABEL_NAME.match(k) or k.startswith("__"):
                    fail(f"{where}: {s.name}: label name {k!r}")
            key = (s.name, tuple(sorted((k, s.labels.get(k, "")) for k in names)))
            if key in padded:
                fail(f"{where}: {s.name}{dict(key[1])} twice once missing labels are filled with \"\"")
            padded.add(key)


def check_openmetrics(text, rep, where):
    no_nan(text, where)
    if not text.endswith("\n# EOF\n"):
        fail(f"{where}: OpenMetrics text must end with '# EOF'")
    check_promtool(text, where)
    try:
        om = list(parse_openmetrics(text))
        prom = list(parse_prometheus(text))   # what node_exporter's textfile collector reads
    except ValueError as e:
        fail(f"{where}: rejected by a parser: {e}")
        return None
    if [f.name for f in om] != [f.name for f in prom] or len(samples(om)) != len(samples(prom)):
        fail(f"{where}: the OpenMetrics and the Prometheus text parsers read different metrics")
    check_textfile_rules(text, prom, where)
    for fam in om:
        if fam.type != "gauge" or not fam.name.startswith("tlbprof_"):
            fail(f"{where}: {fam.name}: every family is a tlbprof_ gauge (the textfile collector knows no stateset)")
        if fam.unit and not fam.name.endswith("_" + fam.unit):
            fail(f"{where}: {fam.name}: unit {fam.unit} must be the name's suffix")
        if re.search(r"_(info|total|created|bucket|count|sum|gcount|gsum)$", fam.name):
            fail(f"{where}: {fam.name}: a suffix OpenMetrics reserves for another type")
        if re.search(r"(^|_)(counter|gauge|histogram|summary)(_|$)", fam.name):
            fail(f"{where}: {fam.name}: a metric type in the name")
        # Base units (seconds, not ns), one unit per family: a clock event's ns never beside counts.
        if re.search(r"_(ns|nanoseconds|us|microseconds|ms|milliseconds|cycles_per_ns|pct|percent)(_|$)", fam.name):
            fail(f"{where}: {fam.name}: not a base unit")
        if fam.name.startswith("tlbprof_event_") and fam.name != "tlbprof_event_running_ratio":
            for s in fam.samples:
                if (s.labels.get("event") in CLOCK_EVENTS) != fam.name.endswith("_seconds"):
                    fail(f"{where}: {fam.name}: {s.labels.get('event')}: clock events go in seconds, counts not")
        for s in fam.samples:
            if s.timestamp is not None:
                fail(f"{where}: {s.name}: a timestamp (the textfile collector rejects them)")
    got = samples(om)
    if rep is None:
        return got
    byname = {}
    for (name, labels), s in got.items():
        byname.setdefault(name, []).append(dict(labels) | {"_value": s.value})
    for p in rep["phases"]:
        states = {x["status"]: x["_value"] for x in byname.get("tlbprof_phase_status", []) if x["phase"] == p["name"]}
        if states != {st: float(st == p["status"]) for st in ("ok", "failed", "skipped")}:
            fail(f"{where}: phase_status of {p['name']!r}: {states}")
        med = [x["_value"] for x in byname.get("tlbprof_access_latency_seconds", [])
               if x["phase"] == p["name"] and x["stat"] == "median"]
        wall = [x["_value"] for x in byname.get("tlbprof_phase_wall_seconds", [])
                if x["phase"] == p["name"] and x["stat"] == "median"]
        if wall_only(p):
            if med or len(wall) != 1 or not close(wall[0], median(p["declared"]["wall_ns"]) / 1e9):
                fail(f"{where}: a phase measured by wall time: {p['name']!r}: latency {med}, wall {wall}")
            if not any(x["phase"] == p["name"] for x in byname.get("tlbprof_event_value", []) +
                       byname.get("tlbprof_event_seconds", [])) and p["counters"]:
                fail(f"{where}: {p['name']!r}: its counter totals are missing")
            if any(x["phase"] == p["name"] for x in byname.get("tlbprof_event_per_access", []) +
                   byname.get("tlbprof_event_time_per_access_seconds", [])):
                fail(f"{where}: {p['name']!r}: no rate per access without accesses")
            continue
        if wall:
            fail(f"{where}: wall time only for a run phase without accesses: {p['name']!r}")
        if p["status"] == "ok" and (len(med) != 1 or not close(med[0], p["ns_per_access"]["median"] / 1e9)):
            fail(f"{where}: latency of {p['name']!r}: {med} s, want {p['ns_per_access']['median']} ns")
        if p["status"] != "ok" and med:
            fail(f"{where}: a phase without samples has no latency: {p['name']!r}")
    for c in rep["analysis"]["checks"]:
        states = {x["status"]: x["_value"] for x in byname.get("tlbprof_check_status", []) if x["check"] == c["id"]}
        if states != {st: float(st == c["status"]) for st in ("pass", "warn", "fail", "skip")}:
            fail(f"{where}: check_status of {c['id']}: {states}, want {c['status']}")
    run = byname.get("tlbprof_run", [])
    if len(run) != 1 or run[0]["workload"] != report_workload(rep):
        fail(f"{where}: tlbprof_run names the workload {report_workload(rep)!r}: {run}")
    verdict = {x["verdict"]: x["_value"] for x in byname.get("tlbprof_verdict", [])}
    if verdict != {v: float(v == rep["verdict"]) for v in ("ok", "warn", "fail")}:
        fail(f"{where}: verdict {verdict}, want {rep['verdict']}")
    for c in rep["analysis"]["comparisons"]:
        sp = [x["_value"] for x in byname.get("tlbprof_comparison_speedup_ratio", []) if x["variant"] == c["variant"]]
        if len(sp) != 1 or not close(sp[0], c["speedup"]):
            fail(f"{where}: speedup of {c['variant']}: {sp}, want {c['speedup']}")
        ci = c["speedup_interval"]
        for fam, key in (("tlbprof_comparison_speedup_low_ratio", "lo"), ("tlbprof_comparison_speedup_high_ratio", "hi")):
            got_ci = [x["_value"] for x in byname.get(fam, []) if x["variant"] == c["variant"]]
            if (ci and (len(got_ci) != 1 or not close(got_ci[0], ci[key]))) or (not ci and got_ci):
                fail(f"{where}: {fam} of {c['variant']}: {got_ci}, want {ci and ci[key]}")
        comp = [x["_value"] for x in byname.get("tlbprof_comparison_comparable", []) if x["variant"] == c["variant"]]
        if comp != [float(c["comparable"])]:
            fail(f"{where}: tlbprof_comparison_comparable of {c['variant']}: {comp}, want {c['comparable']}")
        tr = c["translation"] or {}
        for fam, want in (("tlbprof_comparison_translation_low_seconds", tr.get("lo_ns")),
                          ("tlbprof_comparison_translation_high_seconds", tr.get("hi_ns")),
                          ("tlbprof_comparison_translation_proven", tr.get("proven"))):
            got_tr = [x["_value"] for x in byname.get(fam, []) if x["variant"] == c["variant"]]
            scale = 1 if fam.endswith("proven") else 1e-9
            if (want is None and got_tr) or (want is not None and (
                    len(got_tr) != 1 or not close(got_tr[0], float(want) * scale))):
                fail(f"{where}: {fam} of {c['variant']}: {got_tr}, want {want}")
    return got


def check_junit(path, rep, fail_on, where):
    p = subprocess.run(["xmllint", "--noout", "--schema", os.path.join(SCHEMA, "junit-10.xsd"), path],
                       capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{where}: JUnit XML does not validate against junit-10.xsd: {p.stderr.strip()[-300:]}")
        return None
    with open(path, encoding="utf-8") as f:
        no_nan(f.read(), where)
    root = ET.parse(path).getroot()
    cases = root.findall("testsuite/testcase")
    for node in [root, *root.findall("testsuite")]:
        tc = node.findall(".//testcase")
        want = {"tests": len(tc), "failures": sum(t.find("failure") is not None for t in tc), "errors": 0}
        if node.tag == "testsuite":
            want["skipped"] = sum(t.find("skipped") is not None for t in tc)
        try:
            got = {k: int(node.get(k)) for k in want}
            if float(node.get("time")) < 0:
                raise ValueError
        except (TypeError, ValueError):
            fail(f"{where}: <{node.tag}> counts must be whole numbers and its time seconds: {node.attrib}")
            continue
        if got != want:
            fail(f"{where}: <{node.tag} name={node.get('name')!r}> counts {got}, its test cases say {want}")
    if rep is None:
        return root
    suites = [s.get("name") for s in root.findall("testsuite")]
    if suites != ["tlbprof.checks", "tlbprof.phases"]:
        fail(f"{where}: test suites {suites}")
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    if props.get("workload") != report_workload(rep):
        fail(f"{where}: property workload {props.get('workload')!r}, want {report_workload(rep)!r}")
    checks = {t.get("name"): t for t in cases if t.get("classname") == "tlbprof.checks"}
    for c in rep["analysis"]["checks"]:
        t = checks.get(c["id"])
        if t is None:
            fail(f"{where}: no test case for check {c['id']}")
            continue
        failed = c["status"] == "fail" or (c["status"] == "warn" and fail_on == "warn")
        f, s = t.find("failure"), t.find("skipped")
        if failed != (f is not None) or (c["status"] == "skip") != (s is not None):
            fail(f"{where}: check {c['id']} ({c['status']}, --fail-on {fail_on}) maps to failure={f is not None} "
                 f"skipped={s is not None}")
        if f is not None and (f.get("message") != c["message"] or f.get("type") != c["status"]):
            fail(f"{where}: check {c['id']}: failure message {f.get('message')!r}")
        if c["status"] == "warn" and not failed and not (t.findtext("system-out") or "").startswith("warning: "):
            fail(f"{where}: a warning that does not fail the run passes with 'warning: ' in system-out")
    phases = {t.get("name"): t for t in cases if t.get("classname") == "tlbprof.phases"}
    for p in rep["phases"]:
        t = phases.get(p["name"])
        if t is None:
            fail(f"{where}: no test case for phase {p['name']!r}")
            continue
        f, s = t.find("failure"), t.find("skipped")
        if p["status"] == "failed" and (f is None or f.get("message") != p["reason"]):
            fail(f"{where}: failed phase {p['name']!r}: failure must carry the reason {p['reason']!r}")
        if p["status"] == "skipped" and (s is None or s.get("message") != p["reason"]):
            fail(f"{where}: skipped phase {p['name']!r}: <skipped> must carry the reason")
        if p["status"] == "ok" and (f is not None or s is not None):
            fail(f"{where}: phase {p['name']!r} ran: a passing test case")
        out = t.findtext("system-out") or ""
        if wall_only(p) and (not re.match(r"^\d+ occurrences?: wall time median ", out) or "per access" in out):
            fail(f"{where}: phase {p['name']!r} without accesses: occurrences and wall time, no rates: {out[:200]!r}")
    return root


CSV_COLUMNS = ["run", "phase", "value", "unit", "metric", "running_pct", "note"]


def check_csv(text, rep, where):
    no_nan(text, where)
    # pandas with default arguments, as a user reads it: the first line names the columns.
    try:
        frame = pandas.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (ValueError, pandas.errors.ParserError) as e:
        fail(f"{where}: pandas.read_csv: {e}")
        return None
    if list(frame.columns) != CSV_COLUMNS:
        fail(f"{where}: pandas reads the columns {list(frame.columns)}, want {CSV_COLUMNS}")
        return None
    runs = set(frame["run"])
    if len(runs) != 1 or not re.fullmatch(r"r[0-9a-f]{16}", next(iter(runs))):
        fail(f"{where}: one run id of r and 16 hex digits in every row: {sorted(runs)[:3]}")
    # With no arguments at all, as a first look at the file takes it: the run id stays a string (an all-digit id
    # read as a number loses its digits), and the columns are the same.
    bare = pandas.read_csv(io.StringIO(text))
    if list(bare.columns) != CSV_COLUMNS or bare["run"].dtype != object or set(bare["run"]) != runs:
        fail(f"{where}: pandas.read_csv with no arguments: columns {list(bare.columns)}, run {bare['run'].dtype}")
    if frame.empty or pandas.to_numeric(frame["value"], errors="coerce").isna().sum() != frame["value"].isin(
            ["<not supported>", "<not counted>"]).sum():
        fail(f"{where}: value is a number, or <not supported>/<not counted>")
    rows = list(csv.reader(io.StringIO(text, newline="")))[1:]
    for r in rows:
        if len(r) != len(CSV_COLUMNS):
            fail(f"{where}: a row of {len(r)} fields: {r}")
            return None
        r.pop(0)        # the run id: the checks below read phase, value, unit, metric, running_pct, note
        if r[4]:
            try:
                if not 0 <= float(r[4]) <= 100:
                    raise ValueError
            except ValueError:
                fail(f"{where}: running_pct {r[4]!r}")
        # Every value that has a unit names it: times in ns (the JSON's unit), ratios as ratio.
        if (r[3].endswith("_ns") or r[3].startswith(("ns_per_access", "wall_ns")) or r[3].startswith(
                CLOCK_EVENTS) or r[3].startswith("task_clock")) and r[2] != "ns":
            fail(f"{where}: {r[0]} {r[3]}: a time without its unit ns: {r[2]!r}")
        if r[3] in ("rel_spread", "spread") and r[2] != "ratio":
            fail(f"{where}: {r[0]} {r[3]}: the spread is a ratio, as in the JSON: {r[2]!r}")
    if rep is None:
        return rows
    ph = phases_of(rep)
    if {r[0] for r in rows} != set(ph):
        fail(f"{where}: rows name the phases {sorted({r[0] for r in rows})}, want {sorted(ph)}")
    for name, p in ph.items():
        med = [r[1] for r in rows if r[0] == name and r[3] == "ns_per_access"]
        if wall_only(p):
            wall = [r[1] for r in rows if r[0] == name and r[3] == "wall_ns"]
            if med or len(wall) != 1 or not close(float(wall[0]), median(p["declared"]["wall_ns"])):
                fail(f"{where}: {name!r} without accesses: one wall_ns row (the median), no ns_per_access: {wall}")
            if any(r[0] == name and r[3].endswith("_per_access") for r in rows):
                fail(f"{where}: {name!r}: no rate per access without accesses")
            for cname, c in p["counters"].items():
                if not any(r[0] == name and r[3] == cname and abs(float(r[1]) - c["value"]) <= 0.5 for r in rows):
                    fail(f"{where}: {name!r}: counter {cname} {c['value']} missing")
            continue
        if p["status"] == "ok" and (med != [med[0]] or not close(float(med[0]), p["ns_per_access"]["median"])):
            fail(f"{where}: ns_per_access of {name!r}: {med}")
        spread = [float(r[1]) for r in rows if r[0] == name and r[3] == "rel_spread"]
        if p["status"] == "ok" and "rel_spread" in p["ns_per_access"] and (
                len(spread) != 1 or not close(spread[0], p["ns_per_access"]["rel_spread"])):
            fail(f"{where}: rel_spread of {name!r}: {spread}, the JSON says {p['ns_per_access']['rel_spread']}")
        if p["status"] != "ok" and (med != ["<not counted>"] or not any(
                r[0] == name and p["reason"] in r[5] for r in rows)):
            fail(f"{where}: a phase without samples: one <not counted> row with its reason: {name!r}")
    for c in rep["analysis"]["comparisons"]:
        ci = c["speedup_interval"]
        for key in ("lo", "hi"):
            got_ci = [float(r[1]) for r in rows if r[0] == c["variant"] and r[3] == "speedup_" + key]
            if (ci and (len(got_ci) != 1 or not close(got_ci[0], ci[key]))) or (not ci and got_ci):
                fail(f"{where}: speedup_{key} of {c['variant']}: {got_ci}, want {ci and ci[key]}")
        tr = c["translation"] or {}
        for key, want in (("translation_lo_ns", tr.get("lo_ns")), ("translation_hi_ns", tr.get("hi_ns")),
                          ("translation_proven", tr.get("proven"))):
            got_tr = [float(r[1]) for r in rows if r[0] == c["variant"] and r[3] == key]
            if (want is None and got_tr) or (want is not None and (len(got_tr) != 1 or not close(got_tr[0], float(want)))):
                fail(f"{where}: {key} of {c['variant']}: {got_tr}, want {want}")
    return rows


def check_all(outdir, rep_text=None, fail_on="fail", where=""):
    """Validate every file of an --output directory; returns the native report."""
    texts = {}
    for fmt, name in FILES.items():
        path = os.path.join(outdir, name)
        if not os.path.isfile(path):
            fail(f"{where}: {name} missing")
            return None
        try:
            with open(path, encoding="utf-8") as f:
                texts[fmt] = f.read()
        except UnicodeDecodeError as e:
            fail(f"{where}: {name} is not UTF-8: {e}")
            return None
    rep = check_native(rep_text or texts["json"], where + "/" + FILES["json"])
    check_gbench(texts["gbench"], rep, where + "/" + FILES["gbench"])
    check_openmetrics(texts["openmetrics"], rep, where + "/" + FILES["openmetrics"])
    check_junit(os.path.join(outdir, FILES["junit"]), rep, fail_on, where + "/" + FILES["junit"])
    check_csv(texts["csv"], rep, where + "/" + FILES["csv"])
    leftovers = [n for n in os.listdir(outdir) if n not in FILES.values()]
    if leftovers:
        fail(f"{where}: files besides the reports: {leftovers}")
    return rep


def normalise(fmt, text):
    """What may differ between two runs on the same input: the gbench date, and the binary's path in the command."""
    if fmt == "gbench":
        text = re.sub(r'^    "date": "[^"]*",$', '    "date": "DATE",', text, count=1, flags=re.M)
    return text.replace(TLBPROF, "tlbprof")


with tempfile.TemporaryDirectory() as tmp:
    # 1. Golden files: the fixtures re-rendered in every format, byte for byte (after normalise()).
    # vm-chase-16m-run1: a run of this tlbprof, with allocations, so its comparisons carry an interval.
    for fixture in ("cloud-xeon-128m", "cloud-xeon-size-sweep", "vm-chase-16m-run1"):
        work = os.path.join(tmp, fixture)
        os.makedirs(os.path.join(work, "out"))
        shutil.copy(os.path.join(DATA, fixture + ".json"), work)
        run(["analyze", fixture + ".json", "--format", ALL, "--output", "out/", "--quiet"], cwd=work)
        check_all(os.path.join(work, "out"), where=fixture)
        gold = os.path.join(GOLDEN, fixture)
        for fmt, name in FILES.items():
            path = os.path.join(work, "out", name)
            if not os.path.exists(path):
                continue
            with open(path, encoding="utf-8") as f:
                got = normalise(fmt, f.read())
            if REGENERATE:
                os.makedirs(gold, exist_ok=True)
                with open(os.path.join(gold, name), "w", encoding="utf-8") as f:
                    f.write(got)
                continue
            try:
                with open(os.path.join(gold, name), encoding="utf-8") as f:
                    want = f.read()
            except FileNotFoundError:
                fail(f"golden file {fixture}/{name} missing (run with --regenerate)")
                continue
            if got != want:
                diff = next(i for i, (a, b) in enumerate(zip(got.splitlines() + [""], want.splitlines() + [""]))
                            if a != b)
                fail(f"{fixture}/{name} differs from its golden file at line {diff + 1}: "
                     f"{got.splitlines()[diff:diff + 1]} vs {want.splitlines()[diff:diff + 1]} "
                     f"(intended? tests/integration/test_formats.py build/tlbprof --regenerate)")

    # Two runs' CSV files appended into one table keep apart by their run id; a re-analysis keeps its run's id.
    tables = []
    for fixture in ("vm-chase-16m-run1", "vm-chase-16m-run2", "vm-chase-16m-run1"):
        text = run(["analyze", os.path.join(DATA, fixture + ".json"), "--format", "csv", "--output", "-",
                    "--quiet"]).stdout
        tables.append(pandas.read_csv(io.StringIO(text), dtype=str, keep_default_na=False))
    both = pandas.concat(tables, ignore_index=True)
    ids = [t["run"].iloc[0] for t in tables]
    if ids[0] == ids[1] or ids[0] != ids[2] or both.groupby("run").ngroups != 2 or \
            len(both[both["run"] == ids[1]]) != len(tables[1]):
        fail(f"csv: run ids of two runs and a re-analysis of the first: {ids}")

    # compare.py --utest on two runs of each workload: repetitions (allocations; page faults: processes) a side.
    for pair in (("vm-chase-16m-run1", "vm-chase-16m-run2"), ("vm-pagefault-32m-run1", "vm-pagefault-32m-run2")):
        docs, paths = [], []
        for fixture in pair:
            path = os.path.join(DATA, fixture + ".json")
            fixture_rep = json.loads(run(["analyze", path, "--json", "-", "--quiet"]).stdout)
            text = run(["analyze", path, "--format", "gbench", "--output", "-", "--quiet"]).stdout
            docs.append(check_gbench(text, fixture_rep, fixture + " gbench"))
            paths.append(os.path.join(tmp, fixture + ".gbench.json"))
            with open(paths[-1], "w") as f:
                f.write(text)
        if all(docs):
            check_utest_pairs(*docs, " vs ".join(pair))
            check_compare_py(paths, docs, " vs ".join(pair))

    # 2. One format to stdout: the table moves to stderr; --fail-on warn turns the sweep's warning into a failure.
    sweep = os.path.join(DATA, "cloud-xeon-size-sweep.json")
    p = run(["analyze", sweep, "--format", "junit", "--output", "-", "--fail-on", "warn"], expect=(1,))
    junit = os.path.join(tmp, "stdout.junit.xml")
    with open(junit, "w") as f:
        f.write(p.stdout)
    rep = json.loads(run(["analyze", sweep, "--json", "-", "--quiet"]).stdout)
    check_junit(junit, rep, "warn", "sweep --fail-on warn")
    if "verdict: warn" not in p.stderr:
        fail(f"with a format on stdout the table goes to stderr: {p.stderr[-200:]!r}")
    # One format to a named file, written over an older one.
    prom = os.path.join(tmp, "node.prom")
    with open(prom, "w") as f:
        f.write("old\n")
    run(["analyze", sweep, "--format", "openmetrics", "--output", prom, "--quiet"])
    with open(prom) as f:
        check_openmetrics(f.read(), rep, "node.prom")
    # --output alone is the native JSON; --json still works beside it.
    both = os.path.join(tmp, "both")
    os.mkdir(both)
    run(["analyze", sweep, "--output", both, "--json", os.path.join(tmp, "also.json"), "--quiet"])
    if sorted(os.listdir(both)) != ["tlbprof.json"] or not os.path.exists(os.path.join(tmp, "also.json")):
        fail(f"--output DIR alone writes tlbprof.json, --json its own file: {os.listdir(both)}")

    # 3. Failed and skipped phases, and strings every format must escape.
    with open(os.path.join(DATA, "cloud-xeon-128m.json")) as f:
        doc = json.load(f)
    odd = 'Xeon "quoted", back\\slash & <tag> \'apostrophe\'\nsecond line'
    doc["environment"]["cpu"]["model_name"] = odd
    doc["phases"][1].update(status="failed", reason='no huge pages: pool "2M" is empty, <none> & more\nsee smaps',
                            ns_per_access=None, cycles_per_access=None)
    skipped = json.loads(json.dumps(doc["phases"][0]))
    skipped.update(name='chase/4k/"odd, name"\\x/r1', status="skipped", reason="skipped, on purpose",
                   ns_per_access=None, cycles_per_access=None)
    doc["phases"].append(skipped)
    bad = os.path.join(tmp, "failed-phases.json")
    with open(bad, "w") as f:
        json.dump(doc, f)
    out = os.path.join(tmp, "failed")
    os.mkdir(out)
    run(["analyze", bad, "--format", ALL, "--output", out, "--quiet"], expect=(1,))
    rep = check_all(out, where="failed-phases")
    if rep:
        with open(os.path.join(out, FILES["openmetrics"])) as f:
            om = check_openmetrics(f.read(), rep, "failed-phases")
        info = [dict(k[1]) for k in (om or {}) if k[0] == "tlbprof_run"]
        if [i.get("cpu") for i in info] != [odd]:
            fail(f"an escaped label value reads back as written: {info}")
        root = ET.parse(os.path.join(out, FILES["junit"])).getroot()
        props = {p.get("name"): p.get("value") for p in root.iter("property")}
        if props.get("cpu") != odd:
            fail(f"an XML attribute reads back as written: {props.get('cpu')!r}")
        with open(os.path.join(out, FILES["gbench"])) as f:
            if json.load(f)["context"]["cpu_model"] != odd:
                fail("gbench context keeps the CPU model")

    # 4. A live run writes all five, each valid.
    live = os.path.join(tmp, "live")
    os.mkdir(live)
    p = run(["--size", "8M", "--iters", "100k", "--repeat", "3", "--format", ALL, "--output", live, "--quiet"],
            expect=(0, 1))
    if p.returncode in (0, 1):
        rep = check_all(live, where="live")
        with open(os.path.join(live, FILES["gbench"])) as f:
            ctx = json.load(f)["context"]
        if not ctx.get("host_name") or ctx.get("num_cpus", 0) < 1:
            fail(f"a measuring run records its host and CPUs: {ctx}")

    # 5. tlbprof run: an unmarked command is one phase measured by wall time alone (no accesses declared), named
    # by its own workload; a command path with bytes that are not UTF-8 (legal on Linux) keeps every format UTF-8.
    odd_dir = os.path.join(os.fsencode(tmp), b'we"ird<&>\x01\xff\xfe dir')
    os.mkdir(odd_dir)
    odd_cmd = os.path.join(odd_dir, b"tr,ue")
    shutil.copy("/bin/true", odd_cmd)
    for name, cmd in (("run-sleep", ["sleep", "0.05"]), ("run-odd-path", [odd_cmd])):
        out = os.path.join(tmp, name)
        os.mkdir(out)
        p = subprocess.run([os.fsencode(TLBPROF), b"run", b"--quiet", b"--format", ALL.encode(), b"--output",
                            os.fsencode(out) + b"/", b"--", *[os.fsencode(c) for c in cmd]],
                           capture_output=True, timeout=120)
        if p.returncode != 0:
            fail(f"{name}: exit {p.returncode}: {p.stderr.decode(errors='replace')[-300:]}")
            continue
        rep = check_all(out, where=name)
        if not rep:
            continue
        if [(x["name"], x["workload"]) for x in rep["phases"]] != [("command", "command")] or \
                not wall_only(rep["phases"][0]):
            fail(f"{name}: one phase 'command' measured by wall time: {[x['name'] for x in rep['phases']]}")
        with open(os.path.join(out, FILES["gbench"])) as f:
            ctx = json.load(f)["context"]
        if ctx.get("workload") != "command":
            fail(f"{name}: gbench context.workload {ctx.get('workload')!r}, want 'command' (not the default 'chase')")
        if name == "run-odd-path":
            # Each byte that is not UTF-8 becomes U+FFFD; nothing is dropped or cut short.
            want = odd_cmd.decode("utf-8", "replace")
            if rep["command"][-1] != want or rep["target"]["argv"] != [want] or rep["target"]["path"] != want:
                fail(f"{name}: command {rep['command'][-1:]!r}, target argv {rep['target']['argv']!r}, path "
                     f"{rep['target'].get('path')!r}, want {want!r}")
            root = ET.parse(os.path.join(out, FILES["junit"])).getroot()
            cmd = {x.get("name"): x.get("value") for x in root.iter("property")}.get("command", "")
            if not cmd.endswith(want.replace("\x01", "\ufffd")):
                fail(f"{name}: the JUnit command property {cmd[-60:]!r} (XML cannot carry \\x01: U+FFFD)")

    # 6. --output FORMAT=FILE: each format to a path of its own, one of them stdout; commas inside a path.
    per = os.path.join(tmp, "per-format")
    os.mkdir(per)
    junit_path, gbench_path = os.path.join(per, "ci.xml"), os.path.join(per, "bench,1.json")
    p = run(["analyze", sweep, "--output", f"junit={junit_path},gbench={gbench_path}", "--output", "csv=-"])
    if sorted(os.listdir(per)) != ["bench,1.json", "ci.xml"]:
        fail(f"--output junit=FILE,gbench=FILE: {sorted(os.listdir(per))}")
    rep = json.loads(run(["analyze", sweep, "--json", "-", "--quiet"]).stdout)
    check_junit(junit_path, rep, "fail", "per-format junit")
    with open(gbench_path) as f:
        check_gbench(f.read(), rep, "per-format gbench")
    check_csv(p.stdout, rep, "per-format csv on stdout")
    if "verdict:" not in p.stderr:
        fail(f"with csv=- the table goes to stderr: {p.stderr[-200:]!r}")

if REGENERATE:
    print(f"golden files written to {GOLDEN}; review them with git diff")
fail.finish("all format checks passed")
