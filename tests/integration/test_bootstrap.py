#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tools/bootstrap's package sets, run dry: --runtime installs what building and running need and no analyser."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.path.realpath(os.environ.get("TLBPROF_TEST_SOURCE_DIR") or
                          os.path.join(os.path.dirname(__file__), "..", ".."))
# What .ci/run and the packaging use, and the test suite's consumers: never in the runtime set.
ANALYSERS = {"clang", "clang-tidy", "cppcheck", "valgrind", "debhelper", "dpkg-dev", "fakeroot"}
NODE = {"nodejs", "npm"}    # Ajv's runtime: Debian's, for --test and --dev, where no npm is on PATH
TEST_ONLY = {"python3-jsonschema", "python3-prometheus-client", "python3-pandas", "prometheus", "libxml2-utils",
             "libbenchmark-tools", "python3-scipy", "cmark-gfm", "chromium"}
failures = []


def need(cond, what):
    if not cond:
        failures.append(what)
    return cond


def fake(bindir, name, body):
    path = os.path.join(bindir, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)


def packages_of(set_flag, npm_on_path=True):
    """Run a copy of tools/bootstrap with fake dpkg-query, id, apt-get, npm and meson; the packages it installs.
    Without npm_on_path, npm appears only once apt-get has installed it (a fresh Debian 12), and the PATH holds
    nothing but the fakes and the few tools the script runs."""
    with tempfile.TemporaryDirectory() as d:
        repo, bindir, log = os.path.join(d, "repo"), os.path.join(d, "bin"), os.path.join(d, "log")
        os.makedirs(os.path.join(repo, "tools"))
        os.makedirs(bindir)
        for name in ("bootstrap", "node-packages.json"):
            shutil.copy2(os.path.join(SOURCE, "tools", name), os.path.join(repo, "tools", name))
        fake(bindir, "dpkg-query", "exit 1")			# nothing is installed
        fake(bindir, "id", "echo 0")				# as root: no sudo
        npm = f'#!/bin/sh\necho "npm $*" >> "{log}"; mkdir -p tools/node/node_modules\n'	# in the copy
        npm_path = os.path.join(bindir, "npm")
        if npm_on_path:
            fake(bindir, "apt-get", f'echo "apt-get $*" >> "{log}"')
            path = bindir + os.pathsep + os.environ.get("PATH", "")
        else:
            # apt-get "installs" npm when asked for it; the PATH has no other npm.
            fake(bindir, "apt-get", f'echo "apt-get $*" >> "{log}"\ncase " $* " in *" npm "*) '
                 f"printf '%s' '{npm}' > '{npm_path}'; chmod +x '{npm_path}';; esac")
            for tool in ("sh", "cat", "cp", "cmp", "mkdir", "grep", "echo", "dirname", "printf", "chmod"):
                found = shutil.which(tool)
                if found and not os.path.exists(os.path.join(bindir, tool)):
                    os.symlink(found, os.path.join(bindir, tool))
            path = bindir
        if npm_on_path:
            with open(npm_path, "w") as f:
                f.write(npm)
            os.chmod(npm_path, 0o755)
        fake(bindir, "meson", f'echo "meson $*" >> "{log}"')
        env = {**os.environ, "PATH": path}
        p = subprocess.run(["sh", os.path.join(repo, "tools", "bootstrap"), set_flag, os.path.join(d, "build")],
                           capture_output=True, text=True, timeout=60, env=env)
        need(p.returncode == 0, f"bootstrap {set_flag}: exit {p.returncode}: {p.stderr.strip()}")
        lines = open(log).read().splitlines() if os.path.exists(log) else []
    installs = [line.split() for line in lines if line.startswith("apt-get") and " install " in line]
    need(len(installs) == 1, f"bootstrap {set_flag}: apt-get install runs {len(installs)} times: {lines}")
    pkgs = {w for w in (installs[0] if installs else []) if not w.startswith("-") and w not in ("apt-get", "install")}
    return pkgs, lines


runtime, runtime_log = packages_of("--runtime")
need(not runtime & ANALYSERS, f"--runtime installs analysers: {sorted(runtime & ANALYSERS)}")
need(not runtime & TEST_ONLY, f"--runtime installs test consumers: {sorted(runtime & TEST_ONLY)}")
need(not any(p.startswith("libclang-rt") for p in runtime), f"--runtime installs a sanitizer runtime: {runtime}")
need(not any(line.startswith("npm") for line in runtime_log), f"--runtime runs npm: {runtime_log}")
need(any(line.startswith("meson setup") for line in runtime_log), f"--runtime configures no build dir: {runtime_log}")

# Enough to build: every package that provides a required dependency() of meson.build (its .pc file here).
meson_build = open(os.path.join(SOURCE, "meson.build")).read()
pkg_config, dpkg = shutil.which("pkg-config"), shutil.which("dpkg")
for m in re.finditer(r"dependency\('([^']+)'([^)]*)\)", meson_build):
    name, rest = m.group(1), m.group(2)
    if "required" in rest or not pkg_config or not dpkg:
        continue
    pcdir = subprocess.run([pkg_config, "--variable=pcfiledir", name], capture_output=True, text=True).stdout.strip()
    owner = subprocess.run([dpkg, "-S", os.path.join(pcdir, name + ".pc")], capture_output=True, text=True)
    if owner.returncode != 0:
        print(f"note: {name}.pc belongs to no Debian package here: not checked")
        continue
    pkg = owner.stdout.split(":")[0]
    need(pkg in runtime, f"--runtime lacks {pkg} ({name}.pc, a required dependency of meson.build)")
for pkg in ("gcc", "meson", "ninja-build", "pkg-config", "libpfm4-dev"):
    need(pkg in runtime, f"--runtime lacks {pkg}")

# The larger sets hold the smaller ones; the analysers come with --dev only.
test, test_log = packages_of("--test")
dev, _ = packages_of("--dev")
need(runtime <= test <= dev, f"sets do not nest: test lacks {sorted(runtime - test)}, dev lacks {sorted(test - dev)}")
need(TEST_ONLY <= test and not test & ANALYSERS, f"--test: consumers {sorted(TEST_ONLY - test)} missing, analysers "
     f"{sorted(test & ANALYSERS)} present")
need({"clang", "clang-tidy", "cppcheck", "valgrind"} <= dev, f"--dev lacks analysers: {sorted(dev)}")
need(any(line.startswith("npm install") for line in test_log), f"--test installs no Ajv: {test_log}")
need(not test & NODE, f"--test installs Debian's {sorted(test & NODE)} over the npm already on PATH")
# A fresh Debian 12 has no npm: --test installs Debian's nodejs and npm, then Ajv through it; --runtime neither.
fresh, fresh_log = packages_of("--test", npm_on_path=False)
need(NODE <= fresh and any(line.startswith("npm install") for line in fresh_log),
     f"--test without npm on PATH: installs {sorted(fresh & NODE)}, then {fresh_log}")
fresh_runtime, fresh_runtime_log = packages_of("--runtime", npm_on_path=False)
need(not fresh_runtime & NODE and not any(line.startswith("npm") for line in fresh_runtime_log),
     f"--runtime without npm on PATH installs {sorted(fresh_runtime & NODE)}: {fresh_runtime_log}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"ok: --runtime installs {len(runtime)} packages ({' '.join(sorted(runtime))}), no analyser")
