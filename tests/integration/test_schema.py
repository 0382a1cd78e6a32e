#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The JSON Schema of tlbprof.report/1: a valid Draft 2020-12 schema whose references resolve, that accepts the
fixtures and a fresh report, rejects broken ones, and whose every field is described in tlbprof-report(5)."""
import copy
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import SCHEMA_PATH, Failures, ajv_errors, jsonschema, load_schema, portability_errors, schema_errors, schema_walk, validate  # noqa: E402,E501

TLBPROF = sys.argv[1]
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.environ.get("TLBPROF_TEST_DATA_DIR", os.path.join(SRC, "tests", "data"))
MAN = os.path.join(SRC, "man", "tlbprof-report.5")
fail = Failures()
schema = load_schema()

# 1. The schema is a valid Draft 2020-12 schema, and every $ref points at something in it.
try:
    jsonschema.Draft202012Validator.check_schema(schema)
except jsonschema.exceptions.SchemaError as e:
    fail(f"not a valid Draft 2020-12 schema: {e.message}")
if schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
    fail(f"$schema: {schema.get('$schema')}")


walk = schema_walk


def pointer(ref):
    node = schema
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def check_ref(node, path):
    if isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        try:
            if not ref.startswith("#/"):
                raise KeyError(ref)
            pointer(ref)
        except (KeyError, IndexError, ValueError):
            fail(f"{path}: $ref {ref} does not resolve inside the schema")


walk(schema, check_ref)
if fail:
    fail.finish("")     # validating with a broken schema would only raise
if not str(schema.get("$id", "")).startswith("urn:tlbprof:schema:report:"):
    fail(f"$id: {schema.get('$id')}")


# Portable across validators (report_check.portability_errors() says which rules and why).
for e in portability_errors(schema):
    fail(e)

# Every property name the schema describes, and every name a "required" list asks for.
props, required = set(), set()


def collect(node, path):
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            props.update(node["properties"])
        if isinstance(node.get("required"), list):
            required.update(node["required"])


walk(schema, collect)
if required - props:
    fail(f"required but never described: {sorted(required - props)}")

# 2. The fixtures are tlbprof.report/1 documents; the example report too (taken by an earlier 0.1.0, before
# build_ms, so only as a document, not as this version writes it).
fixtures = sorted(glob.glob(os.path.join(DATA, "*.json"))) + sorted(glob.glob(os.path.join(SRC, "examples", "reports",
                                                                                           "*.json")))
if len(fixtures) < 3:
    fail(f"fixtures not found: {fixtures}")
for path in fixtures:
    with open(path) as f:
        doc = json.load(f)
    try:
        validate(doc, "document")
    except AssertionError as e:
        fail(f"{os.path.basename(path)}: {e}")

# 3. A fresh report validates as written; with a field changed or added, it must not.
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "r.json")
    p = subprocess.run([TLBPROF, "--pages", "4k", "--size", "1M", "--iters", "20k", "--repeat", "2", "--controls",
                        "always", "--quiet", "--json", out], capture_output=True, text=True, timeout=120)
    fresh = None
    if p.returncode not in (0, 1):
        fail(f"fresh run: exit {p.returncode}: {p.stderr}")
    else:
        with open(out) as f:
            fresh = json.load(f)
        try:
            validate(fresh)
        except AssertionError as e:
            fail(f"fresh report: {e}")
with open(os.path.join(DATA, "cloud-xeon-128m.json")) as f:
    fixture = json.load(f)

# The same under Ajv in strict mode: the schema and each of its definitions compile, the documents validate.
URI = schema.get("$id", "")
with tempfile.TemporaryDirectory() as d:
    docs = [(URI, path) for path in fixtures]
    if fresh:
        docs.append((URI + "#/$defs/written", out_fresh := os.path.join(d, "fresh.json")))
        with open(out_fresh, "w") as f:
            json.dump(fresh, f)
    for e in ajv_errors([SCHEMA_PATH], docs):
        fail(f"ajv: {e}")


def measured(rep):
    return next(p for p in rep["phases"] if p.get("role", "measure") == "measure")


def control(rep):
    return next(p for p in rep["phases"] if p.get("role") == "control")


# (name, the report it changes, the change, where the schema must object): each must fail the root schema at
# that place, so every report kind rejects it for the right reason.
M = "phases/0"      # the fixture's first phase is a measured one
BROKEN = [
    ("no schema", fixture, lambda d: d.pop("schema"), "(top): 'schema'"),
    ("schema 2", fixture, lambda d: d.update(schema="tlbprof.report/2"), "schema:"),
    ("no environment", fixture, lambda d: d.pop("environment"), "(top): 'environment'"),
    ("no verdict", fixture, lambda d: d.pop("verdict"), "(top): 'verdict'"),
    ("verdict maybe", fixture, lambda d: d.update(verdict="maybe"), "verdict:"),
    ("interrupted string", fixture, lambda d: d.update(interrupted="no"), "interrupted:"),
    ("command empty", fixture, lambda d: d.update(command=[]), "command:"),
    ("phases object", fixture, lambda d: d.update(phases={}), "phases:"),
    ("phase status unknown", fixture, lambda d: measured(d).update(status="done"), M + "/status:"),
    ("failed without reason", fixture, lambda d: measured(d).update(status="failed", reason=""), M + "/reason:"),
    ("ok without samples", fixture, lambda d: measured(d).update(ns_per_access=None), M + "/ns_per_access:"),
    ("size_bytes string", fixture, lambda d: measured(d)["params"].update(size_bytes="128M"),
     M + "/params/size_bytes:"),
    ("size_bytes negative", fixture, lambda d: measured(d)["params"].update(size_bytes=-1), M + "/params/size_bytes:"),
    ("repeat boolean", fixture, lambda d: measured(d)["params"].update(repeat=True), M + "/params/repeat:"),
    ("sample not a number", fixture, lambda d: measured(d)["ns_per_access"]["samples"].append("fast"),
     M + "/ns_per_access/samples/1:"),
    ("page size 3m", fixture, lambda d: measured(d)["page"].update(requested="3m"), M + "/page/requested:"),
    ("backing unknown", fixture, lambda d: measured(d)["page"].update(backing="thp2"), M + "/page/backing:"),
    ("huge_fraction above 1", fixture, lambda d: measured(d)["page"].update(huge_fraction=1.5),
     M + "/page/huge_fraction:"),
    ("counter status unknown", fixture, lambda d: d["counters"][0].update(status="broken"), "counters/0/status:"),
    ("denied without reason", fixture, lambda d: d["counters"][0].update(status="denied", reason=""),
     "counters/0/reason:"),
    ("self-check status unknown", fixture, lambda d: measured(d)["self_checks"][0].update(status="ok"),
     M + "/self_checks/0/status:"),
    ("check id with spaces", fixture, lambda d: d["analysis"]["checks"].append(
        {"id": "Too Fast", "status": "pass", "message": "", "evidence": {}}), "analysis/checks/0/id:"),
    ("comparison method unknown", fixture, lambda d: d["analysis"]["comparisons"].append(
        {"baseline": "a", "variant": "b", "delta_ns": 1.0, "speedup": 1.0, "delta_tlb_misses_per_access": None,
         "ns_per_tlb_miss": None, "cycles_per_tlb_miss": None,
         "attribution": {"tlb_ns": 1.0, "cache_ns": 0.0, "unexplained_ns": 0.0}, "method": "guess"}),
     "analysis/comparisons/0/method:"),
]
if fresh:
    C = f"phases/{fresh['phases'].index(control(fresh))}"
    BROKEN += [
        ("control without controls", fresh, lambda d: control(d).pop("controls"), C + ": 'controls'"),
        ("hugetlb pool count string", fresh, lambda d: d["environment"]["hugepages"].update(
            {"2M": {"page_bytes": 2097152, "nr": "0", "free": 0, "resv": 0, "surplus": 0}}),
         "environment/hugepages/2M/nr:"),
        ("precision stop unknown", fresh, lambda d: measured(d)["precision"].update(stop="bored"),
         f"phases/{fresh['phases'].index(measured(fresh))}/precision/stop:"),
    ]
for name, base, change, where in BROKEN:
    doc = copy.deepcopy(base)
    change(doc)
    errs = schema_errors(doc, "document")
    if not any(e.startswith(where) for e in errs):
        fail(f"broken report '{name}': no schema error at {where!r}: {errs[:3]}")

# What this tlbprof writes is complete and fully described: a field it always writes may not go missing,
# an undescribed one may not appear (the documents above may lack or add fields).
if fresh:
    INCOMPLETE = [
        ("phase without build_ms", lambda d: measured(d).pop("build_ms")),
        ("phase without prefault", lambda d: measured(d).pop("prefault")),
        ("verified page without rss_bytes", lambda d: measured(d)["page"].pop("rss_bytes")),
        ("environment without tlb_reach", lambda d: d["environment"].pop("tlb_reach")),
        ("analysis without summary", lambda d: d["analysis"].pop("summary")),
        ("an undescribed top-level field", lambda d: d.update(extra=1)),
        ("an undescribed phase field", lambda d: measured(d).update(extra=1)),
        ("an undescribed params field", lambda d: measured(d)["params"].update(extra=1)),
        ("an undescribed phase counter field", lambda d: next(iter(measured(d)["counters"].values())).update(
            extra=1)),
        ("an undescribed check field", lambda d: d["analysis"]["checks"][0].update(extra=1)),
    ]
    for name, change in INCOMPLETE:
        doc = copy.deepcopy(fresh)
        change(doc)
        if schema_errors(doc, "document"):
            fail(f"'{name}' should still be a tlbprof.report/1 document: {schema_errors(doc, 'document')[:2]}")
        if not schema_errors(doc, "written"):
            fail(f"'{name}' passes as a report this tlbprof writes")

# 4. tlbprof-report(5) describes every field of the schema, and no field the schema lacks.
with open(MAN) as f:
    man = f.read()
# A field's entry: ".TP", then a tag line with its name (or several names) in bold.
documented = {name for tag in re.findall(r"^\.TP\n(.*)$", man, re.M)
              for name in re.findall(r"\\fB([a-z0-9_]+)\\fR", tag)}
if props - documented:
    fail(f"fields in the schema but not in {os.path.basename(MAN)}: {sorted(props - documented)}")
if documented - props:
    fail(f"fields in {os.path.basename(MAN)} but not in the schema: {sorted(documented - props)}")
if "tlbprof.report/1" not in man or "report.schema.json" not in man:
    fail("the man page names the schema and its file")

fail.finish(f"schema: {len(props)} fields described, {len(fixtures)} fixtures valid, {len(BROKEN)} broken reports "
            "rejected")
