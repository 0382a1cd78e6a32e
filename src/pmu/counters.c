/* SPDX-License-Identifier: MIT */
/* Counters: resolve metrics through the events/ maps, encode them with libpfm4 and count them with perf_event_open. */

/*
 * This is the only file that talks to libpfm4 and perf_event_open(2).
 *
 * libpfm4 keeps its state in process globals: pfm_initialize() reads
 * LIBPFM_FORCE_PMU once, detects the PMUs and is idempotent afterwards.
 * counter_set_new() calls it every time (cheap) and nothing here calls
 * pfm_terminate(), since another set may still be using the library; its
 * tables are freed at exit. Changing LIBPFM_FORCE_PMU after the first
 * counter_set_new() therefore has no effect in this process.
 */

#include "pmu/counters.h"

#include "pmu/paranoid.h"
#include "pmu/perf_open.h"

/* meson's generated header defines TLBPROF_EVENTS_DIR; a bare compile has none. */
#if defined(__has_include)
#if __has_include("version.h")
#include "version.h"
#endif
#endif

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h>

/* ---- metrics --------------------------------------------------------- */

struct metric_desc {
	const char *key;	/* map-file and report key */
	const char *display;	/* perf-like display name */
	bool software;		/* expected to be a software event (for unresolved ones) */
};

static const struct metric_desc metric_descs[METRIC_COUNT] = {
	[METRIC_DTLB_LOADS] = { .key = "dtlb_loads", .display = "dTLB-loads" },
	[METRIC_DTLB_LOAD_MISSES] = { .key = "dtlb_load_misses", .display = "dTLB-load-misses" },
	[METRIC_PAGE_FAULTS] = { .key = "page_faults", .display = "page-faults", .software = true },
	[METRIC_MINOR_FAULTS] = { .key = "minor_faults", .display = "minor-faults", .software = true },
	[METRIC_MAJOR_FAULTS] = { .key = "major_faults", .display = "major-faults", .software = true },
	[METRIC_CYCLES] = { .key = "cycles", .display = "cycles" },
	[METRIC_INSTRUCTIONS] = { .key = "instructions", .display = "instructions" },
	[METRIC_LLC_LOAD_MISSES] = { .key = "llc_load_misses", .display = "LLC-load-misses" },
	[METRIC_WALK_ACTIVE] = { .key = "walk_active", .display = "walk-active" },
	[METRIC_WALK_COMPLETED] = { .key = "walk_completed", .display = "walk-completed" },
	[METRIC_STLB_HITS] = { .key = "stlb_hits", .display = "stlb-hits" },
	[METRIC_TASK_CLOCK] = { .key = "task_clock", .display = "task-clock", .software = true },
	[METRIC_CONTEXT_SWITCHES] = { .key = "context_switches", .display = "context-switches", .software = true },
	[METRIC_CPU_MIGRATIONS] = { .key = "cpu_migrations", .display = "cpu-migrations", .software = true },
};

const char *metric_name(enum metric m)
{
	if ((int)m < 0 || m >= METRIC_COUNT)
		return NULL;
	return metric_descs[m].key;
}

int metric_from_name(const char *name)
{
	if (!name)
		return -1;
	for (int m = 0; m < METRIC_COUNT; m++)
		if (strcmp(metric_descs[m].key, name) == 0)
			return m;
	return -1;
}

static const char *const status_names[] = {
	[COUNTER_OK] = "ok",
	[COUNTER_UNSUPPORTED] = "unsupported",
	[COUNTER_DENIED] = "denied",
	[COUNTER_MULTIPLEXED] = "multiplexed",
	[COUNTER_ERROR] = "error",
};

const char *counter_status_name(enum counter_status s)
{
	if ((int)s < 0 || (size_t)s >= sizeof(status_names) / sizeof(status_names[0]))
		return "error";
	return status_names[s];
}

double counter_scale(uint64_t value, uint64_t enabled_ns, uint64_t running_ns, bool *multiplexed)
{
	if (multiplexed)
		*multiplexed = false;
	if (running_ns == 0)
		return 0.0;
	if (running_ns >= enabled_ns)
		return (double)value;
	if (multiplexed)
		*multiplexed = true;
	return (double)value * ((double)enabled_ns / (double)running_ns);
}

void counter_reading_add_delta(struct counter_reading *acc, const struct counter_reading *begin,
			       const struct counter_reading *end, bool hardware)
{
	acc->value += end->value - begin->value;
	acc->enabled_ns += end->enabled_ns - begin->enabled_ns;
	acc->running_ns += end->running_ns - begin->running_ns;
	acc->scaled = hardware ? counter_scale(acc->value, acc->enabled_ns, acc->running_ns, NULL) : (double)acc->value;
}

const char *counters_default_events_dir(void)
{
#ifdef TLBPROF_EVENTS_DIR
	return TLBPROF_EVENTS_DIR;
#else
	return "events";
#endif
}

int counters_force_pmu(const char *pmu)
{
	/* libpfm4 deactivates every other PMU, its perf:: PMU too: ENCODE_INACTIVE keeps the generic events encodable. */
	if (setenv("LIBPFM_FORCE_PMU", pmu, 1) != 0 || setenv("LIBPFM_ENCODE_INACTIVE", "1", 1) != 0)
		return -errno;
	return 0;
}

/* ---- the set --------------------------------------------------------- */

#define EVENT_MAX (sizeof(((struct counter_info *)0)->event))

struct counter_event {
	struct counter_info info;
	struct perf_event_attr attr;	/* as encoded; open() adjusts a copy */
	bool encoded;			/* attr is valid */
	int fd;				/* -1 when not open */
	bool leader;			/* fd leads a group (enable/disable/reset target) */
	uint64_t base_enabled_ns;	/* times at the last reset (see counter_set_reset) */
	uint64_t base_running_ns;
	/* Status and note as opened; each read starts from them, so one multiplexed reading does not stick. */
	enum counter_status open_status;
	char open_reason[sizeof(((struct counter_info *)0)->reason)];
};

struct counter_set {
	struct counter_event *events;
	size_t n;
	char pmu_name[64];
	char pmu_desc[128];
	int pmu_num_cntrs;		/* generic counters libpfm4 reports; 0 unknown */
	bool forced;			/* LIBPFM_FORCE_PMU was set */
	/* What open() attaches to: the calling thread (pid 0), or another process (counter_set_open_task). */
	pid_t pid;
	bool inherit;
	bool enable_on_exec;
	/* The PMU map's precise dTLB-miss sampling event, encoded (counter_set_sample_event). */
	struct counter_sample_event sample_dtlb;
	int sample_dtlb_err;		/* 0, or -errno with sample_dtlb_reason */
	char sample_dtlb_reason[320];
};

size_t counter_set_size(const struct counter_set *set)
{
	return set ? set->n : 0;
}

const struct counter_info *counter_set_info(const struct counter_set *set, size_t i)
{
	if (!set || i >= set->n)
		return NULL;
	return &set->events[i].info;
}

const char *counter_set_pmu_name(const struct counter_set *set)
{
	return set->pmu_name;
}

const char *counter_set_pmu_desc(const struct counter_set *set)
{
	return set->pmu_desc;
}

/* ---- map files ------------------------------------------------------- */

struct event_map {
	char name[32];			/* "skx", "generic" */
	char event[METRIC_COUNT][EVENT_MAX];	/* "" = not listed */
	int line[METRIC_COUNT];
	/* "sample.dtlb_load_misses = EVENT": a precise event whose samples carry the missing load's address. */
	char sample_dtlb[EVENT_MAX];
};

#define SAMPLE_DTLB_KEY "sample.dtlb_load_misses"

static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	char *end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/*
 * Parse <dir>/<name>.events into *map. A missing optional file leaves the map
 * empty and returns 0. Returns -errno (ENOENT for a missing required file,
 * EINVAL for a malformed line) with a message naming path or path:line.
 */
static int event_map_load(struct event_map *map, const char *dir, const char *name, bool required,
			  char *errmsg, size_t errmsg_len)
{
	memset(map, 0, sizeof(*map));
	snprintf(map->name, sizeof(map->name), "%s", name);

	char path[4096];
	int len = snprintf(path, sizeof(path), "%s/%s.events", dir, name);
	if (len < 0 || (size_t)len >= sizeof(path)) {
		snprintf(errmsg, errmsg_len, "events directory path too long: %s", dir);
		return -ENAMETOOLONG;
	}

	FILE *f = fopen(path, "re");
	if (!f) {
		int err = errno;
		if (err == ENOENT && !required)
			return 0;
		snprintf(errmsg, errmsg_len, "cannot open %s: %s", path, strerror(err));
		return -err;
	}

	char buf[512];
	int lineno = 0;
	int ret = 0;
	while (fgets(buf, sizeof(buf), f)) {
		lineno++;
		size_t n = strlen(buf);
		if (n == sizeof(buf) - 1 && buf[n - 1] != '\n' && !feof(f)) {
			snprintf(errmsg, errmsg_len, "%s:%d: line longer than %zu characters",
				 path, lineno, sizeof(buf) - 2);
			ret = -EINVAL;
			break;
		}
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = '\0';
		char *line = trim(buf);
		if (*line == '\0')
			continue;

		/* Only the first '=' separates: libpfm4 attributes use '=' too (":c=1"). */
		char *eq = strchr(line, '=');
		if (!eq) {
			snprintf(errmsg, errmsg_len, "%s:%d: expected 'metric = event', got '%.64s'",
				 path, lineno, line);
			ret = -EINVAL;
			break;
		}
		*eq = '\0';
		char *key = trim(line);
		char *event = trim(eq + 1);

		if (strcmp(key, SAMPLE_DTLB_KEY) == 0) {
			if (*event == '\0' || strcspn(event, " \t") != strlen(event) || strlen(event) >= EVENT_MAX) {
				snprintf(errmsg, errmsg_len, "%s:%d: '%s' needs one event without whitespace", path, lineno,
					 key);
				ret = -EINVAL;
				break;
			}
			snprintf(map->sample_dtlb, sizeof(map->sample_dtlb), "%s", event);
			continue;
		}
		int m = metric_from_name(key);
		if (m < 0) {
			snprintf(errmsg, errmsg_len, "%s:%d: unknown metric '%.64s'", path, lineno, key);
			ret = -EINVAL;
			break;
		}
		if (*event == '\0') {
			snprintf(errmsg, errmsg_len, "%s:%d: metric '%s' has no event", path, lineno, key);
			ret = -EINVAL;
			break;
		}
		if (strcspn(event, " \t") != strlen(event)) {
			snprintf(errmsg, errmsg_len, "%s:%d: event for '%s' contains whitespace",
				 path, lineno, key);
			ret = -EINVAL;
			break;
		}
		if (strlen(event) >= EVENT_MAX) {
			snprintf(errmsg, errmsg_len, "%s:%d: event for '%s' is longer than %zu characters",
				 path, lineno, key, EVENT_MAX - 1);
			ret = -EINVAL;
			break;
		}
		if (map->event[m][0]) {
			snprintf(errmsg, errmsg_len, "%s:%d: metric '%s' given twice (first at line %d)",
				 path, lineno, key, map->line[m]);
			ret = -EINVAL;
			break;
		}
		memcpy(map->event[m], event, strlen(event) + 1);
		map->line[m] = lineno;
	}
	if (ret == 0 && ferror(f)) {
		snprintf(errmsg, errmsg_len, "cannot read %s: %s", path, strerror(EIO));
		ret = -EIO;
	}
	fclose(f);
	return ret;
}

/* ---- libpfm4 --------------------------------------------------------- */

/* Translate a libpfm4 error into -errno, once, at this boundary. */
static int pfm_to_errno(int pfm_err)
{
	switch (pfm_err) {
	case PFM_SUCCESS:
		return 0;
	case PFM_ERR_NOMEM:
		return -ENOMEM;
	case PFM_ERR_NOTSUPP:
		return -EOPNOTSUPP;
	case PFM_ERR_NOTFOUND:
		return -ENOENT;
	default:
		return -EINVAL;
	}
}

/*
 * Pick the core PMU libpfm4 detected (with LIBPFM_FORCE_PMU, the forced one is
 * the only active PMU). On Intel the architectural "ix86arch" PMU is active
 * next to the model's own; prefer the model. On hybrid parts the first core
 * PMU is taken (a hybrid-aware choice is future work).
 */
static void detect_pmu(struct counter_set *set)
{
	pfm_pmu_info_t chosen = { 0 };
	bool found = false;

	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t info = { .size = sizeof(info) };
		if (pfm_get_pmu_info((pfm_pmu_t)p, &info) != PFM_SUCCESS)
			continue;
		if (!info.is_present || info.type != PFM_PMU_TYPE_CORE)
			continue;
		bool architectural = strcmp(info.name, "ix86arch") == 0;
		if (!found || (strcmp(chosen.name, "ix86arch") == 0 && !architectural)) {
			chosen = info;
			found = true;
		}
	}

	if (found) {
		snprintf(set->pmu_name, sizeof(set->pmu_name), "%s", chosen.name);
		snprintf(set->pmu_desc, sizeof(set->pmu_desc), "%s", chosen.desc ? chosen.desc : "");
		set->pmu_num_cntrs = chosen.num_cntrs;
	} else {
		snprintf(set->pmu_name, sizeof(set->pmu_name), "none");
		snprintf(set->pmu_desc, sizeof(set->pmu_desc),
			 "no core PMU known to libpfm4 (software events only)");
		set->pmu_num_cntrs = 0;
	}
}

static int encode_one(const char *event, int plm, struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	pfm_perf_encode_arg_t arg = {
		.attr = attr,
		.size = sizeof(arg),
	};
	return pfm_get_os_event_encoding(event, plm, PFM_OS_PERF_EVENT_EXT, &arg);
}

/*
 * Encode ev->info.event. Hardware events count user space only (PFM_PLM3),
 * like the measured loop. Software events are re-encoded for user and kernel
 * (PFM_PLM0|PFM_PLM3): faults taken in kernel mode (copy_to_user) are faults
 * too, and the kernel records context switches and migrations in kernel
 * context, so with exclude_kernel they would always read 0. An explicit
 * modifier in the map (":u") still wins, as libpfm4 applies it over the default.
 */
static void encode_event(struct counter_set *set, struct counter_event *ev)
{
	struct counter_info *info = &ev->info;
	int ret = encode_one(info->event, PFM_PLM3, &ev->attr);
	if (ret == PFM_SUCCESS && ev->attr.type == PERF_TYPE_SOFTWARE)
		ret = encode_one(info->event, PFM_PLM0 | PFM_PLM3, &ev->attr);
	if (ret != PFM_SUCCESS) {
		info->status = COUNTER_UNSUPPORTED;
		const char *hint = "";
		if (set->forced && ret == PFM_ERR_NOTFOUND && strncmp(info->event, "perf::", 6) == 0 &&
		    !getenv("LIBPFM_ENCODE_INACTIVE"))
			hint = " (LIBPFM_FORCE_PMU deactivates libpfm4's perf:: PMU;"
			       " set LIBPFM_ENCODE_INACTIVE=1)";
		snprintf(info->reason, sizeof(info->reason), "not encodable for PMU %s: %s%s",
			 set->pmu_name, pfm_strerror(ret), hint);
		return;
	}

	ev->attr.size = sizeof(ev->attr);	/* libpfm4 leaves it 0 */
	if (ev->attr.type != PERF_TYPE_SOFTWARE)
		ev->attr.exclude_hv = 1;
	ev->encoded = true;
	info->encoded = true;
	info->type = ev->attr.type;
	info->config = ev->attr.config;
	info->hardware = ev->attr.type != PERF_TYPE_SOFTWARE;
}

/*
 * The PMU map's precise dTLB-miss event for sampling, encoded for user space
 * (where the benchmark's loads are): a map without one (AMD's equivalent is
 * IBS, a separate PMU, not offered here), a machine without a PMU, or an
 * event libpfm4 cannot encode leaves the reason instead.
 */
static void encode_sample_dtlb(struct counter_set *set, const struct event_map *model)
{
	struct counter_sample_event *se = &set->sample_dtlb;
	struct perf_event_attr attr;

	if (!model->sample_dtlb[0]) {
		set->sample_dtlb_err = -ENOENT;
		snprintf(set->sample_dtlb_reason, sizeof(set->sample_dtlb_reason),
			 strcmp(set->pmu_name, "none") == 0
				 ? "no PMU: precise dTLB-miss sampling needs hardware events"
				 : "no precise dTLB-miss event with data addresses in %s.events",
			 set->pmu_name);
		return;
	}
	int ret = encode_one(model->sample_dtlb, PFM_PLM3, &attr);
	if (ret != PFM_SUCCESS) {
		set->sample_dtlb_err = pfm_to_errno(ret);
		snprintf(set->sample_dtlb_reason, sizeof(set->sample_dtlb_reason), "%s not encodable for PMU %s: %s",
			 model->sample_dtlb, set->pmu_name, pfm_strerror(ret));
		return;
	}
	snprintf(se->event, sizeof(se->event), "%s", model->sample_dtlb);
	snprintf(se->source, sizeof(se->source), "%s", model->name);
	se->type = attr.type;
	se->config = attr.config;
	se->config1 = attr.config1;
	se->config2 = attr.config2;
	se->precise_ip = attr.precise_ip;
	set->sample_dtlb_err = 0;
}

int counter_set_sample_event(const struct counter_set *set, struct counter_sample_event *out, char *why,
			     size_t why_len)
{
	if (!set)
		return -EINVAL;
	if (set->sample_dtlb_err) {
		snprintf(why, why_len, "%s", set->sample_dtlb_reason);
		return set->sample_dtlb_err;
	}
	*out = set->sample_dtlb;
	return 0;
}

int counter_set_new(struct counter_set **out, const char *events_dir, const bool *want,
		    char *errmsg, size_t errmsg_len)
{
	char scratch[8];
	if (!errmsg) {
		errmsg = scratch;
		errmsg_len = sizeof(scratch);
	}
	if (errmsg_len)
		errmsg[0] = '\0';
	if (!out) {
		snprintf(errmsg, errmsg_len, "counter_set_new: no output pointer");
		return -EINVAL;
	}
	*out = NULL;
	if (!events_dir)
		events_dir = counters_default_events_dir();

	int ret = pfm_initialize();
	if (ret != PFM_SUCCESS) {
		snprintf(errmsg, errmsg_len, "libpfm4 initialisation failed: %s", pfm_strerror(ret));
		return pfm_to_errno(ret);
	}

	struct counter_set *set = calloc(1, sizeof(*set));
	struct event_map *generic = malloc(sizeof(*generic));
	struct event_map *model = malloc(sizeof(*model));
	int err = 0;
	if (!set || !generic || !model) {
		snprintf(errmsg, errmsg_len, "out of memory");
		err = -ENOMEM;
		goto out;
	}
	set->forced = getenv("LIBPFM_FORCE_PMU") != NULL;
	detect_pmu(set);

	err = event_map_load(generic, events_dir, "generic", true, errmsg, errmsg_len);
	if (err)
		goto out;
	if (strcmp(set->pmu_name, "none") != 0) {
		err = event_map_load(model, events_dir, set->pmu_name, false, errmsg, errmsg_len);
		if (err)
			goto out;
	} else {
		memset(model, 0, sizeof(*model));
	}

	encode_sample_dtlb(set, model);
	size_t n = 0;
	for (int m = 0; m < METRIC_COUNT; m++)
		n += !want || want[m];
	set->events = calloc(n ? n : 1, sizeof(*set->events));
	if (!set->events) {
		snprintf(errmsg, errmsg_len, "out of memory");
		err = -ENOMEM;
		goto out;
	}

	for (int m = 0; m < METRIC_COUNT; m++) {
		if (want && !want[m])
			continue;
		struct counter_event *ev = &set->events[set->n++];
		struct counter_info *info = &ev->info;
		ev->fd = -1;
		info->metric = (enum metric)m;
		info->hardware = !metric_descs[m].software;
		info->status = COUNTER_OK;
		snprintf(info->name, sizeof(info->name), "%s", metric_descs[m].display);

		const struct event_map *from = model->event[m][0] ? model
					     : generic->event[m][0] ? generic : NULL;
		if (!from) {
			info->status = COUNTER_UNSUPPORTED;
			if (strcmp(set->pmu_name, "none") == 0)
				snprintf(info->reason, sizeof(info->reason),
					 "no event for %s in generic.events", metric_descs[m].key);
			else
				snprintf(info->reason, sizeof(info->reason),
					 "no event for %s in %s.events or generic.events",
					 metric_descs[m].key, set->pmu_name);
			continue;
		}
		snprintf(info->source, sizeof(info->source), "%s", from->name);
		snprintf(info->event, sizeof(info->event), "%s", from->event[m]);
		encode_event(set, ev);
	}

out:
	free(generic);
	free(model);
	if (err) {
		counter_set_delete(set);
		return err;
	}
	*out = set;
	return 0;
}

void counter_set_delete(struct counter_set *set)
{
	if (!set)
		return;
	counter_set_close(set);
	free(set->events);
	free(set);
}

/* ---- perf_event_open ------------------------------------------------- */

/*
 * Whether the kernel exposes a core PMU at all. Without one (a VM whose
 * hypervisor hides the PMU) there is no "cpu" event source in sysfs and every
 * hardware event fails with ENOENT, whatever libpfm4 thinks the CPU is.
 */
static bool kernel_has_core_pmu(void)
{
	static const char *const names[] = { "cpu", "cpu_core", "cpu_atom" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[96];
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s", names[i]);
		if (access(path, F_OK) == 0)
			return true;
	}
	return false;
}

/* Record why opening ev failed with errno err (positive). */
static void classify_open_error(const struct counter_set *set, struct counter_event *ev, int err)
{
	static const enum counter_status status_of[] = {
		[PERF_OPEN_UNSUPPORTED] = COUNTER_UNSUPPORTED,
		[PERF_OPEN_DENIED] = COUNTER_DENIED,
		[PERF_OPEN_ERROR] = COUNTER_ERROR,
	};
	struct counter_info *info = &ev->info;
	/* Level 1 lets a user count the kernel side: the command tlbprof env's Problems section gives too. */
	enum perf_open_class class = perf_open_classify(err, 1, info->reason, sizeof(info->reason));

	info->status = status_of[class];
	/*
	 * Without a core PMU every hardware event fails, with ENOENT or EINVAL,
	 * whatever libpfm4 thinks the CPU is: say that rather than blame the
	 * event. (EINVAL with a PMU present is the kernel rejecting the
	 * encoding: a map bug, an error.)
	 */
	if ((class == PERF_OPEN_UNSUPPORTED || err == EINVAL) && info->hardware &&
	    (strcmp(set->pmu_name, "none") == 0 || !kernel_has_core_pmu())) {
		info->status = COUNTER_UNSUPPORTED;
		snprintf(info->reason, sizeof(info->reason), "no hardware PMU visible (hypervisor hides it?): %s",
			 strerror(err));
	}
}

/*
 * Software events the kernel records from kernel context (perf_sw_event_sched
 * takes the scheduler's own registers): with exclude_kernel they count 0.
 */
static bool sw_counts_only_in_kernel(uint64_t config)
{
	return config == PERF_COUNT_SW_CONTEXT_SWITCHES || config == PERF_COUNT_SW_CPU_MIGRATIONS;
}

/* Open ev into group_fd (-1: as a new leader) on the set's target. Returns the fd or -errno. */
static int open_event(const struct counter_set *set, struct counter_event *ev, int group_fd, bool exclude_kernel)
{
	struct perf_event_attr attr = ev->attr;
	/*
	 * Only a leader starts disabled (as in libperf): an enabled member of a
	 * disabled leader does not count, and the kernel then schedules the
	 * group as a unit, so member and leader times match. Members opened
	 * disabled and enabled through PERF_IOC_FLAG_GROUP were seen (Linux
	 * 6.18, software events) to report less running than enabled time,
	 * which would read as multiplexing.
	 */
	attr.disabled = group_fd == -1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (exclude_kernel)
		attr.exclude_kernel = 1;
	/*
	 * inherit: tasks the target creates after the open count into the same
	 * events; a read() of the event sums them (alive or exited), and
	 * ENABLE/DISABLE ioctls reach them too. It does not combine with
	 * PERF_FORMAT_GROUP reads, which is why every event is read on its own.
	 */
	attr.inherit = set->inherit;
	attr.enable_on_exec = set->enable_on_exec && group_fd == -1;
	int fd = perf_open(&attr, set->pid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	return fd;
}

/*
 * Open ev, preferably into the group *leader_fd leads (-1: ev leads a new
 * one). A member that cannot join (the group does not fit the PMU, or the
 * event needs its own constraints) is retried as a group of its own.
 * Unprivileged users at perf_event_paranoid >= 2 may not count kernel side;
 * software events whose user-side count is still meaningful fall back to
 * exclude_kernel, as perf stat does, and say so in the reason.
 * Returns true when ev is open.
 */
static bool open_in_group(const struct counter_set *set, struct counter_event *ev, int *leader_fd)
{
	bool user_only = false;
	int fd = open_event(set, ev, *leader_fd, false);
	if (fd < 0 && *leader_fd != -1) {
		int alone = open_event(set, ev, -1, false);
		if (alone >= 0) {
			ev->fd = alone;
			ev->leader = true;
			return true;
		}
	}
	if (fd < 0 && perf_open_classify(-fd, 0, NULL, 0) == PERF_OPEN_DENIED && !ev->info.hardware &&
	    !ev->attr.exclude_kernel && !sw_counts_only_in_kernel(ev->attr.config)) {
		int retry = open_event(set, ev, *leader_fd, true);
		if (retry >= 0) {
			fd = retry;
			user_only = true;
		}
	}
	if (fd < 0) {
		classify_open_error(set, ev, -fd);
		return false;
	}

	ev->fd = fd;
	ev->leader = *leader_fd == -1;
	if (ev->leader)
		*leader_fd = fd;
	if (user_only) {
		char paranoid[16];
		paranoid_level_text(paranoid_level(), paranoid, sizeof(paranoid));
		snprintf(ev->info.reason, sizeof(ev->info.reason),
			 "user space only: counting kernel side denied (perf_event_paranoid=%s)",
			 paranoid);
	}
	return true;
}

/*
 * Generic counters a hardware group may use. A group is scheduled all or
 * nothing: if it needs more counters than are free it never counts (or open
 * fails with EINVAL when it can never fit). libpfm4 reports the counters it
 * knows (per core, ignoring SMT sharing; a fake number when forced), and the
 * NMI watchdog may hold one, so stay below min(reported, 4) - 1: every x86
 * core of the last decade has at least 4 generic counters per thread.
 */
static size_t hw_group_capacity(const struct counter_set *set)
{
	int n = set->pmu_num_cntrs;
	if (n <= 0 || n > 4)
		n = 4;
	return n > 1 ? (size_t)(n - 1) : 1;
}

int counter_set_open(struct counter_set *set)
{
	return counter_set_open_task(set, 0, false, false);
}

int counter_set_open_task(struct counter_set *set, pid_t pid, bool inherit, bool enable_on_exec)
{
	if (!set)
		return 0;
	counter_set_close(set);
	set->pid = pid;
	set->inherit = inherit;
	set->enable_on_exec = enable_on_exec;

	int sw_leader = -1, hw_leader = -1;
	size_t hw_members = 0, cap = hw_group_capacity(set);
	int opened = 0;

	for (size_t i = 0; i < set->n; i++) {
		struct counter_event *ev = &set->events[i];
		if (!ev->encoded)
			continue;
		ev->info.status = COUNTER_OK;
		ev->info.reason[0] = '\0';
		ev->base_enabled_ns = ev->base_running_ns = 0;

		bool ok;
		if (!ev->info.hardware) {
			/* Software events never compete for counters: one group. */
			ok = open_in_group(set, ev, &sw_leader);
		} else {
			/* Hardware events: groups the PMU can always schedule. */
			if (hw_members >= cap) {
				hw_leader = -1;
				hw_members = 0;
			}
			bool new_group = hw_leader == -1;
			ok = open_in_group(set, ev, &hw_leader);
			if (ok && new_group)
				hw_members = 1;
			else if (ok && !ev->leader)
				hw_members++;	/* joined; a member that had to go alone does not count */
		}
		opened += ok;
		ev->open_status = ev->info.status;
		memcpy(ev->open_reason, ev->info.reason, sizeof(ev->open_reason));
	}
	return opened;
}

/* ioctl every group leader; PERF_IOC_FLAG_GROUP applies it to the members too. */
static int ioctl_leaders(struct counter_set *set, unsigned long request)
{
	int ret = 0;
	for (size_t i = 0; i < set->n; i++) {
		struct counter_event *ev = &set->events[i];
		if (ev->fd < 0 || !ev->leader)
			continue;
		if (ioctl(ev->fd, request, PERF_IOC_FLAG_GROUP) < 0 && ret == 0)
			ret = -errno;
	}
	return ret;
}

static int read_raw(int fd, uint64_t v[3])
{
	ssize_t n = read(fd, v, 3 * sizeof(uint64_t));
	if (n < 0)
		return -errno;
	if (n != (ssize_t)(3 * sizeof(uint64_t)))
		return -EIO;
	return 0;
}

int counter_set_reset(struct counter_set *set)
{
	if (!set)
		return -EINVAL;
	int ret = ioctl_leaders(set, PERF_EVENT_IOC_RESET);
	/*
	 * PERF_EVENT_IOC_RESET zeroes the count but not time_enabled and
	 * time_running, which keep growing over the event's life. Remember them
	 * so that every read reports the times since this reset and a phase is
	 * scaled by its own multiplexing ratio, not by the whole run's.
	 */
	for (size_t i = 0; i < set->n; i++) {
		struct counter_event *ev = &set->events[i];
		uint64_t v[3];
		if (ev->fd < 0)
			continue;
		int err = read_raw(ev->fd, v);
		if (err) {
			if (ret == 0)
				ret = err;
			continue;
		}
		ev->base_enabled_ns = v[1];
		ev->base_running_ns = v[2];
	}
	return ret;
}

int counter_set_enable(struct counter_set *set)
{
	if (!set)
		return -EINVAL;
	return ioctl_leaders(set, PERF_EVENT_IOC_ENABLE);
}

int counter_set_disable(struct counter_set *set)
{
	if (!set)
		return -EINVAL;
	return ioctl_leaders(set, PERF_EVENT_IOC_DISABLE);
}

int counter_set_read(struct counter_set *set, struct counter_reading *out)
{
	if (!set || !out)
		return -EINVAL;
	int ret = 0;
	for (size_t i = 0; i < set->n; i++) {
		struct counter_event *ev = &set->events[i];
		struct counter_reading *r = &out[i];
		memset(r, 0, sizeof(*r));
		if (ev->fd < 0)
			continue;

		/* Without PERF_FORMAT_GROUP: { value, time_enabled, time_running }. */
		uint64_t v[3];
		int err = read_raw(ev->fd, v);
		if (err) {
			if (ret == 0)
				ret = err;
			continue;
		}
		r->value = v[0];
		r->enabled_ns = v[1] - ev->base_enabled_ns;
		r->running_ns = v[2] - ev->base_running_ns;

		bool multiplexed = false;
		if (ev->attr.type == PERF_TYPE_SOFTWARE) {
			/*
			 * The software PMU never runs out of counters, so it never
			 * multiplexes. Its times can still differ slightly: task-clock
			 * reports a few microseconds less running than enabled time per
			 * enable/disable cycle. That skew is not a reason to scale.
			 */
			r->scaled = (double)r->value;
		} else {
			r->scaled = counter_scale(r->value, r->enabled_ns, r->running_ns, &multiplexed);
		}
		struct counter_info *info = &ev->info;
		info->status = ev->open_status;
		memcpy(info->reason, ev->open_reason, sizeof(info->reason));
		if (multiplexed) {
			info->status = COUNTER_MULTIPLEXED;
			snprintf(info->reason, sizeof(info->reason),
				 "counted %.1f%% of the enabled time; value scaled by enabled/running",
				 100.0 * (double)r->running_ns / (double)r->enabled_ns);
		} else if (ev->attr.type != PERF_TYPE_SOFTWARE && r->enabled_ns > 0 && r->running_ns == 0) {
			/*
			 * perf stat's "<not counted>": a hardware event that never got a
			 * counter. Not a zero. (A software event always runs; a user-only
			 * one may just have seen no user time, e.g. task-clock over a
			 * touch that spent it all in the kernel's fault handler.)
			 */
			info->status = COUNTER_ERROR;
			snprintf(info->reason, sizeof(info->reason),
				 "not counted: enabled %llu ns but never on a counter"
				 " (PMU busy: NMI watchdog or another perf user?)",
				 (unsigned long long)r->enabled_ns);
		}
	}
	return ret;
}

void counter_set_close(struct counter_set *set)
{
	if (!set)
		return;
	/*
	 * Close members before their leaders: closing a leader first would turn
	 * its members into singleton events for a moment. Callers read before
	 * closing, since a closed event's count is gone.
	 */
	for (size_t i = set->n; i-- > 0;) {
		struct counter_event *ev = &set->events[i];
		if (ev->fd >= 0 && !ev->leader) {
			close(ev->fd);
			ev->fd = -1;
		}
	}
	for (size_t i = set->n; i-- > 0;) {
		struct counter_event *ev = &set->events[i];
		if (ev->fd >= 0) {
			close(ev->fd);
			ev->fd = -1;
		}
		ev->leader = false;
	}
}
