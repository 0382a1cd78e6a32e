#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An installed copy (meson install --destdir) reads only its own datadir, never the source tree; pkg-config file."""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

TLBPROF = os.path.realpath(sys.argv[1])
BUILD = os.path.dirname(TLBPROF)
SOURCE = os.path.realpath(os.environ.get("TLBPROF_TEST_SOURCE_DIR") or
                          os.path.join(os.path.dirname(__file__), "..", ".."))
failures = []


def need(cond, what):
    if not cond:
        failures.append(what)
    return cond


def run(exe, *args, prefix=()):
    return subprocess.run([*prefix, exe, *args], capture_output=True, text=True, timeout=120)


def env_doc(exe, where, prefix=()):
    p = run(exe, "env", "--json", "-", "--quiet", prefix=prefix)
    need(p.returncode == 0, f"{where}: env exit {p.returncode}: {p.stderr}")
    try:
        return json.loads(p.stdout), p
    except ValueError:
        need(False, f"{where}: env printed no JSON: {p.stdout[:200]!r}")
        return {}, p


def no_source_tree(p, where):
    """Nothing the installed binary printed names the source tree's events/."""
    tree = os.path.join(SOURCE, "events")
    need(tree not in p.stdout and tree not in p.stderr, f"{where}: the output names the source tree's {tree}")


# The binary in its build directory reads the source tree's maps: that is how every other test runs it.
doc, _ = env_doc(TLBPROF, "build-directory binary")
need(os.path.realpath(doc.get("events_dir", "")) == os.path.join(SOURCE, "events"),
     f"build-directory binary: events_dir {doc.get('events_dir')!r}, want {SOURCE}/events")

meson = shutil.which("meson")
if not meson:
    print("SKIP: no meson on PATH to install with")
    sys.exit(77)
with tempfile.TemporaryDirectory(prefix="tlbprof-install-") as destdir:
    os.chmod(destdir, 0o755)	# nobody must reach the installed binary below
    p = subprocess.run([meson, "install", "-C", BUILD, "--no-rebuild", "--quiet", "--destdir", destdir],
                       capture_output=True, text=True, timeout=300)
    if not need(p.returncode == 0, f"meson install: exit {p.returncode}: {p.stderr[-2000:]}"):
        print("\n".join(failures))
        sys.exit(1)
    found = {}
    for root, dirs, files in os.walk(destdir):
        for name in files:
            found.setdefault(name, []).append(os.path.join(root, name))
    exes = [f for f in found.get("tlbprof", []) if os.path.basename(os.path.dirname(f)) == "bin"]
    if not need(len(exes) == 1, f"installed binaries: {exes}"):
        print("\n".join(failures))
        sys.exit(1)
    exe = exes[0]
    prefix_dir = os.path.dirname(os.path.dirname(exe))
    events = os.path.join(prefix_dir, "share", "tlbprof", "events")
    need(os.path.isfile(os.path.join(events, "generic.events")), f"no generic.events under {events}")
    for name in ("report", "compare", "env", "events"):
        need(os.path.isfile(os.path.join(prefix_dir, "share", "tlbprof", f"{name}.schema.json")),
             f"no installed {name}.schema.json")

    # The header-only marker's pkg-config file: architecture-independent, so under datadir, none in a libdir.
    pcs = found.get("tlbprof.pc", [])
    need(pcs == [os.path.join(prefix_dir, "share", "pkgconfig", "tlbprof.pc")], f"tlbprof.pc installed as {pcs}")
    pkg_config = shutil.which("pkg-config")
    if pcs and pkg_config:
        q = subprocess.run([pkg_config, "--cflags", "tlbprof"], capture_output=True, text=True, timeout=30,
                           env={**os.environ, "PKG_CONFIG_PATH": os.path.dirname(pcs[0]), "PKG_CONFIG_LIBDIR": "",
                                "PKG_CONFIG_SYSROOT_DIR": destdir})
        inc = [a[2:] for a in q.stdout.split() if a.startswith("-I")]
        need(q.returncode == 0 and any(os.path.isfile(os.path.join(d, "tlbprof", "marker.h")) for d in inc),
             f"pkg-config --cflags tlbprof: {q.stdout.strip()!r} {q.stderr.strip()!r}: no tlbprof/marker.h there")

    # Installed and intact: its own datadir.
    doc, p = env_doc(exe, "installed")
    need(doc.get("events_dir") == events, f"installed: events_dir {doc.get('events_dir')!r}, want {events}")
    need(doc.get("counters_error") in (None, ""), f"installed: counters_error {doc.get('counters_error')!r}")
    no_source_tree(p, "installed")

    # Its datadir gone: it says so, naming the installed path, and does not fall back to the source tree.
    moved = events + ".away"
    os.rename(events, moved)
    try:
        doc, p = env_doc(exe, "installed, maps missing")
        err = doc.get("counters_error") or ""
        need(doc.get("events_dir") == events and events in err and "No such file" in err,
             f"installed, maps missing: events_dir {doc.get('events_dir')!r}, counters_error {err!r}")
        no_source_tree(p, "installed, maps missing")
        p = run(exe, "events")
        need(p.returncode == 3 and events in p.stderr, f"installed events, maps missing: exit {p.returncode}: "
             f"{p.stderr.strip()!r}")
        no_source_tree(p, "installed events, maps missing")
        # --events-dir still names another directory explicitly.
        p = run(exe, "events", "--events-dir", moved, "--json", "-", "--quiet")
        need(p.returncode == 0 and json.loads(p.stdout or "{}").get("events_dir") == moved,
             f"installed events --events-dir: exit {p.returncode}: {p.stderr.strip()!r}")
    finally:
        os.rename(moved, events)

    # Unreadable rather than missing: as an unprivileged user (root reads a mode-000 directory anyway).
    setpriv = shutil.which("setpriv")
    drop = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--"] if os.geteuid() == 0 else []
    if os.geteuid() == 0 and not setpriv:
        print("note: no setpriv: the unreadable-datadir case is left out")
    else:
        mode = stat.S_IMODE(os.stat(events).st_mode)
        os.chmod(events, 0)
        try:
            doc, p = env_doc(exe, "installed, maps unreadable", prefix=drop)
            err = doc.get("counters_error") or ""
            need(doc.get("events_dir") == events and events in err and "Permission denied" in err,
                 f"installed, maps unreadable: events_dir {doc.get('events_dir')!r}, counters_error {err!r}")
            no_source_tree(p, "installed, maps unreadable")
        finally:
            os.chmod(events, mode)

    # A relocated copy (the whole prefix moved) reads the datadir it was moved with.
    moved_prefix = os.path.join(destdir, "elsewhere")
    shutil.move(prefix_dir, moved_prefix)
    doc, p = env_doc(os.path.join(moved_prefix, "bin", "tlbprof"), "relocated")
    need(doc.get("events_dir") == os.path.join(moved_prefix, "share", "tlbprof", "events"),
         f"relocated: events_dir {doc.get('events_dir')!r}")

# A copy staged inside the build directory (DESTDIR=build/stage, as packaging scripts do) is an installed copy:
# its own datadir, never the source tree's, although its path lies below the build directory.
stage = tempfile.mkdtemp(prefix="stage-", dir=BUILD)
try:
    os.chmod(stage, 0o755)
    p = subprocess.run([meson, "install", "-C", BUILD, "--no-rebuild", "--quiet", "--destdir", stage],
                       capture_output=True, text=True, timeout=300)
    exes = [os.path.join(d, f) for d, _, fs in os.walk(stage) for f in fs if f == "tlbprof" and "bin" in d]
    if need(p.returncode == 0 and len(exes) == 1, f"staged in the build directory: exit {p.returncode}, {exes}"):
        staged = os.path.realpath(exes[0])
        doc, p = env_doc(staged, "staged in the build directory")
        want = os.path.join(os.path.dirname(os.path.dirname(staged)), "share", "tlbprof", "events")
        need(doc.get("events_dir") == want,
             f"staged in the build directory: events_dir {doc.get('events_dir')!r}, want {want}")
        no_source_tree(p, "staged in the build directory")
finally:
    shutil.rmtree(stage)

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok: installed copy reads its own datadir and says so when it cannot")
