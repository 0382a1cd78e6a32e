#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tlbprof run on the unmarked examples/broken benchmarks: each trap fires exactly its check, in every repetition,
and none of the unmarked checks fires on the correct ones."""
import json
import os
import subprocess
import sys
import tempfile

from machine_probe import zero_page_on_read, zero_page_rss_kib
from report_check import Failures, ReportError, validate

TLBPROF, BROKEN = sys.argv[1], sys.argv[2]
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "broken", "interpreted.py")
# valgrind: once each; TLBPROF_TEST_REPS for a pass that looks for memory errors, not for rare misjudgements
# (.ci/run's ASan build: 3, where 10 took 255 s of a 30-minute budget on a Zen 5 guest).
REPS = 1 if os.environ.get("TLBPROF_TEST_QUICK") else int(os.environ.get("TLBPROF_TEST_REPS", "10"))
UNMARKED = {"hot_loop", "first_touch_in_timed_loop", "sequential_page_order", "same_page_offset", "zero_page_reads",
            "thp_backed_region", "pinning", "exec_image", "coarse_clock", "clock_per_access",
            "empty_timed_window", "load_dependence", "cpu_time_clock", "off_cpu_in_timed_window"}
FORKED = ["sh", "-c", '"$0"; exit $?']	# a shell that forks the benchmark and waits for it
# The same after spending CPU time in its own code first, as pyenv's shim (a bash script) does: samples in the
# shell's own code and none in the benchmark's, whose code is in a shared library. About 15 ms of the shell's user
# time, a quarter of the benchmark's (30000 rounds took as much as the benchmark with LD_LIBRARY_PATH set, as meson
# sets it, and then the shell is the busiest process in fact).
BUSY_FORKED = ["sh", "-c", 'i=0; while [ $i -lt 10000 ]; do i=$((i+1)); done; "$0"; exit $?']
# A shell that runs some 1.5 s of CPU and then execs the benchmark: the benchmark runs wholly at the slow cpu-clock
# rate (100 Hz, from 100 ms on). The build before 10 s of CPU were needed for thinning kept 5 of the loop's samples
# in all, and took a worker for the hot thread in 3 of 10 runs.
SLOW_EXEC = ["sh", "-c", 'i=0; while [ $i -lt 1300000 ]; do i=$((i+1)); done; exec "$0"']
KERNEL_DECODED = "[unknown], the kernel (3 or 10 instructions, and up to 16 bytes past its last sample) decoded"
# benchmark, wrapper, the checks that must warn (of the unmarked ones and build_optimised)
CASES = [
    ("first_touch", [], {"first_touch_in_timed_loop"}),
    ("zero_page", [], {"zero_page_reads"}),
    ("sequential", [], {"first_touch_in_timed_loop", "sequential_page_order"}),
    # Stripped: the same trap and the same checks, the hot loop's function bounded by its .eh_frame entry.
    ("sequential_stripped", [], {"first_touch_in_timed_loop", "sequential_page_order"}),
    # In C++, its hot function a template member whose mangled name outgrows the report's fields: shown demangled.
    ("sequential_cxx", [], {"first_touch_in_timed_loop", "sequential_page_order"}),
    # The timed kernel in hand-written assembly that no symbol or unwind entry covers, stripped, timed with rdtsc (as
    # likwid-bench's): its code is the hot loop, not the initialisation routine beside it.
    ("first_touch_asm", [], {"first_touch_in_timed_loop"}),
    # The timed loop in a shared library that a launcher executable calls (python3.11 built --enable-shared calls
    # libpython): the executable's own code has no samples, the hot loop is the library's. Run directly, and through a
    # shell that first spends more CPU time in its own code than the benchmark's executable does.
    ("first_touch_lib", [], {"first_touch_in_timed_loop"}),
    ("first_touch_lib", BUSY_FORKED, {"first_touch_in_timed_loop"}),
    ("same_offset", [], {"first_touch_in_timed_loop", "same_page_offset"}),
    # A STREAM-style triad whose timed loop first touches its three arrays side by side: each page is met at its
    # first line, as any scan meets it, so the offsets say nothing of where it reads (every line). The build before
    # warned same_page_offset (100 % at byte 0).
    ("stream_first_touch", [], {"first_touch_in_timed_loop"}),
    ("unpinned", [], {"pinning"}),
    ("thp_4k", [], {"thp_backed_region"}),
    ("coarse_clock", [], {"coarse_clock"}),
    # Linked statically: no libc mapped, the probes go on the program's own clock_gettime.
    ("coarse_clock_static", [], {"coarse_clock"}),
    ("clock_per_access", [], {"clock_per_access"}),
    ("clock_per_access_thread", [], {"clock_per_access"}),
    ("short_window", [], {"coarse_clock"}),
    ("deleted_loop", [], {"empty_timed_window"}),
    # The same trap in ten reps, a fresh chain written before each: one clock read at each start and stop, the reps'
    # runs bare, the writing between them, as a total's reads around back-to-back reps would be. empty_timed_window
    # had passed it ("a timed loop is there, only short", on the writing); it could not tell, and says why.
    ("deleted_reps", [], set()),
    # A 10 ms sleep inside each of ten timed reps: the whole command off every CPU for half the windows its
    # hot loop ran in. No check saw it before: the reads bracket the loop, and its CPU time is the chase's.
    ("sleep_in_window", [], {"off_cpu_in_timed_window"}),
    # Two workers pinned to the main thread's one CPU: it waited for a CPU for over half the windows its hot loop ran
    # in, its own workers on that CPU in its place, while the other CPU stood idle.
    ("oversubscribed", [], {"off_cpu_in_timed_window"}),
    ("wrapped_O0", ["env", "TLBPROF_EXAMPLE=1"], {"build_optimised"}),
    # Through a shell that forks the benchmark rather than exec it (as a script, make or GNU time does): the
    # watch follows the process it starts, its regions, faults, threads and clock reads.
    ("first_touch", FORKED, {"first_touch_in_timed_loop"}),
    ("clock_per_access", FORKED, {"clock_per_access"}),
    ("thp_4k", FORKED, {"thp_backed_region"}),
    ("homework_O0", [], {"build_optimised"}),
    ("homework_O2", [], set()),
    ("correct_init", [], set()),
    # Two chains in arrays allocated 150 ms apart, which the kernel merges into one mapping: the first array, polled
    # alone before it was written, is the merged mapping's memory. The build before took it for a region of its own,
    # never resident, and zero_page_reads warned in every run.
    ("late_alloc", [], set()),
    # mbw's shape: two arrays filled once by its own function, copied with memcpy, timed with gettimeofday (the
    # vDSO's: no read traced). The fill is the program's hottest own code; the build before took it for the timed
    # loop and warned first_touch_in_timed_loop, sequential_page_order and same_page_offset in every run.
    ("fill_once", [], set()),
    ("correct_main", [], set()),
    ("correct_asm", [], set()),
    # A read of the clock at its start (for the total it prints) opens a window around its memset and warm-up, which
    # the first rep closes: the faults fell in one of the ten windows the loop ran in, from memset, and
    # first_touch_in_timed_loop warned in every run before it counted the windows that took them.
    ("correct_total_time", [], set()),
    # Its trap twin: the first timed rep is the first touch, a setup in main between the start's read and the first
    # rep's. Anchored at the start's read, the clock's reads paired as a timer's (the setup in the first pair, the reps
    # in the gaps), and first_touch_in_timed_loop passed, the faults "between a stop and the next start". Every pair but
    # the first and the last holds nothing but a read: the reads of a total around back-to-back reps, not a timer.
    ("first_touch_total", [], {"first_touch_in_timed_loop"}),
    # Timed as Google Benchmark times: start/stop reads of two clocks around each run, and between a stop and the
    # next start the setup, in the same function as the timed chase: a fresh region's chain written (its first touch)
    # before each run, or one region's chain written again before each pass (PauseTiming()/ResumeTiming()). The
    # setup's faults, taken by the hot function, made their windows timed, and first_touch_in_timed_loop warned in
    # every run before the reads were paired. Run only where the gbench_ examples below are not built.
    ("correct_paired", [], set()),
    ("correct_paused", [], set()),
    # Its trap: the chase's result never used, so -O2 deletes the timed loop, and each run's start and stop are back
    # to back between the setups. The span from the first read to the last held all the CPU time, setups included,
    # and empty_timed_window passed; first_touch_in_timed_loop warned instead, on the setups' faults.
    ("deleted_paired", [], {"empty_timed_window"}),
    # The same under Google Benchmark itself (libbenchmark, where it is installed): the setup before each run's
    # `for (auto _ : state)`, and between PauseTiming() and ResumeTiming(); and its trap, a fresh region written
    # inside the timed loop.
    ("gbench_setup", [], set()),
    ("gbench_paused", [], set()),
    ("gbench_first_touch", [], {"first_touch_in_timed_loop"}),
    ("gbench_deleted", [], {"empty_timed_window"}),
    # Populated by the kernel (MADV_POPULATE_WRITE), then its first write timed: no fault anywhere. Natively right;
    # under shadow paging each first write traps, and first_touch_in_timed_loop says it could not tell (below).
    ("populate_first_pass", [], set()),
    # OpenMP: its threads run the hot loop alike, its master alone times it; the hot thread is the master.
    ("parallel", [], set()),
    # The same at 100 Hz: a 55 ms loop keeps 1 to 9 samples a thread, and the master must still be the hot thread.
    ("parallel", SLOW_EXEC, set()),
    # The same timed with clock(): the master reads the CPU time of both threads, about twice the elapsed time.
    ("cpu_time_parallel", [], {"cpu_time_clock"}),
    # pthreads: the main thread reads the clock, releases two workers, joins them and reads it again; it runs none of
    # the loop, and is the hot thread all the same.
    ("joined", [], set()),
    # Interpreted (examples/broken/interpreted.py, run by this test's own Python): the interpreter reads the clock
    # from its startup on, so a memset before the timing lies between its first and last read, but in no window
    # its hot loop ran in.
    # Rust: vec![0u8; n] is a fresh zeroed mapping that the timed loop touches first; its twin writes it before. The
    # hot function is shown as rustc-demangle and perf show it, without the legacy name's hash.
    ("rust_first_touch", [], {"first_touch_in_timed_loop"}),
    ("rust_correct", [], set()),
    ("interpreted_prefault", [], set()),
    ("interpreted_first_touch", [], {"first_touch_in_timed_loop"}),
]

ZERO_RSS, ZERO_ALL = zero_page_rss_kib()
if not zero_page_on_read(ZERO_RSS, ZERO_ALL):
    # The trap does not exist on this kernel: the benchmark's reads land on pages of their own, and the check must
    # say so (pass: every faulted page resident) rather than guess at a trap it has no evidence of.
    print(f"zero_page: this kernel maps no zero page on a read fault ({ZERO_RSS} of {ZERO_ALL} KiB resident after "
          "a read of each page): zero_page_reads must pass here")
    CASES = [(n, w, set() if n == "zero_page" else want) for n, w, want in CASES]
# meson test sets MALLOC_PERTURB_: malloc would then write the memory itself, and the first touch is no longer the
# benchmark's. A user's run has no such variable.
ENV = {k: v for k, v in os.environ.items() if k != "MALLOC_PERTURB_"}
# Single-threaded benchmarks that pin themselves at startup, run directly or through an exec'ing wrapper: the polls
# and the exit (the zombie keeps its mask) see the hot thread's one-CPU mask over its hot function's samples, so
# pinning passes rather than could not tell. Allowed a could-not-tell in one run of ten, for a poll the host delayed.
PINS_SELF = {"first_touch", "populate_first_pass", "zero_page", "sequential", "sequential_stripped", "sequential_cxx", "same_offset",
             "stream_first_touch", "late_alloc", "fill_once",
             "thp_4k", "coarse_clock", "coarse_clock_static", "clock_per_access", "short_window", "deleted_loop",
             "deleted_reps",
             "wrapped_O0", "homework_O0", "homework_O2", "correct_init", "correct_main", "first_touch_asm",
             "correct_asm", "first_touch_lib", "parallel", "rust_first_touch", "rust_correct", "correct_total_time",
             "cpu_time_parallel", "sleep_in_window", "oversubscribed", "correct_paired", "correct_paused",
             "first_touch_total",
             "gbench_setup", "gbench_paused", "gbench_first_touch", "gbench_deleted", "deleted_paired"}
busy_runs = 0


def busy_machine(c, want):
    """off_cpu_in_timed_window's warning of a busy machine, where the run was not looking for that check: the suite
    runs two tests at once on two vCPUs, and a benchmark waited for a CPU for half its timed windows or more (up to
    three quarters in a .ci/run dry run beside this test). The warning is the truth of that run; its figures must
    say so, its own tasks not the cause."""
    global busy_runs
    if c["id"] != "off_cpu_in_timed_window" or c["id"] in want or "machine was busy" not in c["message"]:
        return False
    e = c["evidence"]
    ok = e["measured_preempted_ns"] >= 0.5 * e["measured_windows_span_ns"] and \
        e["measured_preempted_own_ns"] < 0.25 * e["measured_windows_span_ns"] and \
        e["measured_idle_ns"] < 0.1 * e["measured_windows_span_ns"]
    busy_runs += ok
    return ok


fail = Failures()
# The C twins of the Google Benchmark examples stand in for them where libbenchmark is not installed; where it is,
# the library's own timer is the proof, and the twins' ten runs each are left out of .ci/run's 30 minutes.
GBENCH_BUILT = os.path.exists(os.path.join(BROKEN, "broken-gbench_setup"))
for name, wrapper, want in CASES:
    if GBENCH_BUILT and name in ("correct_paired", "correct_paused", "deleted_paired"):
        print(f"{name}: the Google Benchmark examples are built and stand for it here: skipped")
        continue
    if not os.path.exists(os.path.join(BROKEN, "broken-" + name)) and (name.endswith(("_static", "_cxx", "_asm")) or name in ("parallel", "cpu_time_parallel") or name.startswith(("rust_", "gbench_"))):
        print(f"{name}: not built (no static C library, C++ or Rust compiler, OpenMP or libbenchmark, or not x86-64, "
              "here): skipped")
        continue
    pinned_seen = 0
    for rep in range(REPS):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "r.json")
            interpreted = name.startswith("interpreted_")
            # Pinned from outside, as pyperf --affinity does: tlbprof run --cpu.
            command = ["--cpu", str(min(os.sched_getaffinity(0))), "--", sys.executable, SCRIPT,
                       name.split("_", 1)[1]] if interpreted else ["--", *wrapper, os.path.join(BROKEN, "broken-" + name)]
            p = subprocess.run([TLBPROF, "run", "--json", out, "--quiet", "--fail-on", "never", *command],
                               capture_output=True, text=True, timeout=120, env=ENV)
            if p.returncode != 0 or not os.path.exists(out):
                fail(f"{name}: exit {p.returncode}: {p.stderr.strip()}")
                continue
            r = json.load(open(out))
            try:
                validate(r)
            except ReportError as e:
                fail(f"{name}: report does not validate: {e}")
            warned = {c["id"] for c in r["analysis"]["checks"]
                      if c["status"] in ("warn", "fail") and (c["id"] in UNMARKED or c["id"] == "build_optimised")
                      and not busy_machine(c, want)}
            if warned != want:
                said = "; ".join(f"{c['id']}: {c['status']}: {c['message']}" for c in r["analysis"]["checks"]
                                 if c["id"] in warned ^ want)
                fail(f"{name} (run {rep + 1} of {REPS}): warned {sorted(warned)}, expected {sorted(want)} ({said})")
            off = [c for c in r["analysis"]["checks"] if c["id"] == "off_cpu_in_timed_window"]
            kind = {"sleep_in_window": "sat off every CPU", "oversubscribed": "in its place"}.get(name)
            if kind and off and off[0]["status"] == "warn" and kind not in off[0]["message"]:
                fail(f"{name}: off_cpu_in_timed_window warned for another cause: {off[0]['message']}")
            if wrapper in (FORKED, BUSY_FORKED):
                w = r["target"]["watch"]
                if not (w["program"] or "").endswith("broken-" + name) or w["processes"] < 2 or \
                        r["target"]["path"].endswith("broken-" + name):
                    fail(f"{name} through sh: program {w['program']} (want the forked benchmark), processes "
                         f"{w['processes']}, path {r['target']['path']} (want the shell's)")
            elif wrapper and not r["target"]["path"].endswith("broken-" + name):
                fail(f"{name}: provenance read from {r['target']['path']}, not the image finally exec'd")
            probed = r["target"]["watch"]["clocks"]["libc"] or ""
            if name.endswith("_static") != probed.endswith("broken-" + name):
                fail(f"{name}: the clock probes went on {probed} (want the program itself only when it is static)")
            clock = r["target"]["watch"]["cpu_clock"]
            if name == "joined" and (r["target"]["watch"]["clocks"]["hot_reads"] != 2 or
                                     clock.get("hot_tid") != r["target"]["watch"]["clocks"]["pid"]):
                fail(f"joined: the hot thread {clock.get('hot_tid')} read the clock "
                     f"{r['target']['watch']['clocks']['hot_reads']} times: not the main thread "
                     f"{r['target']['watch']['clocks']['pid']}, which times the workers' loop")
            if name == "parallel" and r["target"]["watch"]["clocks"]["hot_reads"] < 20:
                fail(f"parallel: the hot thread {clock.get('hot_tid')} read the clock "
                     f"{r['target']['watch']['clocks']['hot_reads']} times: not the master "
                     f"{r['target']['watch']['clocks']['pid']}, which times the loop (samples at "
                     f"{clock['period_ns']} ns, {clock['hot_function_samples']} in {clock['hot_function']})")
            if name == "populate_first_pass":
                first = r["environment"].get("first_access") or {}
                ft = next(c for c in r["analysis"]["checks"] if c["id"] == "first_touch_in_timed_loop")
                shadow = first.get("ns_per_page", 0) >= 1000
                if (ft["status"] == "skip" and "populated by the kernel" in ft["message"]) != shadow:
                    fail(f"populate_first_pass: first access {first}, first_touch_in_timed_loop {ft['status']}: "
                         f"{ft['message']} (want a could-not-tell naming the populated region exactly where the "
                         "probe saw a trap per page)")
            if interpreted:
                continue	# an interpreter's own functions: nothing of the examples' below applies
            unnamed = name.endswith("_stripped")
            # What a wrong hot function was chosen from, for the next one to read (correct_asm's initialiser was
            # named once in some 300 runs under load, and the counts were gone with the report).
            seen = (f"top {[(t.get('function'), t.get('count')) for t in clock.get('top_functions') or []][:5]}, "
                    f"{clock.get('samples')} samples, {clock.get('lost')} lost, shares {clock.get('shares')}, "
                    f"hot loop {clock.get('hot_loop')}")
            if clock.get("hot_function_unnamed") != unnamed or \
                    unnamed != (clock.get("hot_function") or "").startswith("sub_"):
                fail(f"{name}: hot function {clock.get('hot_function')}, unnamed {clock.get('hot_function_unnamed')} "
                     f"(want {'sub_ and its start, unnamed' if unnamed else 'its symbol'}; {seen})")
            lib = name.endswith("_lib")
            if lib != (clock.get("hot_library") or "").endswith("/libbroken-kernel.so") or \
                    lib != (clock.get("hot_function") == "lib_kernel_touch"):
                fail(f"{name}: hot function {clock.get('hot_function')!r} in {clock.get('hot_library')!r} (want "
                     f"{'lib_kernel_touch in libbroken-kernel.so' if lib else 'one of the executable'}; "
                     f"top {clock.get('top_functions')}, {clock.get('samples')} samples, {clock.get('lost')} lost)")
            uncovered = name.endswith("_asm")
            code = clock.get("hot_loop_code") or {}
            if uncovered != (clock.get("hot_function") == "[unknown]") or \
                    (uncovered and not (code.get("decoded") and 3 <= code.get("instructions", 0) <= 16)):
                fail(f"{name}: hot function {clock.get('hot_function')!r}, its loop's code {code} (want "
                     f"{KERNEL_DECODED if uncovered else 'a function'}; {seen})")
            if name.endswith("_cxx") and not (clock.get("hot_function") or "").startswith(
                    "memory_latency_benchmark_suite_for_address_translation::first_touch_page_walkers::"):
                fail(f"{name}: hot function {clock.get('hot_function')!r}, not demangled")
            if name.startswith("rust_") and clock.get("hot_function") != f"broken_{name}::touch":
                fail(f"{name}: hot function {clock.get('hot_function')!r} (want broken_{name}::touch, demangled, "
                     "without its hash)")
            build = [c for c in r["analysis"]["checks"] if c["id"] == "build_optimised"]
            inferred = bool(build) and build[0]["evidence"].get("inferred") == 1
            if name == "homework_O0" and not inferred:
                fail(f"homework_O0 records no level: build_optimised must say it inferred -O0 from the code: {build}")
            if name == "homework_O2" and not (inferred and build[0]["status"] == "pass"):
                fail(f"homework_O2 records no level: build_optimised must pass from the code, inferred: {build}")
            pinning = [c for c in r["analysis"]["checks"] if c["id"] == "pinning"]
            pinned_seen += bool(pinning) and pinning[0]["status"] == "pass"
            if name in ("correct_paired", "correct_paused", "gbench_setup", "gbench_paused"):
                # The faults pass because the reads pair as a timer's starts and stops, not because of some other
                # evidence: the report names the clock, and the message says where the faults fell.
                pairs = r["target"]["watch"]["clocks"].get("paired_clock") or {}
                touch = [c for c in r["analysis"]["checks"] if c["id"] == "first_touch_in_timed_loop"]
                if pairs.get("clock") != "CLOCK_MONOTONIC" or not pairs.get("region_faults_in_gaps") or not touch \
                        or "between a stop and the next start of a timer" not in touch[0]["message"]:
                    fail(f"{name}: its CLOCK_MONOTONIC reads must pair as a timer's, the faults between a stop and "
                         f"the next start: paired_clock {pairs}, {touch[0]['message'] if touch else 'no check'}")
            if name in ("deleted_paired", "gbench_deleted"):
                # Warned because the timer's pairs are empty, not for another reason the span could give.
                pairs = r["target"]["watch"]["clocks"].get("paired_clock") or {}
                empty = [c for c in r["analysis"]["checks"] if c["id"] == "empty_timed_window"]
                if not pairs.get("empty") or not empty or "timer times nothing" not in empty[0]["message"]:
                    fail(f"{name}: its pairs must read as empty, the timer timing nothing: paired_clock {pairs}, "
                         f"{empty[0]['message'] if empty else 'no check'}")
            if name == "deleted_reps":
                empty = [c for c in r["analysis"]["checks"] if c["id"] == "empty_timed_window"]
                if not empty or empty[0]["status"] != "skip" or "pair into runs that hold nothing but a read" not in \
                        empty[0]["message"] or r["target"]["watch"]["clocks"].get("bare_pair_reads") != 20:
                    fail(f"deleted_reps: empty_timed_window must say it could not tell, its 20 reads' runs bare: "
                         f"{empty[0] if empty else 'no check'}")
            if name == "correct_main":
                mig = [c for c in r["analysis"]["checks"] if c["id"] == "cpu_migrations"]
                if mig and mig[0]["status"] == "warn":
                    fail(f"correct_main pins itself at startup: cpu_migrations warned: {mig[0]['message']}")
    if name in PINS_SELF and wrapper not in (FORKED, BUSY_FORKED) and REPS >= 5 and pinned_seen < 0.9 * REPS:
        fail(f"{name} pins itself: pinning passed in {pinned_seen} of {REPS} runs (the mask unseen over its hot "
             "function's samples)")
if busy_runs:
    print(f"off_cpu_in_timed_window: {busy_runs} run(s) warned of a busy machine, with the figures to show it")
fail.finish(f"broken: {len(CASES)} benchmarks x {REPS} runs, each trap's check and no other")
