/* SPDX-License-Identifier: MIT */
/*
 * The options struct of each command. Each is filled only by its own
 * command's parse (src/cmd/NAME.c, from its option table) and read only by
 * its run; they are declared together here so that the tests can see what a
 * command line parsed into.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "measure/plan.h"
#include "measure/runner.h"
#include "report/report.h"
#include "cmd/cli.h"

/* tlbprof [OPTIONS] */
struct measure_options {
	struct plan_request plan;	/* what the workload and the measuring options ask for */
	char sizes_text[PLAN_MAX_SIZES][32];	/* each --size item as typed, for messages (plan.sizes_bytes[i]) */
	struct runner_child child;	/* --internal-child */
	bool is_child;
	int controls;			/* enum controls_mode */
	int fail_on;			/* enum fail_on */
	const char *events_dir;
	struct cli_events events;	/* -e/--event */
	struct report_outputs out;
};

/* tlbprof analyze */
struct analyze_options {
	const char *input_path;
	struct report_outputs out;
	int fail_on;		/* enum fail_on */
};

/* tlbprof compare */
struct compare_options {
	const char *base_path, *new_path;	/* each side's first report */
	/* Every report of each side (compare A1 A2 -- B1 B2; BASE NEW: one each), borrowed from argv. */
	const char *paths[2][COMPARE_MAX_RUNS];
	size_t n_paths[2];
	double threshold_pct;
	int fail_on;		/* enum fail_on */
	int format;		/* enum report_compare_format: text or markdown */
	const char *output_path;	/* --output: where --format goes; NULL: stdout */
	struct report_outputs out;
};

/* tlbprof env */
struct env_options {
	struct report_outputs out;
	const char *events_dir;
};

/* tlbprof events */
struct events_options {
	const char *pmu;	/* --pmu: a map name to encode for; NULL: this machine's PMU */
	struct report_outputs out;
	const char *events_dir;
};

/* tlbprof plot */
struct plot_options {
	const char *input_path;
	const char *output_path;	/* -o: the SVG, "-" for stdout; a name ending in .png: a PNG */
	unsigned width_px;		/* --width: the picture's width, px */
	bool png;			/* output_path ends in .png */
};

/* tlbprof run: --sample */
enum sample_what { SAMPLE_NONE, SAMPLE_PAGE_FAULTS, SAMPLE_DTLB_MISSES };

struct run_options {
	char **argv;				/* the command (NULL-terminated, borrowed from main's argv) */
	/* perf stat --control compatibility */
	char ctl_path[4096], ack_path[4096];	/* --control fifo:CTL[,ACK] ("" when not given) */
	int ctl_fd, ack_fd;			/* --control fd:CTL[,ACK], -1 when not given */
	bool start_disabled;			/* --delay -1 */
	unsigned repeat;			/* -r/--repeat: runs of the command (perf stat -r) */
	unsigned interval_ms;			/* -I/--interval-print: counts every MS (perf stat -I); 0: none */
	int attach_pid;				/* -p/--pid: count this running process (perf stat -p); 0: none */
	bool per_thread;			/* --per-thread: each thread's counts too (with -p, as perf stat) */
	int sample;				/* enum sample_what */
	int cpu;
	const char *events_dir;
	struct cli_events events;		/* -e/--event */
	int fail_on;				/* enum fail_on */
	struct report_outputs out;
};
