#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The JSON Schemas of the other commands' documents, tlbprof.compare/1, tlbprof.env/1 and tlbprof.events/1: valid
Draft 2020-12, portable across validators, compiled by Ajv in strict mode; every document these commands write here
validates under python3-jsonschema and Ajv, broken ones are rejected, and each command's man page names every
field its schema has."""
import copy
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import (COMMAND_SCHEMAS, SCHEMA_PATH, Failures, ajv_errors, command_schema_errors,  # noqa: E402
                          jsonschema, portability_errors, schema_store, schema_walk)

TLBPROF = sys.argv[1]
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.environ.get("TLBPROF_TEST_DATA_DIR", os.path.join(SRC, "tests", "data"))
fail = Failures()
store = schema_store()
schemas = {}

# 1. Each schema: Draft 2020-12 with its $id and title, and portable (report_check.portability_errors()).
for name, path in COMMAND_SCHEMAS.items():
    with open(path) as f:
        s = json.load(f)
    schemas[name] = s
    try:
        jsonschema.Draft202012Validator.check_schema(s)
    except jsonschema.exceptions.SchemaError as e:
        fail(f"{name}: not a valid Draft 2020-12 schema: {e.message}")
    if s.get("$schema") != "https://json-schema.org/draft/2020-12/schema" or \
            s.get("$id") != f"urn:tlbprof:schema:{name}:1" or s.get("title") != f"tlbprof.{name}/1":
        fail(f"{name}: $schema {s.get('$schema')}, $id {s.get('$id')}, title {s.get('title')}")
    for e in portability_errors(s, store):
        fail(f"{name}: {e}")
# The portability rules can fail: a $ref beside an assertion, and a $ref to nowhere.
bad = copy.deepcopy(schemas["events"])
bad["$defs"]["extra"] = {"$ref": "#/$defs/nowhere"}
bad["properties"] = {"x": {"$ref": "urn:tlbprof:schema:report:1#/$defs/stats", "type": "object"}}
if len(portability_errors(bad, store)) < 2:
    fail(f"portability_errors() misses a dangling $ref or a $ref with siblings: {portability_errors(bad, store)}")


def tlbprof(args, env=None, timeout=120):
    p = subprocess.run([TLBPROF, *args], capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stderr.strip()


# 2. Documents of every shape these commands write here: (schema name, path).
docs = []
with tempfile.TemporaryDirectory() as d:
    def make(name, tag, args, env=None, ok=(0,)):
        out = os.path.join(d, f"{name}-{re.sub(r'[^a-z0-9-]', '-', tag)}.json")
        # The options first: after compare's "--" every word is a report.
        rc, err = tlbprof([args[0], "--json", out, "-q", *args[1:]], env)
        if rc not in ok or not os.path.exists(out):
            fail(f"{name} {tag}: exit {rc}: {err}")
        else:
            docs.append((name, out))

    make("env", "here", ["env"])
    make("env", "forced-skx", ["env"], {"LIBPFM_FORCE_PMU": "skx", "LIBPFM_ENCODE_INACTIVE": "1"})
    for model in ("skx", "zen3", "spr,others=2"):
        make("env", f"sim-{model}", ["env"], {"TLBPROF_SIMULATE_PMU": model})
        make("events", f"sim-{model}", ["events"], {"TLBPROF_SIMULATE_PMU": model})
    make("events", "here", ["events"])
    for pmu in ("skx", "icl", "amd64_fam19h_zen3"):
        make("events", f"pmu-{pmu}", ["events", "--pmu", pmu])

    # compare: one report a side, several a side, reports of other workloads, a failed phase, a report with itself.
    r1, r2 = (os.path.join(DATA, f"vm-chase-16m-run{i}.json") for i in (1, 2))
    f1, f2 = (os.path.join(DATA, f"vm-pagefault-32m-run{i}.json") for i in (1, 2))
    with open(r2) as f:
        rep = json.load(f)
    rep["phases"][1]["status"] = "failed"
    failed = os.path.join(d, "failed.json")
    with open(failed, "w") as f:
        json.dump(rep, f)
    cases = {"chase": [r1, r2], "pagefault": [f1, f2], "itself": [r1, r1], "kinds": [r1, f1],
             "failed": [r1, failed, "--fail-on", "warn"], "runs": [r1, r2, "--", r2, r1],
             "runs-missing": [r1, failed, "--", r2, os.path.join(DATA, "cloud-xeon-128m.json")]}
    for tag, args in cases.items():
        make("compare", tag, ["compare", *args], ok=(0, 1, 3))

    # Each validates under python3-jsonschema ...
    for name, path in docs:
        with open(path) as f:
            doc = json.load(f)
        for e in command_schema_errors(doc, name)[:5]:
            fail(f"{os.path.basename(path)}: {e}")
    # ... and under Ajv in strict mode, which compiles every schema and every one of its $defs.
    schema_paths = [SCHEMA_PATH, *COMMAND_SCHEMAS.values()]
    for e in ajv_errors(schema_paths, [(schemas[name]["$id"], path) for name, path in docs]):
        fail(f"ajv: {e}")

    # 3. Broken documents are rejected, each at the field that was broken.
    by_tag = {os.path.basename(p)[:-5]: p for _, p in docs}

    def load(tag):
        with open(by_tag[tag]) as f:
            return json.load(f)

    BROKEN = [
        ("env", "env-here", lambda x: x.pop("problems"), "(top)"),
        ("env", "env-here", lambda x: x.update(schema="tlbprof.env/2"), "schema"),
        ("env", "env-here", lambda x: x["problems"].append({"id": "pmu_hidden", "severity": "fatal", "message": "m",
                                                            "command": None, "advice": None}), "problems/"),
        ("env", "env-here", lambda x: x["environment"].pop("tlb_reach"), "environment"),
        ("env", "env-here", lambda x: x["counters"][0].update(status="broken"), "counters/0"),
        ("env", "env-here", lambda x: x.update(extra=1), "(top)"),
        ("events", "events-here", lambda x: x["events"][0].pop("metric"), "events/0"),
        ("events", "events-here", lambda x: x["pmu"].update(forced="no"), "pmu/forced"),
        ("events", "events-here", lambda x: x["events"][0].update(type_name="hardware", type=None, config=None),
         "events/0"),
        ("compare", "compare-chase", lambda x: x.update(verdict="maybe"), "verdict"),
        ("compare", "compare-chase", lambda x: x["phases"][0].pop("ns"), "phases/0"),
        ("compare", "compare-chase", lambda x: x["phases"][0]["ns"].update(p_value=1.5), "phases/0/ns/p_value"),
        ("compare", "compare-chase", lambda x: x["checks"][0].update(base="ok"), "checks/0/base"),
        ("compare", "compare-chase", lambda x: x["method"].update(extra=1), "method"),
    ]
    for name, tag, change, where in BROKEN:
        doc = load(tag)
        change(doc)
        errs = command_schema_errors(doc, name)
        if not any(e.startswith(where) for e in errs):
            fail(f"{tag} broken at {where}: not rejected there: {errs[:3]}")

# 4. Each command's man page names every field of its schema.
for name, man in (("compare", "tlbprof-compare.1"), ("env", "tlbprof-env.1"), ("events", "tlbprof-events.1")):
    props = set()
    schema_walk(schemas[name], lambda node, path: props.update(node["properties"]) if isinstance(node, dict) and
                isinstance(node.get("properties"), dict) else None)
    with open(os.path.join(SRC, "man", man)) as f:
        text = f.read().replace("\\-", "-")
    words = set(re.findall(r"[A-Za-z0-9_:]+", text))
    missing = sorted(props - words)
    if missing:
        fail(f"{man} does not name these fields of {name}.schema.json: {missing}")
    if f"{name}.schema.json" not in text:
        fail(f"{man} does not name its schema file {name}.schema.json")

fail.finish(f"compare, env and events schemas: {len(docs)} documents valid under python3-jsonschema and Ajv, "
            f"{len(BROKEN)} broken ones rejected")
