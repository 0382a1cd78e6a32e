#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""--help and the man pages cannot drift: for tlbprof and for every command its --help lists, the long options
of --help are the options the man page's OPTIONS section defines; every command has an installed page; every
page renders without a warning; every option a page mentions exists."""
import os
import re
import shutil
import subprocess
import sys

TLBPROF = sys.argv[1]
SOURCE = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "..")
MAN = os.path.join(SOURCE, "man")
failures = []


def need(cond, what):
    if not cond:
        failures.append(what)
    return cond


def help_text(*cmd):
    p = subprocess.run([TLBPROF, *cmd, "--help"], capture_output=True, text=True, timeout=30)
    need(p.returncode == 0 and p.stdout and not p.stderr, f"tlbprof {' '.join(cmd)} --help: exit {p.returncode}")
    return p.stdout


def help_commands(text):
    """The names in the 'Commands' section of the main --help: '  NAME   summary' lines up to a blank line."""
    m = re.search(r"^Commands[^\n]*:\n((?:  \S[^\n]*\n)+)", text, re.M)
    return [line.split()[0] for line in m.group(1).splitlines()] if m else []


def help_options(text):
    """Long options an --help defines: option lines start with '-' after the indent ('  -q, --quiet', '  --json')."""
    opts = set()
    for line in text.splitlines():
        m = re.match(r"^ {2,4}(-[A-Za-z], )?(--[a-z0-9][a-z0-9-]*)", line)
        if m:
            opts.add(m.group(2))
    return opts


def man_sections(path):
    """{section title: [lines]} of a man page source."""
    sections, title = {}, None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r'^\.SH\s+"?([^"]*)"?', line)
            if m:
                title = m.group(1).strip()
                sections[title] = []
            elif title:
                sections[title].append(line)
    return sections


def roff_options(line):
    """Long options written in a roff line: '\\-\\-name' in any font (.B, .BR, .BI, \\fB...\\fR), '\\-' normalised."""
    text = line.replace("\\-", "-").replace("\\(hy", "-")
    return set(re.findall(r"(?<![\w-])(--[a-z0-9][a-z0-9-]*)", text))


def man_defined_options(lines):
    """The options an OPTIONS section defines: those in the tag line after each .TP/.IP/.TQ."""
    opts, tag_next = set(), False
    for line in lines:
        if re.match(r"^\.(TP|TQ)\b", line):
            tag_next = True
            continue
        if re.match(r"^\.IP\s+\S", line):  # .IP with its tag on the same line
            opts |= roff_options(line)
            continue
        if tag_next:
            opts |= roff_options(line)
            tag_next = False
    return opts


def font_arguments(line):
    """The arguments of a font request (.B, .BR, .BI, .IB, .RB, .IR, .RI), with quoted ones kept whole."""
    m = re.match(r"^\.(B|BR|BI|IB|RB|IR|RI|I)\s+(.*)$", line)
    return re.findall(r'"([^"]*)"|(\S+)', m.group(2)) if m else []


def man_mentioned_options(path):
    """The options a page refers to: a font request's argument that starts with an option ('.B \\-\\-size',
    '.BR "\\-\\-iters auto"') and inline '\\fB\\-\\-name'. Another program's option inside a quoted command
    ('.BR "pkg\\-config \\-\\-cflags tlbprof"') or in an example block is not a reference."""
    found = set()
    with open(path) as f:
        for line in f:
            if line.startswith('.\\"'):
                continue
            for quoted, bare in font_arguments(line.rstrip("\n")):
                arg = (quoted or bare).replace("\\-", "-")
                m = re.match(r"^(--[a-z0-9][a-z0-9_-]*)", arg)
                if m and "_" not in m.group(1):  # tlbprof's options use hyphens: '--benchmark_format' is gbench's
                    found.add(m.group(1))
            for m in re.finditer(r"\\fB((?:\\-){2}[a-z0-9](?:[a-z0-9]|\\-)*)", line):
                found.add(m.group(1).replace("\\-", "-"))
    return found


def renders_cleanly(path):
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MAN_KEEP_FORMATTING="0")
    p = subprocess.run(["man", "--warnings", "-l", path], capture_output=True, text=True, timeout=60, env=env)
    need(p.returncode == 0 and p.stdout.strip(), f"man -l {path}: exit {p.returncode}")
    need(not p.stderr.strip(), f"man --warnings -l {path}: {p.stderr.strip()[:300]}")
    if shutil.which("groff"):
        g = subprocess.run(["groff", "-man", "-ww", "-z", path], capture_output=True, text=True, timeout=60)
        need(g.returncode == 0 and not g.stderr.strip(), f"groff -ww -z {path}: {g.stderr.strip()[:300]}")


main_help = help_text()
commands = help_commands(main_help)
need(commands, "tlbprof --help lists no commands")
need(shutil.which("man"), "man is not installed (tools/bootstrap installs man-db)")

pages = {None: os.path.join(MAN, "tlbprof.1")}
for cmd in commands:
    pages[cmd] = os.path.join(MAN, f"tlbprof-{cmd}.1")

all_options = set()
helps = {}
for cmd, page in pages.items():
    helps[cmd] = help_options(help_text(*([cmd] if cmd else [])))
    all_options |= helps[cmd]

with open(os.path.join(SOURCE, "meson.build")) as f:
    meson = f.read()

internal = set()
for cmd, page in pages.items():
    name = f"tlbprof {cmd}" if cmd else "tlbprof"
    if not need(os.path.exists(page), f"{name}: no man page {os.path.relpath(page, SOURCE)}"):
        continue
    rel = os.path.relpath(page, SOURCE)
    need(f"'{rel}'" in meson, f"{rel} is not installed (install_man in meson.build)")
    sections = man_sections(page)
    need("OPTIONS" in sections, f"{rel}: no OPTIONS section")
    defined = man_defined_options(sections.get("OPTIONS", []))
    internal |= man_defined_options(sections.get("INTERNAL OPTIONS", []))
    missing, extra = helps[cmd] - defined, defined - helps[cmd]
    need(not missing, f"{rel}: options in '{name} --help' but not in the page's OPTIONS: {sorted(missing)}")
    need(not extra, f"{rel}: options in the page's OPTIONS but not in '{name} --help': {sorted(extra)}")
    title = sections and open(page).read()
    need(re.search(r"^\.TH\s+TLBPROF" + (r"\\?-" + re.escape(cmd.upper()) if cmd else "") + r"\s+1\b", title, re.M),
         f"{rel}: .TH should name TLBPROF{'-' + cmd.upper() if cmd else ''} in section 1")
    renders_cleanly(page)

for cmd, page in pages.items():
    if os.path.exists(page):
        unknown = man_mentioned_options(page) - all_options - internal
        need(not unknown, f"{os.path.relpath(page, SOURCE)} mentions options no command has: {sorted(unknown)}")

# tlbprof(1) lists every command in COMMANDS and points to its page in SEE ALSO.
main_sections = man_sections(pages[None])
listed = [l.split()[1] for i, l in enumerate(main_sections.get("COMMANDS", []))
          if i > 0 and main_sections["COMMANDS"][i - 1].startswith(".TP") and l.startswith(".B ")]
need(sorted(listed) == sorted(commands), f"tlbprof.1 COMMANDS lists {sorted(listed)}, --help has {sorted(commands)}")
see_also = "\n".join(main_sections.get("SEE ALSO", []))
for cmd in commands:
    need(re.search(r"tlbprof\\-" + re.escape(cmd) + r"\s*\(1\)", see_also), f"tlbprof.1 SEE ALSO lacks tlbprof-{cmd}(1)")

# Every page in man/ belongs to a command (a page for a removed command would be stale).
for f in sorted(os.listdir(MAN)):
    m = re.match(r"^tlbprof-(.+)\.1$", f)
    if m:
        need(m.group(1) in commands, f"man/{f}: no command '{m.group(1)}' in tlbprof --help")

for f in failures:
    print("FAIL:", f)
print(f"{len(pages)} pages, {len(all_options)} options checked")
sys.exit(1 if failures else 0)
