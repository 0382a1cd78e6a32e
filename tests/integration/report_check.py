# SPDX-License-Identifier: MIT
"""Validation of tlbprof.report/1 documents: the shipped JSON Schema (python3-jsonschema), then the relations
between fields that a schema cannot state (min <= median <= max, sample counts, names that refer to phases)."""

import json
import os
import shutil
import subprocess
import sys
from urllib.parse import urldefrag, urljoin

try:
    import jsonschema
except ImportError:
    print("FAIL: python3-jsonschema is missing: apt-get install python3-jsonschema (tools/bootstrap installs it)",
          file=sys.stderr)
    sys.exit(1)

SCHEMA_PATH = os.environ.get("TLBPROF_TEST_SCHEMA") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "share", "tlbprof", "report.schema.json")

# Which definition of the schema a document is checked against:
#   document   - the root: any tlbprof.report/1 (hand-made fixtures, reports of older versions)
#   written    - $defs/written: a report as this tlbprof writes it from a run (every field, nothing undescribed)
#   reanalysed - $defs/reanalysed: a report rewritten by tlbprof analyze
KINDS = ("document", "written", "reanalysed")


SCHEMA_DIR = os.path.dirname(SCHEMA_PATH)
# The other commands' documents and their schemas beside the report's: compare, env, events.
COMMAND_SCHEMAS = {name: os.path.join(SCHEMA_DIR, f"{name}.schema.json") for name in ("compare", "env", "events")}


def schema_walk(node, fn, path=""):
    """fn(node, path) on node and everything inside it."""
    fn(node, path)
    if isinstance(node, dict):
        for k, v in node.items():
            schema_walk(v, fn, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            schema_walk(v, fn, f"{path}/{i}")


def schema_store():
    """Every shipped schema by its $id."""
    store = {}
    for path in [SCHEMA_PATH, *COMMAND_SCHEMAS.values()]:
        with open(path) as f:
            s = json.load(f)
        store[s["$id"]] = s
    return store


def schema_resolve(store, base_id, ref):
    """The node ref points at: "#/..." inside base_id's schema, "urn:...#/..." inside another. (id, node)."""
    uri, frag = urldefrag(ref)
    sid = uri or base_id
    node = store[sid]
    for part in filter(None, frag.lstrip("/").split("/")):
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return sid, node


def portability_errors(schema, store=None):
    """The rules that keep a schema portable across validators, one line per breach:
    - no unevaluatedProperties/Items or dynamic references (Ajv and python-jsonschema disagreed on them across
      $ref and if/then/else);
    - no $ref beside other assertions (draft-07 validators ignore its siblings): an extension says allOf: [{$ref}];
    - a strict variant (additionalProperties: false) lists every property of what it extends, else a field the base
      allows would be refused;
    - every $ref resolves, inside the schema or into another shipped one by its $id."""
    store = dict(store or schema_store())
    store[schema["$id"]] = schema
    errors = []

    def base_names(sid, node):
        names = set(node.get("properties", {}))
        refs = [sub["$ref"] for sub in node.get("allOf", []) if "$ref" in sub] + ([node["$ref"]] if "$ref" in node
                                                                                    else [])
        for ref in refs:
            names |= base_names(*schema_resolve(store, sid, ref))
        return names

    def check(node, path):
        if not isinstance(node, dict):
            return
        for k in ("unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef"):
            if k in node:
                errors.append(f"{path}: {k} is not portable")
        if "$ref" in node:
            try:
                schema_resolve(store, schema["$id"], node["$ref"])
            except (KeyError, IndexError, ValueError):
                errors.append(f"{path}: $ref {node['$ref']} does not resolve")
                return
            extra = set(node) - {"$ref", "description", "$comment"}
            if extra:
                errors.append(f"{path}: $ref beside {sorted(extra)}: use allOf")
        if node.get("additionalProperties") is False and any("$ref" in sub for sub in node.get("allOf", [])):
            try:
                missing = base_names(schema["$id"], node) - set(node.get("properties", {}))
            except (KeyError, IndexError, ValueError):
                missing = set()
            if missing:
                errors.append(f"{path}: strict variant does not list {sorted(missing)} of what it extends")

    schema_walk(schema, check)
    return errors


def _urn_join(base, ref):
    # urljoin() drops a urn: base, so "#/$defs/x" inside the report schema would resolve against the referrer.
    return urldefrag(base)[0] + ref if ref.startswith("#") else urljoin(base, ref)


_command_validators = {}


def command_schema_errors(doc, name):
    """One line per violation of the schema of tlbprof's name command (compare, env, events), none if valid; the
    report schema is loaded beside it, since env's environment is a report's."""
    if name not in _command_validators:
        store = schema_store()
        with open(COMMAND_SCHEMAS[name]) as f:
            schema = json.load(f)
        resolver = jsonschema.RefResolver.from_schema(schema, store=store, urljoin_cache=_urn_join)
        _command_validators[name] = jsonschema.Draft202012Validator(schema, resolver=resolver)
    errs = sorted(_command_validators[name].iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message[:300]}" for e in errs]


AJV_CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ajv_check.js")


def ajv_errors(schema_paths, docs=()):
    """Ajv in strict mode (ajv_check.js): every schema and $defs entry must compile, each (uri, path) of docs must
    validate. One line per failure, none when all passed."""
    node = shutil.which("node")
    if node is None:
        return ["node is missing: apt-get install nodejs (tools/bootstrap --test installs it and Ajv)"]
    p = subprocess.run([node, AJV_CHECK, *schema_paths, "--", *(f"{uri}={path}" for uri, path in docs)],
                       capture_output=True, text=True, timeout=120)
    if p.returncode == 0:
        return []
    return [line[6:] if line.startswith("FAIL: ") else line for line in p.stderr.splitlines() if line] or \
        [f"ajv_check.js: exit {p.returncode}"]


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


class ReportError(AssertionError):
    pass


def need(cond, what):
    if not cond:
        raise ReportError(what)


_validators = {}


def load_schema():
    with open(SCHEMA_PATH) as f:
        return json.load(f)


def validator(kind):
    """A Draft 2020-12 validator for one of KINDS (the schema is read once)."""
    if kind not in KINDS:
        raise ValueError(f"unknown report kind {kind!r}")
    if kind not in _validators:
        schema = load_schema()
        if kind != "document":
            # A definition as the root: the same $defs, so every "#/$defs/..." reference resolves unchanged.
            schema = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/" + kind}
        _validators[kind] = jsonschema.Draft202012Validator(schema)
    return _validators[kind]


def schema_errors(rep, kind="written"):
    """One line per schema violation ("phases/0/params/size_bytes: '16M' is not of type 'integer'"), none if valid."""
    errs = sorted(validator(kind).iter_errors(rep), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message[:300]}" for e in errs]


def check_stats(obj, where, n):
    need(obj["min"] <= obj["median"] <= obj["max"], f"{where}: min <= median <= max")
    need(len(obj["samples"]) == n, f"{where}.samples has {len(obj['samples'])} values, want {n}")


def validate(rep, kind="written"):
    """Raise ReportError when rep does not validate against the schema definition `kind` (see KINDS), or when
    its fields contradict each other."""
    errs = schema_errors(rep, kind)
    need(not errs, f"not a valid {kind} report ({len(errs)} schema errors): " + "; ".join(errs[:5]))
    names = [p["name"] for p in rep["phases"]]
    need(len(set(names)) == len(names), f"phase names repeat: {names}")
    for i, p in enumerate(rep["phases"]):
        w = f"phases[{i}]"
        params, ns = p["params"], p.get("ns_per_access")
        declared = p.get("declared")
        if declared is not None:
            # tlbprof run: one sample per occurrence when accesses were declared, else none (wall times only).
            need(len(declared["wall_ns"]) == declared["occurrences"], f"{w}.declared.wall_ns: one per occurrence")
            if p["status"] == "ok" and declared["accesses"] is not None:
                need(ns is not None, f"{w}: accesses declared, so ns per access")
                check_stats(ns, w + ".ns_per_access", declared["occurrences"])
            elif p["status"] == "ok":
                need(ns is None, f"{w}: no accesses declared, so no ns per access")
        elif p["status"] == "ok":
            # Fixed: --repeat samples per allocation (page faults: per process). Auto: at least that many.
            allocations = params.get("allocations", 1) if "processes" not in p else p["processes"]
            want = params["repeat"] * allocations
            if params.get("iterations_mode") == "auto":
                need(len(ns["samples"]) >= want, f"{w}: auto mode took fewer than {want} samples")
                want = len(ns["samples"])
                need(p["precision"]["stop"] in ("precision", "budget", "max_samples"), f"{w}.precision.stop")
            check_stats(ns, w + ".ns_per_access", want)
        if ns and "sample_allocations" in p:
            need(len(p["sample_allocations"]) == len(ns["samples"]), f"{w}.sample_allocations: one per sample")
        # Where the phase's time went: its parts fit in its wall time. Written by this tlbprof; older reports lack it.
        allocates = "warmup" in p and not declared
        need(kind != "written" or "wall_ms" in p and "populate_ms" in p, f"{w}.wall_ms, populate_ms: written")
        if p.get("wall_ms") is not None and allocates and p["status"] == "ok":
            parts = (p["populate_ms"] or 0) + (p["warmup"]["ms"] or 0) + p["timed_ns"] / 1e6
            need(parts <= p["wall_ms"] * 1.001 + 0.01, f"{w}: populate, warm-up and timed ({parts:.1f} ms) "
                 f"fit in wall_ms ({p['wall_ms']:.1f})")
        sp = p.get("second_pass")
        if sp is not None:
            need(kind != "written" or all(k in sp for k in ("ms", "warmup_passes", "unsettled")),
                 f"{w}.second_pass: ms, warmup_passes, unsettled written")
            n_passes = len(sp.get("passes_after_s", []))
            if "warmup_passes" in sp:
                need(len(sp["warmup_passes"]) == n_passes, f"{w}.second_pass.warmup_passes: one per pass")
                need((sp["unsettled"] is None) == (not sp["samples"]) and
                     (sp["unsettled"] is None or 0 <= sp["unsettled"] <= n_passes),
                     f"{w}.second_pass.unsettled: a count of its passes, null without them")
        cyc = p.get("cycles_per_access")
        if ns and cyc and "samples" in cyc:
            need(len(cyc["samples"]) == len(ns["samples"]), f"{w}.cycles_per_access: one value per sample")
    an = rep["analysis"]
    # Nothing the judge said was lost at its buffers: a message cut there ends in "…", and evidence past its cap is
    # counted in evidence_dropped. Either is a defect of the check that wrote it, in any report.
    for what in ("checks", "findings"):
        for c in an.get(what) or []:
            need(not c["message"].endswith("\u2026"), f"analysis.{what} {c['id']}: message cut at "
                 f"{len(c['message'].encode())} bytes: {c['message'][:80]}…")
            need("evidence_dropped" not in (c.get("evidence") or {}),
                 f"analysis.{what} {c['id']}: {(c.get('evidence') or {}).get('evidence_dropped')} evidence value(s) "
                 "dropped past the cap")
    for i, c in enumerate(an["comparisons"]):
        need(c["baseline"] in names and c["variant"] in names, f"analysis.comparisons[{i}] names unknown phases")
    if "phases" in an:
        need([x["name"] for x in an["phases"]] == names, "analysis.phases is parallel to phases")
    watch = (rep.get("target") or {}).get("watch")
    if watch and watch.get("affinity"):
        # The pinning check's samples nest: one-CPU ones among the known-mask ones among the hot thread's own. A
        # written report carries hot_samples (the root schema admits reports from before it).
        aff = watch["affinity"]
        need(kind != "written" or "hot_samples" in aff, "target.watch.affinity.hot_samples: written by this tlbprof")
        need(aff["single_cpu"] <= aff["samples"] <= aff.get("hot_samples", aff["samples"]),
             f"target.watch.affinity: single_cpu <= samples <= hot_samples ({aff})")
