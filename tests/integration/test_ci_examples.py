#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The CI examples (examples/ci/*.yml) parse as YAML and hang together: the measurement writes the files the
publishing steps read (--format/--output names), results are published even when the measurement fails, the
baseline comes from the same artifact the job keeps, the benchmark history needs no gh-pages branch, and the
compare step fails the job on exit 1 (a regression) only: any other status is reported as "could not compare"
and the job goes on (the compare script of each file is run with a stand-in tlbprof for every status)."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml

TLBPROF = os.path.abspath(sys.argv[1])
SOURCE = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", ".."))
CI = os.path.join(SOURCE, "examples", "ci")
# The file each --format writes into an --output directory.
FORMAT_FILES = {"json": "tlbprof.json", "gbench": "tlbprof.gbench.json", "openmetrics": "tlbprof.prom",
                "junit": "tlbprof.junit.xml", "csv": "tlbprof.csv"}
failures = []


def need(cond, what):
    if not cond:
        failures.append(what)
    return cond


def load(name):
    with open(os.path.join(CI, name)) as f:
        return yaml.safe_load(f)


SHELL_OPERATORS = {"||", "&&", "|", ";", ">", ">>", "<", "2>", "2>&1", "&"}


def invocations(script):
    """Each tlbprof command line in a shell script: its argument list after the binary, up to a shell operator."""
    out = []
    for line in script.replace("\\\n", " ").splitlines():
        line = line.strip()
        m = re.search(r"(?:^|[;&|]\s*|\bthen\s+)(?:\S*/)?build/tlbprof\b(.*)$", line)
        if m:
            args = []
            for tok in shlex.split(m.group(1).split("#", 1)[0]):
                if tok in SHELL_OPERATORS:
                    break
                args.append(tok)
            out.append(args)
    return out


def measured_files(args):
    """The files a measuring invocation writes: --json FILE and one per --format into --output DIR/."""
    files = set()
    for opt, val in zip(args, args[1:]):
        if opt == "--json":
            files.add(val)
    fmt = args[args.index("--format") + 1].split(",") if "--format" in args else []
    outdir = args[args.index("--output") + 1] if "--output" in args else None
    for f in fmt:
        need(f in FORMAT_FILES, f"unknown format {f!r}")
        if outdir and outdir.endswith("/"):
            files.add(outdir + FORMAT_FILES.get(f, "?"))
    return files, fmt, outdir


def help_options(*cmd):
    text = subprocess.run([TLBPROF, *cmd, "--help"], capture_output=True, text=True, timeout=30).stdout
    return {m.group(2) for m in (re.match(r"^ {2,4}(-[A-Za-z], )?(--[a-z0-9][a-z0-9-]*)", l)
                                 for l in text.splitlines()) if m}


MAIN_HELP = subprocess.run([TLBPROF, "--help"], capture_output=True, text=True, timeout=30).stdout
_section = re.search(r"^Commands[^\n]*:\n((?:  \S[^\n]*\n)+)", MAIN_HELP, re.M)
COMMANDS = [l.split()[0] for l in _section.group(1).splitlines()] if _section else []


def check_invocations(calls, where):
    """The measurement is fail-on fail, quiet, with JUnit; compare has a threshold; env's options exist here."""
    measure = [a for a in calls if a and a[0].startswith("-")]
    compare = [a for a in calls if a and a[0] == "compare"]
    env = [a for a in calls if a and a[0] == "env"]
    need(len(measure) == 1, f"{where}: {len(measure)} measuring invocations")
    need(compare and "--threshold" in compare[0] and len([a for a in compare[0] if a.endswith(".json")]) == 2,
         f"{where}: compare with two reports and --threshold: {compare}")
    need(env, f"{where}: no 'tlbprof env' step")
    # Every option exists in the --help of its command; a command this build lacks is reported, not judged.
    for a in calls:
        cmd = None if not a or a[0].startswith("-") else a[0]
        if cmd and cmd not in COMMANDS:
            print(f"{where}: 'tlbprof {cmd}' is not in this build: its options are not checked")
            continue
        known = help_options(*([cmd] if cmd else []))
        opts = {x.split("=")[0] for x in a if x.startswith("--")}
        need(opts <= known, f"{where}: tlbprof {' '.join(a)}: options not in its --help: {sorted(opts - known)}")
    if not measure:
        return set(), [], None
    args = measure[0]
    # Run it as the job does (a measurement of a few seconds): every file it promises must appear.
    if "--format" in help_options():
        with tempfile.TemporaryDirectory() as d:
            files_promised, _, out = measured_files(args)
            if out:
                os.makedirs(os.path.join(d, out), exist_ok=True)
            p = subprocess.run([TLBPROF, *args], cwd=d, capture_output=True, text=True, timeout=600)
            need(p.returncode in (0, 1), f"{where}: the measurement exits {p.returncode}: {p.stderr.strip()[-300:]}")
            for f in sorted(files_promised):
                need(os.path.getsize(os.path.join(d, f)) > 0 if os.path.exists(os.path.join(d, f)) else False,
                     f"{where}: the measurement did not write {f}")
            # The compare step on a baseline identical to the new report: no regression, exit 0.
            reports = [a for a in compare[0] if a.endswith(".json")] if compare else []
            if "compare" in COMMANDS and len(reports) == 2 and os.path.exists(os.path.join(d, reports[1])):
                base = os.path.join(d, reports[0])
                os.makedirs(os.path.dirname(base) or d, exist_ok=True)
                shutil.copy(os.path.join(d, reports[1]), base)
                c = subprocess.run([TLBPROF, *compare[0]], cwd=d, capture_output=True, text=True, timeout=120)
                need(c.returncode == 0, f"{where}: compare of a report with itself exits {c.returncode}: "
                                        f"{c.stderr.strip()[-300:]}")
    need("--quiet" in args and args[args.index("--fail-on") + 1] == "fail" if "--fail-on" in args else False,
         f"{where}: measure with --quiet --fail-on fail: {args}")
    files, fmt, outdir = measured_files(args)
    need(outdir and outdir.endswith("/"), f"{where}: --output should be a directory (DIR/): {outdir}")
    need("junit" in fmt, f"{where}: no junit format")
    # The report compare reads as the new side is the one this job wrote.
    reports = [a for a in compare[0] if a.endswith(".json")] if compare else []
    if len(reports) == 2:
        need(reports[1] in files, f"{where}: compare reads {reports[1]} as new, the job writes {sorted(files)}")
    return files, fmt, outdir


FAKE_TLBPROF = """#!/bin/sh
# A stand-in for tlbprof compare: the exit status the test asks for, and a line that says so.
echo "stand-in tlbprof $*: exit $FAKE_STATUS" >&2
exit "$FAKE_STATUS"
"""
# A stand-in for curl: the baseline download succeeds (copying FAKE_BASE to --output) unless FAKE_BASE is empty.
FAKE_CURL = """#!/bin/sh
out=
while [ $# -gt 0 ]; do
  if [ "$1" = --output ]; then out=$2; shift; fi
  shift
done
[ -n "$FAKE_BASE" ] || exit 22
cp "$FAKE_BASE" "$out"
"""


def run_compare_script(script, where, layout, env_extra=None, no_baseline=False):
    """Run a CI compare script in a scratch directory with a stand-in tlbprof for each exit status of compare:
    0 passes, 1 fails the job, 2, 3 and 4 (reports that could not be compared, whatever the reason) pass with a
    "could not compare" line."""
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "build"))
        os.makedirs(os.path.join(d, "bin"))
        for name, text in (("build/tlbprof", FAKE_TLBPROF), ("bin/curl", FAKE_CURL)):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(d, name), 0o755)
        for path in layout:
            os.makedirs(os.path.dirname(os.path.join(d, path)), exist_ok=True)
            with open(os.path.join(d, path), "w") as f:
                f.write("{}")
        base_env = dict(os.environ, PATH=os.path.join(d, "bin") + os.pathsep + os.environ.get("PATH", ""),
                        FAKE_BASE=os.path.join(d, "report.json"), **(env_extra or {}))
        for status, want in ((0, 0), (1, 1), (2, 0), (3, 0), (4, 0)):
            p = subprocess.run(["bash", "-e", "-c", script], cwd=d, env=dict(base_env, FAKE_STATUS=str(status)),
                               capture_output=True, text=True, timeout=60)
            need(f"stand-in tlbprof compare" in p.stderr, f"{where}: compare was not run: {p.stdout} {p.stderr}")
            need(p.returncode == want, f"{where}: compare exit {status} makes the job exit {p.returncode}, want {want}: "
                                       f"{p.stdout.strip()} {p.stderr.strip()}")
            if status > 1:
                need("could not compare" in p.stdout and f"exit {status}" in p.stdout,
                     f"{where}: compare exit {status} is not reported as 'could not compare': {p.stdout!r}")
            if status == 1:
                need("regression" in p.stdout, f"{where}: a regression is not named: {p.stdout!r}")
        if no_baseline:
            # No report on the default branch yet: said, and the job passes without running compare.
            p = subprocess.run(["bash", "-e", "-c", script], cwd=d, env=dict(base_env, FAKE_BASE="", FAKE_STATUS="1"),
                               capture_output=True, text=True, timeout=60)
            need(p.returncode == 0 and "nothing to compare with" in p.stdout and "stand-in" not in p.stderr,
                 f"{where}: without a baseline the job passes and says so: {p.returncode} {p.stdout!r}")


def check_github():
    doc = load("github-actions.yml")
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads the key 'on' as true
    need(isinstance(on, dict) and "pull_request" in on and "push" in on, f"github: triggers {on}")
    jobs = doc.get("jobs", {})
    if not need(len(jobs) == 1, f"github: {len(jobs)} jobs"):
        return
    steps = next(iter(jobs.values())).get("steps", [])
    for i, s in enumerate(steps):
        need(("uses" in s) != ("run" in s), f"github: step {i} needs exactly one of uses/run: {s}")
    script = "\n".join(s.get("run", "") for s in steps)
    need("tools/bootstrap --runtime" in script and "ninja -C build" in script,
         "github: build with tools/bootstrap --runtime (no test tools, analysers or npm) + ninja")
    files, fmt, outdir = check_invocations(invocations(script), "github")
    need(re.search(r"mkdir -p " + re.escape((outdir or "").rstrip("/")), script), f"github: {outdir} not created")

    def step(action):
        return [s for s in steps if s.get("uses", "").split("@")[0] == action]

    junit = step("mikepenz/action-junit-report") or step("dorny/test-reporter")
    if need(junit, "github: no JUnit publishing step"):
        w = junit[0].get("with", {})
        path = w.get("report_paths", w.get("path"))
        need(path in files, f"github: JUnit step reads {path}, the job writes {sorted(files)}")
        need("always()" in str(junit[0].get("if", "")), "github: publish JUnit also when the measurement fails")
    bench = step("benchmark-action/github-action-benchmark")
    if need(bench, "github: no github-action-benchmark step"):
        w = bench[0].get("with", {})
        need(w.get("tool") == "googlecpp", f"github: benchmark tool {w.get('tool')}")
        # The action makes a series of every entry: it must read one point per phase, the gbench file's medians
        # kept by a jq step before it (run here on a real two-run fixture's gbench).
        fed = w.get("output-file-path")
        keep = [s for s in steps[:steps.index(bench[0])] if re.search(r"\bjq\b", s.get("run", ""))]
        if need(keep, f"github: no jq step keeps the medians of the gbench file before the benchmark step reads {fed}"):
            jq = shlex.split(keep[0]["run"].replace("\n", " "))
            need(jq[0] == "jq" and len(jq) == 5 and jq[3] == ">" and jq[2] in files and "gbench" in fmt and jq[4] == fed
                 and "always()" in str(keep[0].get("if", "")),
                 f"github: the jq step {jq} should read the job's gbench file ({sorted(files)}) into {fed}, always()")
            check_median_filter(jq[1], "github")
        # It runs also after a failed check, but not without its input (the measurement could not run at all).
        cond = str(bench[0].get("if", ""))
        need("always()" in cond and f"hashFiles('{w.get('output-file-path')}')" in cond,
             f"github: the benchmark step should run always() when its file exists: if: {cond}")
        # Out of the box: the history in the Actions cache (no gh-pages branch to create), or the documented
        # one-time gh-pages setup.
        ext = w.get("external-data-json-path")
        with open(os.path.join(CI, "github-actions.yml")) as f:
            text = f.read()
        if ext:
            need(str(w.get("auto-push", "false")).lower() == "false",
                 "github: auto-push must be false with external-data-json-path (the action refuses both)")
            cache = [(i, s) for i, s in enumerate(steps) if s.get("uses", "").split("@")[0] == "actions/cache"]
            at = steps.index(bench[0])
            need(cache and cache[0][0] < at and os.path.dirname(ext) == str(cache[0][1]["with"]["path"]).rstrip("/"),
                 f"github: {ext} should live in an actions/cache path restored before the benchmark step")
            if cache:
                cw = cache[0][1]["with"]
                need("github.run_id" in str(cw.get("key")) and cw.get("restore-keys"),
                     "github: a cache entry cannot be updated: save one per run, restore the newest")
        need("git switch --orphan gh-pages" in text or "git checkout --orphan gh-pages" in text,
             "github: the comments should say how to create the gh-pages branch once")
    compare_steps = [s for s in steps if "compare" in s.get("run", "")]
    if need(len(compare_steps) == 1, "github: one compare step"):
        run_compare_script(compare_steps[0]["run"], "github compare", ["base/report.json", "report.json"])
    up = step("actions/upload-artifact")
    down = step("dawidd6/action-download-artifact")
    if need(up and down, "github: the report is kept as an artifact and the baseline downloaded"):
        need(up[0]["with"]["name"] == down[0]["with"]["name"], "github: baseline artifact name differs")
        need("report.json" in up[0]["with"]["path"] and "always()" in str(up[0].get("if", "")),
             "github: report.json kept, also when a check failed")
        base = down[0]["with"].get("path", ".")
        comp = [[x for x in a if x.endswith(".json")] for a in invocations(script) if a and a[0] == "compare"]
        need(comp and comp[0][0] == f"{base}/report.json", f"github: compare's base {comp and comp[0][0]}")


def check_median_filter(jq_filter, where):
    """A jq filter that keeps one point per phase, run on the gbench of a real report: exactly the _median entry of
    each phase measured more than once (its real_time the median of the repetitions, as written), or its only
    entry."""
    jq = shutil.which("jq")
    if not need(jq, f"{where}: jq is missing (apt-get install jq)"):
        return
    fixture = os.path.join(SOURCE, "tests", "data", "vm-chase-16m-run1.json")
    gb = subprocess.run([TLBPROF, "analyze", fixture, "--format", "gbench", "--output", "-", "--quiet"],
                        capture_output=True, text=True, timeout=60)
    kept = subprocess.run([jq, jq_filter], input=gb.stdout, capture_output=True, text=True, timeout=60)
    if not need(gb.returncode == 0 and kept.returncode == 0, f"{where}: jq {jq_filter!r}: {kept.stderr.strip()}"):
        return
    entries = json.loads(kept.stdout)["benchmarks"]
    every = json.loads(gb.stdout)["benchmarks"]
    runs = sorted({b["run_name"] for b in every})
    need(sorted(b["run_name"] for b in entries) == runs and
         all(b.get("aggregate_name") == "median" or b["repetitions"] == 1 for b in entries),
         f"{where}: the filter keeps {[b['name'] for b in entries]}, want one median per phase of {runs}")


def check_gitlab():
    doc = load("gitlab-ci.yml")
    jobs = {k: v for k, v in doc.items() if isinstance(v, dict) and "script" in v}
    if not need(len(jobs) == 1, f"gitlab: {len(jobs)} jobs"):
        return
    name, job = next(iter(jobs.items()))
    need(job.get("stage") in doc.get("stages", []), f"gitlab: stage {job.get('stage')} not in stages")
    script = "\n".join(job.get("before_script", []) + job.get("script", []))
    need("tools/bootstrap --runtime" in script and "ninja -C build" in script,
         "gitlab: build with tools/bootstrap --runtime (no test tools, analysers or npm) + ninja")
    files, fmt, outdir = check_invocations(invocations(script), "gitlab")
    arts = job.get("artifacts", {})
    need(arts.get("when") == "always", "gitlab: artifacts when: always (keep results of a failed check)")
    reports = arts.get("reports", {})
    need(reports.get("junit") in files, f"gitlab: junit report {reports.get('junit')}, the job writes {sorted(files)}")
    if "metrics" in reports:
        need(reports["metrics"] in files and "openmetrics" in fmt, f"gitlab: metrics report {reports['metrics']}")
    need("report.json" in arts.get("paths", []), "gitlab: report.json is not kept")
    need("job=$CI_JOB_NAME" in script and "/raw/report.json" in script and "$CI_DEFAULT_BRANCH" in script,
         "gitlab: the baseline must be this job's report.json on the default branch")
    # artifacts:reports:metrics is Premium/Ultimate: the file is kept as a plain artifact, the widget optional.
    with open(os.path.join(CI, "gitlab-ci.yml")) as f:
        text = f.read()
    if "openmetrics" in fmt:
        need(any(p.rstrip("/") == os.path.dirname(FORMAT_FILES["openmetrics"]) or
                 FORMAT_FILES["openmetrics"].startswith(p) or p == "out/" for p in arts.get("paths", [])),
             "gitlab: the OpenMetrics file is not kept as an artifact")
        need("Premium" in text, "gitlab: say that the metrics report (artifacts:reports:metrics) is Premium/Ultimate")
    need("metrics" not in reports, "gitlab: artifacts:reports:metrics needs Premium: keep it out of the example")
    blocks = [b for b in job.get("script", []) if "compare" in b]
    if need(len(blocks) == 1, "gitlab: one compare block"):
        env = {"CI_MERGE_REQUEST_IID": "7", "CI_COMMIT_BRANCH": "feature", "CI_DEFAULT_BRANCH": "main",
               "CI_JOB_TOKEN": "x", "CI_API_V4_URL": "http://gitlab.invalid/api/v4", "CI_PROJECT_ID": "1",
               "CI_JOB_NAME": name}
        run_compare_script(blocks[0], "gitlab compare", ["report.json"], env, no_baseline=True)


check_github()
check_gitlab()
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
