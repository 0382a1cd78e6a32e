/* SPDX-License-Identifier: MIT */
/* Host facts a guest can see move during a run: steal time, khugepaged's work, DAMON schemes. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What /proc/stat and khugepaged's counters say at one moment; a fact that could not be read says why. */
struct host_snapshot {
	bool stat_known;		/* /proc/stat's aggregate cpu line was read */
	uint64_t total_ticks, steal_ticks;	/* all CPUs, USER_HZ ticks (env_parse_proc_stat_cpu) */
	bool khugepaged_present;	/* khugepaged/full_scans was read */
	uint64_t full_scans;		/* complete scans of every mm khugepaged has made since boot */
	bool collapsed_known;		/* khugepaged/pages_collapsed was read */
	uint64_t pages_collapsed;	/* huge pages khugepaged has made since boot */
	char khugepaged_why[96];	/* why full_scans was not read ("not present: ..."), "" when it was */
};

/* DAMON's sysfs interface (/sys/kernel/mm/damon/admin) at one moment. */
struct host_damon {
	bool present;			/* the kdamonds directory exists and was listed */
	char why[96];			/* why not present, "" when it is */
	unsigned kdamonds;		/* kdamond directories */
	unsigned running;		/* of those, state "on" */
	unsigned schemes_active;	/* schemes under a running kdamond */
	char actions[96];		/* their distinct actions, comma-separated ("pageout,hugepage"), "" for none */
};

/* The host facts of a run: read before the first phase and after the last (host_read_*). */
struct host_facts {
	bool recorded;			/* false: not read (tlbprof env, reports from before these facts) */
	struct host_snapshot before, after;
	struct host_damon damon_before, damon_after;
};

/*
 * Read /proc/stat and khugepaged's counters under root ("" for this
 * machine; tests pass a directory holding proc/stat and sys/kernel/mm/...).
 * Never fails: a missing or malformed file leaves its fact unknown with the
 * reason, never a zero that looks measured.
 */
void host_read_snapshot(const char *root, struct host_snapshot *out);

/* Read DAMON's kdamonds, their state and their schemes' actions under root, likewise. */
void host_read_damon(const char *root, struct host_damon *out);

/* Pure: whether a DAMON action changes memory (everything but "stat", which only counts). */
bool host_damon_action_moves_memory(const char *action);

/*
 * Pure: what moved between the two snapshots, for the checks: the share of
 * CPU time stolen (steal / total ticks, all CPUs), khugepaged's full scans
 * and collapsed pages. Each returns false when it could not tell (a side
 * was not read, or a counter went backwards).
 */
bool host_steal_share(const struct host_facts *h, double *share);
bool host_khugepaged_delta(const struct host_facts *h, uint64_t *full_scans, uint64_t *pages_collapsed,
			   bool *collapsed_known);

/*
 * Pure parsers of the sysfs texts above (unit-tested on fixtures). Each
 * returns 0 or -EINVAL (malformed text).
 */
/* A sysfs counter: "12\n" -> 12 (digits, surrounding whitespace allowed; no sign). */
int env_parse_u64(const char *text, uint64_t *value);
/* A kdamond's state file: "on" -> true, "off" -> false. */
int env_parse_damon_state(const char *text, bool *running);
/* A scheme's action file: one word of [a-z_] ("pageout\n" -> "pageout"); -ERANGE when out is too small. */
int env_parse_damon_action(const char *text, char *out, size_t out_size);
