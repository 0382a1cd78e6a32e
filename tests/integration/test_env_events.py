#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tlbprof env and tlbprof events: sections and problems with fixes, JSON contracts, forced PMUs, exit codes."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_check import command_schema_errors  # noqa: E402

TLBPROF = sys.argv[1]
EVENTS_DIR = os.environ.get("TLBPROF_TEST_EVENTS_DIR") or os.path.join(os.path.dirname(__file__), "..", "..", "events")
failures = []


def need(cond, what):
    if not cond:
        failures.append(what)
    return cond


def run(*args, env=None):
    return subprocess.run([TLBPROF, *args], capture_output=True, text=True, timeout=60, env=env)


def check_env_json(doc, where, euid=None):
    need(doc.get("schema") == "tlbprof.env/1", f"{where}: schema {doc.get('schema')!r}")
    for key in ("tool", "command", "environment", "privileges", "steal", "events_dir", "pmu", "counters_error",
                "counters", "can_measure", "problems"):
        need(key in doc, f"{where}: no {key!r}")
    env = doc.get("environment", {})
    for key in ("cpu", "tlb", "tlb_reach", "kernel", "thp", "hugepages", "perf_event_paranoid", "hypervisor",
                "core_clock_ghz", "cpufreq"):
        need(key in env, f"{where}: environment has no {key!r}")
    priv = doc.get("privileges", {})
    euid = os.geteuid() if euid is None else euid
    need(priv.get("euid") == euid, f"{where}: euid {priv.get('euid')} vs {euid}")
    steal = doc.get("steal")
    if steal is not None:
        need(steal.get("window_ms") == 200 and 0 <= steal.get("fraction", -1) <= 1, f"{where}: steal {steal}")
    # The first access to populated pages: a trap per page from 1000 ns, and then (only then) the problem says so.
    first = env.get("first_access")
    shadow = any(p.get("id") == "shadow_paging" for p in doc.get("problems", []))
    if first is not None:
        need(first.get("pages", 0) >= 64 and first.get("ns_per_page", -1) >= 0, f"{where}: first_access {first}")
        need((first.get("ns_per_page", 0) >= 1000) == shadow, f"{where}: first_access {first}, shadow_paging problem {shadow}")
    else:
        need(not shadow, f"{where}: a shadow_paging problem without a first access measured")
    can = doc.get("can_measure", {})
    pages = can.get("pages", {})
    need(sorted(pages) == ["1g", "2m", "2m:hugetlb", "4k"], f"{where}: pages {sorted(pages)}")
    need(pages.get("4k", {}).get("available") is True, f"{where}: 4k not available")
    need(can.get("attribution") in ("counters", "differential"), f"{where}: attribution {can.get('attribution')}")
    # The attribution follows whether dTLB misses open, as the measurement's automatic controls do.
    counters = {c["metric"]: c for c in doc.get("counters", [])}
    dtlb = counters.get("dtlb_load_misses", {}).get("status") in ("ok", "multiplexed")
    need(can.get("tlb_misses") == dtlb, f"{where}: tlb_misses {can.get('tlb_misses')} vs counter {dtlb}")
    need(len(counters) == 14, f"{where}: {len(counters)} counters")
    for c in doc.get("counters", []):
        need(c["status"] in ("ok", "unsupported", "denied", "multiplexed", "error"), f"{where}: status {c}")
        need((c["type"] is None) == (c["config"] is None), f"{where}: type/config {c}")
    for p in doc.get("problems", []):
        need(p.get("severity") in ("warn", "info"), f"{where}: severity {p}")
        need(p.get("message") and (p.get("command") or p.get("advice")), f"{where}: problem without a fix {p}")
    return doc


def test_env():
    p = run("env")
    need(p.returncode == 0, f"env: exit {p.returncode}: {p.stderr}")
    for section in ("CPU\n", "TLB (CPUID", "Caches\n", "Kernel and memory\n", "Frequency and noise\n", "Counters (maps:",
                    "Can measure\n", "Problems ("):
        need(section in p.stdout, f"env: no section {section!r}")
    need("perf_event_paranoid" in p.stdout and "steal" in p.stdout, "env: paranoid or steal missing")

    q = run("env", "--json", "-", "-q")
    need(q.returncode == 0 and not q.stderr, f"env --json - -q: exit {q.returncode}, stderr {q.stderr!r}")
    check_env_json(json.loads(q.stdout), "env --json - -q")
    # One run, text on stderr and JSON on stdout: each problem of the JSON is in the text, with its command.
    # (Two runs may differ: steal is sampled anew each time.)
    r = run("env", "--json", "-")
    need(r.returncode == 0 and "Problems (" in r.stderr, "env --json -: the text should go to stderr")
    doc = check_env_json(json.loads(r.stdout), "env --json -")
    for prob in doc["problems"]:
        need(f"{prob['id']}:" in r.stderr, f"env: problem {prob['id']} not in the text")
        if prob["command"]:
            need(f"fix:  {prob['command']}" in r.stderr, f"env: command of {prob['id']} not in the text")
    # This machine's facts must produce their problem (they are checked where they hold).
    env = doc["environment"]
    ids = {pr["id"] for pr in doc["problems"]}
    if env["hypervisor"] and not doc["can_measure"]["tlb_misses"] and any(
            c["hardware"] and c["status"] == "unsupported" and c["source"] for c in doc["counters"]):
        need("pmu_hidden" in ids, f"env: a VM without hardware events but no pmu_hidden: {ids}")
    if env["tlb"]["source"] in (None, "none"):
        need("tlb_geometry" in ids, f"env: no tlb_geometry problem: {ids}")
    pool = env["hugepages"].get("2M")
    if pool and pool["free"] < 128:
        prob = [pr for pr in doc["problems"] if pr["id"] == "hugetlb_pool_2m"]
        want = pool["nr"] + 128 - pool["free"]
        if need(prob, "env: short 2 MiB pool but no hugetlb_pool_2m"):
            cmd = prob[0]["command"]
            need(f"echo {want} " in cmd and cmd.endswith("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"),
                 f"env: pool command {cmd!r}, want {want} pages")


    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "env.json")
        r = run("env", "--json", out, "-q")
        need(r.returncode == 0 and not r.stdout, f"env --json FILE: exit {r.returncode}")
        with open(out) as f:
            check_env_json(json.load(f), "env --json FILE")
        r = run("env", "--json", d)
        need(r.returncode == 4 and len(r.stderr.strip().splitlines()) == 1, f"env --json DIR: exit {r.returncode}")
    r = run("env", "--json", "/dev/full", "-q")
    need(r.returncode == 4, f"env --json /dev/full: exit {r.returncode}")
    # The error of the failed write, not a generic I/O error.
    need("No space left on device" in r.stderr, f"env --json /dev/full says why: {r.stderr!r}")
    r = subprocess.run(f"'{TLBPROF}' env > /dev/full", shell=True, capture_output=True, text=True, timeout=60)
    need(r.returncode == 4 and "stdout" in r.stderr, f"env > /dev/full: exit {r.returncode} {r.stderr!r}")

    # A map directory that does not parse, named by the user: usage error; tlbprof env changes nothing.
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "generic.events"), "w") as f:
            f.write("no equals sign here\n")
        r = run("env", "--events-dir", d)
        need(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "--events-dir" in r.stderr,
             f"env with a bad map: exit {r.returncode} {r.stderr!r}")


def test_env_unprivileged():
    """As nobody at perf_event_paranoid >= 2, the paranoid problem names the sysctl with sudo."""
    if os.geteuid() != 0 or not os.path.exists("/usr/bin/setpriv"):
        print("unprivileged env: skipped (needs root and setpriv)")
        return
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        paranoid = int(f.read())
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)
        exe = os.path.join(d, "tlbprof")
        with open(TLBPROF, "rb") as src, open(exe, "wb") as dst:
            dst.write(src.read())
        os.chmod(exe, 0o755)
        args = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", exe, "env",
                "--json", "-", "-q", "--events-dir", os.path.abspath(EVENTS_DIR)]
        p = subprocess.run(args, capture_output=True, text=True, timeout=60, cwd=d)
    if not need(p.returncode == 0, f"unprivileged env: exit {p.returncode} {p.stderr!r}"):
        return
    doc = check_env_json(json.loads(p.stdout), "unprivileged env", euid=65534)
    need(doc["privileges"]["cap_perfmon"] is False,
         f"unprivileged env: privileges {doc['privileges']}")
    ids = {pr["id"]: pr for pr in doc["problems"]}
    if paranoid >= 2:
        pr = ids.get("perf_event_paranoid")
        if need(pr, f"unprivileged env at paranoid {paranoid}: no perf_event_paranoid problem: {list(ids)}"):
            need(pr["command"] == "sudo sysctl kernel.perf_event_paranoid=1", f"command {pr['command']!r}")
            need("context-switches" in pr["message"], f"message {pr['message']!r}")
        # A denied counter's own reason gives the same command as the Problems section (with sudo).
        denied = [c for c in doc["counters"] if c["status"] == "denied"]
        need(denied and all("'sudo sysctl kernel.perf_event_paranoid=1'" in c["reason"] for c in denied),
             f"unprivileged env: denied counters' reasons {[c['reason'] for c in denied]}")


# Golden encodings of tests/unit/test-counters.c (vendor documents): metric -> (map, type, config).
FORCED = {
    "skl": {"dtlb_load_misses": ("skl", 4, "0xe08"), "walk_active": ("skl", 4, "0x1001008"),
            "stlb_hits": ("skl", 4, "0x2008"), "cycles": ("skl", 4, "0x3c"),
            "page_faults": ("generic", 1, "0x2")},
    "amd64_fam19h_zen4": {"dtlb_load_misses": ("amd64_fam19h_zen4", 4, "0xf045"),
                          "stlb_hits": ("amd64_fam19h_zen4", 4, "0xf45"),
                          "llc_load_misses": ("amd64_fam19h_zen4", 4, "0xdc43"),
                          "walk_active": ("", None, None), "task_clock": ("generic", 1, "0x1")},
}


def test_events():
    p = run("events")
    need(p.returncode == 0, f"events: exit {p.returncode}: {p.stderr}")
    need(p.stdout.startswith("PMU ") and "metric" in p.stdout and "dtlb_load_misses" in p.stdout,
         f"events: table {p.stdout[:200]!r}")
    q = run("events", "--json", "-", "-q")
    doc = json.loads(q.stdout)
    need(doc.get("schema") == "tlbprof.events/1" and doc.get("opened") is True and doc["pmu"]["forced"] is False,
         f"events JSON header {doc.get('schema')} {doc.get('opened')} {doc.get('pmu')}")
    need(len(doc.get("events", [])) == 14, f"events: {len(doc.get('events', []))} rows")
    page_faults = [e for e in doc["events"] if e["metric"] == "page_faults"]
    need(page_faults and page_faults[0]["status"] == "ok" and page_faults[0]["type_name"] == "software",
         f"events: page_faults {page_faults}")

    for pmu, want in FORCED.items():
        q = run("events", "--pmu", pmu, "--json", "-", "-q")
        if not need(q.returncode == 0, f"events --pmu {pmu}: exit {q.returncode} {q.stderr!r}"):
            continue
        doc = json.loads(q.stdout)
        need(doc["pmu"]["name"] == pmu and doc["pmu"]["forced"] is True and doc["opened"] is False,
             f"events --pmu {pmu}: header {doc['pmu']} opened {doc['opened']}")
        rows = {e["metric"]: e for e in doc["events"]}
        for metric, (source, typ, config) in want.items():
            e = rows.get(metric, {})
            need((e.get("source"), e.get("type"), e.get("config")) == (source, typ, config),
                 f"events --pmu {pmu} {metric}: {e.get('source')} {e.get('type')} {e.get('config')}, "
                 f"want {source} {typ} {config}")
            need(e.get("status") == ("ok" if source else "unsupported"), f"events --pmu {pmu} {metric}: {e}")
        t = run("events", "--pmu", pmu)
        for metric, (source, typ, config) in want.items():
            if config:
                line = [ln for ln in t.stdout.splitlines() if ln.startswith(metric + " ")]
                need(line and f" {config} " in line[0], f"events --pmu {pmu} text: {metric} row {line}")

    # An unknown PMU lists the maps there are, from the events directory.
    maps = sorted(f[:-7] for f in os.listdir(EVENTS_DIR) if f.endswith(".events") and f != "generic.events")
    r = run("events", "--pmu", "zen9")
    need(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and not r.stdout,
         f"events --pmu zen9: exit {r.returncode} {r.stderr!r}")
    if need(maps, f"no maps in {EVENTS_DIR}"):
        need(", ".join(maps) in r.stderr, f"events --pmu zen9: known list {r.stderr!r}, want {maps}")
    # generic.events exists, but it is the fallback map, not a PMU: say so rather than "no map".
    r = run("events", "--pmu", "generic")
    need(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "no map" not in r.stderr
         and "generic is the fallback map, not a PMU" in r.stderr and ", ".join(maps) in r.stderr,
         f"events --pmu generic: exit {r.returncode} {r.stderr!r}")

    # --events-dir after --pmu is honoured; a map whose name libpfm4 does not know is a usage error.
    with tempfile.TemporaryDirectory() as d:
        for name in ("generic", "skl"):
            with open(os.path.join(EVENTS_DIR, name + ".events")) as src, \
                    open(os.path.join(d, name + ".events"), "w") as dst:
                dst.write(src.read())
        r = run("events", "--pmu", "skl", "--events-dir", d, "--json", "-", "-q")
        need(r.returncode == 0 and json.loads(r.stdout)["events_dir"] == d, f"events --events-dir: {r.returncode}")
        r = run("events", "--pmu", "icx", "--events-dir", d)
        need(r.returncode == 2 and "(known: skl)" in r.stderr, f"events --pmu icx in a dir with skl only: {r.stderr!r}")
        os.rename(os.path.join(d, "skl.events"), os.path.join(d, "nosuchpmu.events"))
        r = run("events", "--pmu", "nosuchpmu", "--events-dir", d)
        need(r.returncode == 2 and "libpfm4 knows no PMU" in r.stderr, f"events --pmu nosuchpmu: {r.stderr!r}")
    r = run("events", "--json", "/dev/full", "-q")
    need(r.returncode == 4, f"events --json /dev/full: exit {r.returncode}")


# Samples taken by an earlier 0.1.0, and the fields this version always writes that they lack: their only schema
# errors may be those fields missing (anything else is a real mismatch).
OLDER_SAMPLES = {
    "kvm-intel-no-pmu.json": {"pmu_basis", "identification", "add_imm_per_cycle", "end_ghz", "end_rel_spread",
                              "end_ratio", "first_access"},
    "kvm-amd-no-pmu.json": {"first_access"},
}


def test_samples():
    """The sample outputs in examples/env follow the contract the tests hold tlbprof env to, and env.schema.json
    (a sample of an earlier version: but for the fields it predates)."""
    samples = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "env")
    found = [f for f in sorted(os.listdir(samples)) if f.endswith(".json")]
    need(found, f"no *.json sample in {samples}")
    for f in found:
        with open(os.path.join(samples, f)) as fh:
            doc = json.load(fh)
        check_env_json(doc, f"examples/env/{f}", euid=doc.get("privileges", {}).get("euid"))
        older = OLDER_SAMPLES.get(f, set())
        errs = [e for e in command_schema_errors(doc, "env")
                if not any(e.endswith(f"'{name}' is a required property") for name in older)]
        need(not errs, f"examples/env/{f} does not validate against env.schema.json: {errs[:3]}")
        with open(os.path.join(samples, f.replace(".json", ".txt"))) as fh:
            text = fh.read()
        for prob in doc["problems"]:
            need(f"{prob['id']}:" in text, f"examples/env/{f}: problem {prob['id']} not in its .txt")


test_env()
test_env_unprivileged()
test_events()
test_samples()
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
