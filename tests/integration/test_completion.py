#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bash completion: sourced in bash, the function completes commands, options and values; every command and
every long option of every --help completes (so the script cannot drift from the cli); the value lists match
the workloads --help lists and the event maps there are."""
import os
import re
import shlex
import subprocess
import sys
import tempfile

TLBPROF = sys.argv[1]
SOURCE = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", ".."))
# The script meson generates from completion/tlbprof.bash.in and the option tables.
SCRIPT = os.path.abspath(sys.argv[3] if len(sys.argv) > 3 else os.path.join(os.path.dirname(TLBPROF), "completion",
                                                                             "tlbprof"))
EVENTS = os.path.join(SOURCE, "events")
BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"
failures = []


def need(cond, what):
    if not cond:
        failures.append(what)
    return cond


def complete(line, helpers=False, cwd=None):
    """COMPREPLY for the command line `line` (cursor at its end), split into words as bash would:
    at blanks, and around '=' and ':' (COMP_WORDBREAKS)."""
    words = []
    for w in re.split(r"(\s+)", line):
        if w.isspace() or w == "":
            continue
        words += [p for p in re.split(r"([=:])", w) if p != ""]
    if line.endswith(" ") or not words:
        words.append("")
    setup = f"source {shlex.quote(BASH_COMPLETION)}\n" if helpers else ""
    script = (f"{setup}source {shlex.quote(SCRIPT)}\n"
              f"COMP_LINE={shlex.quote(line)}; COMP_POINT=${{#COMP_LINE}}\n"
              f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
              "_tlbprof\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n")
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True, timeout=30,
                       cwd=cwd)
    need(p.returncode == 0 and not p.stderr, f"completing {line!r}: exit {p.returncode}, {p.stderr.strip()[:200]}")
    return [w for w in p.stdout.split("\n") if w]


def help_text(*cmd):
    return subprocess.run([TLBPROF, *cmd, "--help"], capture_output=True, text=True, timeout=30).stdout


def long_options(text):
    return {m.group(2) for m in (re.match(r"^ {2,4}(-[A-Za-z], )?(--[a-z0-9][a-z0-9-]*)", l)
                                 for l in text.splitlines()) if m}


main_help = help_text()
section = re.search(r"^Commands[^\n]*:\n((?:  \S[^\n]*\n)+)", main_help, re.M)
commands = [l.split()[0] for l in section.group(1).splitlines()] if section else []
need(commands, "no commands in tlbprof --help")

# 1. No drift: every command, and exactly the long options of each --help.
top = complete("tlbprof ")
for cmd in commands:
    need(cmd in top, f"'tlbprof <TAB>' does not offer the command {cmd}: {top}")
for cmd in [None, *commands]:
    want = long_options(help_text(*([cmd] if cmd else [])))
    got = set(complete(f"tlbprof {cmd + ' ' if cmd else ''}--"))
    name = f"tlbprof {cmd}" if cmd else "tlbprof"
    need(not want - got, f"'{name} --<TAB>' lacks {sorted(want - got)} of its --help")
    need(not got - want, f"'{name} --<TAB>' offers {sorted(got - want)}, not in its --help")

# 2. Values.
workloads = re.findall(r"^  ([a-z]+) {2,}", re.split(r"^Workloads[^\n]*:\n", main_help, 1, re.M)[-1].split("\n\n", 1)[0],
                       re.M)
need(workloads and sorted(complete("tlbprof --workload ")) == sorted(workloads),
     f"--workload values {complete('tlbprof --workload ')} vs --help's {workloads}")
maps = sorted(f[:-7] for f in os.listdir(EVENTS) if f.endswith(".events") and f != "generic.events")
need(sorted(complete("tlbprof events --pmu ")) == maps, f"--pmu values {complete('tlbprof events --pmu ')} vs {maps}")
CASES = [
    ("tlbprof --wor", ["--workload"]),
    ("tlbprof --workload t", ["tlbsize"]),
    ("tlbprof --pages 4k,2", ["4k,2m", "4k,2m:thp", "4k,2m:hugetlb"]),
    ("tlbprof --pages 4k,1", ["4k,1g", "4k,1g:hugetlb"]),
    ("tlbprof --pages ", ["4k", "2m", "2m:thp", "2m:hugetlb", "1g", "1g:hugetlb"]),
    ("tlbprof --cases anon_cold,file_", ["anon_cold,file_warm", "anon_cold,file_cold"]),
    ("tlbprof --layout ", ["colored", "aligned"]),
    ("tlbprof --layout=", ["colored", "aligned"]),
    ("tlbprof --controls a", ["auto", "always"]),
    ("tlbprof --fail-on ", ["fail", "warn", "never"]),
    ("tlbprof --iters a", ["auto"]),
    ("tlbprof --size ", []),
    ("tlbprof events --pmu sk", ["skl", "skx"]),
    ("tlbprof events --pmu=amd64_fam19h_zen", ["amd64_fam19h_zen3", "amd64_fam19h_zen4"]),
    ("tlbprof e", ["env", "events"]),
    ("tlbprof env --e", ["--events-dir"]),
    ("tlbprof analyze --fa", ["--fail-on"]),
    ("tlbprof analyze --fail-on w", ["warn"]),
]
for line, want in CASES:
    got = complete(line)
    need(sorted(got) == sorted(want), f"{line!r}: {got}, expected {want}")

# tlbprof run [OPTIONS] [--] CMD [ARGS]: CMD is a command, and what follows it is CMD's, not tlbprof's.
if "run" in commands:
    for line in ("tlbprof run l", "tlbprof run -- l", "tlbprof run --cpu 0 l", "tlbprof run -D -1 -- l"):
        got = complete(line)
        need("ls" in got and not [w for w in got if w.startswith("-")], f"{line!r}: expected commands, got {got[:8]}")
    need(sorted(complete("tlbprof run --delay ")) == ["-1", "0"], "run --delay values")
    need(complete("tlbprof run --d") == ["--delay"], f"run --d: {complete('tlbprof run --d')}")
    got = complete("tlbprof run ls --qu")
    need("--quiet" not in got, f"'tlbprof run ls --qu' completes tlbprof's options: {got}")

# --format exists once the formats are built in: its values then complete item by item.
if "--format" in long_options(main_help):
    got = complete("tlbprof --format junit,g")
    need(got == ["junit,gbench"], f"'--format junit,g': {got}")
    got = complete("tlbprof analyze r.json --format ")
    need(sorted(got) == ["csv", "gbench", "json", "junit", "openmetrics"], f"'--format ': {got}")

# 3. Files: analyze offers reports and directories, --json also '-', --events-dir directories only.
with tempfile.TemporaryDirectory() as d:
    for name in ("a.json", "b.txt"):
        open(os.path.join(d, name), "w").close()
    os.mkdir(os.path.join(d, "sub"))
    got = complete("tlbprof analyze ", cwd=d)
    need(sorted(got) == ["a.json", "sub"], f"analyze files: {got}")
    got = complete("tlbprof --json ", cwd=d)
    need(sorted(got) == ["-", "a.json", "sub"], f"--json files: {got}")
    if "compare" in commands:
        got = complete("tlbprof compare a.json ", cwd=d)
        need(sorted(got) == ["a.json", "sub"], f"compare files: {got}")
    if "plot" in commands:
        got = complete("tlbprof plot a.json -o ", cwd=d)
        need(sorted(got) == ["-", "a.json", "b.txt", "sub"], f"plot -o files: {got}")
    got = complete("tlbprof env --events-dir ", cwd=d)
    need(got == ["sub"], f"--events-dir: {got}")
    # --output: files, -, and the FORMAT=FILE pairs; after "FORMAT=" a file again.
    if "--output" in long_options(main_help):
        got = complete("tlbprof --output ", cwd=d)
        need(sorted(got) == sorted(["-", "a.json", "b.txt", "sub", "csv=", "gbench=", "json=", "junit=",
                                    "openmetrics="]), f"--output: {got}")
        need(complete("tlbprof analyze a.json --output jun", cwd=d) == ["junit="], "--output jun")
        got = complete("tlbprof --output junit=", cwd=d)
        need(sorted(got) == ["-", "a.json", "b.txt", "sub"], f"--output junit=: {got}")
        got = complete("tlbprof --output junit=a", cwd=d)
        need(got == ["a.json"], f"--output junit=a: {got}")
        got = complete("tlbprof --output junit=ci.xml,gb", cwd=d)
        need(got == ["ci.xml,gbench="], f"--output junit=ci.xml,gb: {got}")
        if "run" in commands:
            got = complete("tlbprof run --output junit=ci.xml l", cwd=d)
            need("ls" in got, f"run --output junit=FILE CMD: {got[:8]}")

# 4. With bash-completion's helpers, words are rejoined across ':' and the reply is what follows it.
if os.path.exists(BASH_COMPLETION):
    need(complete("tlbprof --pages 4k,2m:h", helpers=True) == ["hugetlb"],
         f"'--pages 4k,2m:h' with bash-completion: {complete('tlbprof --pages 4k,2m:h', helpers=True)}")
    need(sorted(complete("tlbprof env --", helpers=True)) == sorted(long_options(help_text("env"))),
         "env options with bash-completion")
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "a.json"), "w").close()
        got = complete("tlbprof --output junit=a", helpers=True, cwd=d)
        need(got == ["a.json"], f"'--output junit=a' with bash-completion: {got}")
else:
    print(f"{BASH_COMPLETION} not installed: the ':' case is not checked")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
