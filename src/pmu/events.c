/* SPDX-License-Identifier: MIT */
/* Counters, resolution side: metrics through the events/ map files to events, encoded with libpfm4 into a set. */

/*
 * This is the only file that talks to libpfm4 (counters.c opens what it
 * encodes with perf_event_open).
 *
 * libpfm4 keeps its state in process globals: pfm_initialize() reads
 * LIBPFM_FORCE_PMU once, detects the PMUs and is idempotent afterwards.
 * counter_set_new() calls it every time (cheap) and nothing here calls
 * pfm_terminate(), since another set may still be using the library; its
 * tables are freed at exit. Changing LIBPFM_FORCE_PMU after the first
 * counter_set_new() therefore has no effect in this process.
 */

#include "pmu/counters.h"

#include "pmu/counter_set.h"
#include "pmu/pmu_choose.h"
#include "pmu/user_events.h"
#include "pmu/sample.h"

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
	if (m == METRIC_USER)
		return "user";
	if ((int)m < 0 || m >= METRIC_COUNT)
		return NULL;
	return metric_descs[m].key;
}

int metric_from_name(const char *name)
{
	if (!name)
		return -1;
	if (strcmp(name, "user") == 0)
		return METRIC_USER;
	for (int m = 0; m < METRIC_COUNT; m++)
		if (strcmp(metric_descs[m].key, name) == 0)
			return m;
	return -1;
}

/* Whether path lies in dir or below it (both canonical, as realpath() gives them); directly in it with `directly`. */
static bool path_is_below(const char *path, const char *dir, bool directly)
{
	size_t n = strlen(dir);

	return n > 1 && strncmp(path, dir, n) == 0 && path[n] == '/' && (!directly || !strchr(path + n + 1, '/'));
}

int counters_events_dir_locate(const struct events_dir_layout *l, const char *exe, char *buf, size_t size)
{
	const char *slash = exe ? strrchr(exe, '/') : NULL;
	size_t bin_len = strlen(l->bindir_rel), dir_len = slash ? (size_t)(slash - exe) : 0;
	bool in_build = exe && l->build_root && l->build_root[0];
	int len;

	if (size == 0)
		return -EINVAL;
	/* The binary meson built, at the top of its build directory: the tests run it there. */
	if (in_build && path_is_below(exe, l->build_root, true)) {
		len = snprintf(buf, size, "%s", l->source_dir);
		return len >= 0 && (size_t)len < size ? 0 : -ENAMETOOLONG;
	}
	/*
	 * Installed: PREFIX/BINDIR/tlbprof reads PREFIX/DATADIR/tlbprof/events, PREFIX taken from where the
	 * binary is, so a DESTDIR or relocated copy reads its own datadir, also one staged below the build
	 * directory (DESTDIR=build/stage). A binary outside a BINDIR (copied away by hand) and a layout with
	 * absolute directories read the configured path.
	 */
	if (slash && bin_len && l->bindir_rel[0] != '/' && l->events_rel[0] != '/' && dir_len > bin_len &&
	    exe[dir_len - bin_len - 1] == '/' && strncmp(exe + dir_len - bin_len, l->bindir_rel, bin_len) == 0) {
		len = snprintf(buf, size, "%.*s%s", (int)(dir_len - bin_len), exe, l->events_rel);
		return len >= 0 && (size_t)len < size ? 0 : -ENAMETOOLONG;
	}
	/* The unit tests and tools meson built into folders of the build directory: the source tree's maps too. */
	len = snprintf(buf, size, "%s", in_build && path_is_below(exe, l->build_root, false) ? l->source_dir
											  : l->installed_dir);
	return len >= 0 && (size_t)len < size ? 0 : -ENAMETOOLONG;
}

const char *counters_default_events_dir(void)
{
	/* A fact of the process (where its binary is), found once; the string lives until exit. */
	static char dir[4096];
#ifdef TLBPROF_EVENTS_DIR
	static const struct events_dir_layout layout = {
		.build_root = TLBPROF_BUILD_ROOT, .source_dir = TLBPROF_SOURCE_EVENTS_DIR,
		.bindir_rel = TLBPROF_BINDIR_REL, .events_rel = TLBPROF_EVENTS_DIR_REL,
		.installed_dir = TLBPROF_EVENTS_DIR,
	};
#else
	static const struct events_dir_layout layout = {
		.build_root = "", .source_dir = "events", .bindir_rel = "bin", .events_rel = "share/tlbprof/events",
		.installed_dir = "events",
	};
#endif

	if (!dir[0]) {
		char *exe = realpath("/proc/self/exe", NULL);
		char *root = layout.build_root[0] ? realpath(layout.build_root, NULL) : NULL;
		struct events_dir_layout l = layout;

		/* Canonical on both sides: the build directory may have been named through a symlink. */
		l.build_root = root;
		if (counters_events_dir_locate(&l, exe, dir, sizeof(dir)) != 0)
			snprintf(dir, sizeof(dir), "%s", layout.installed_dir);
		free(exe);
		free(root);
	}
	return dir;
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
/* The identified core (counters_set_core()), a clue for pmu_choose(); NULL until told. */
static char core_hint_buf[64], hypervisor_buf[24];
static const char *core_hint, *hypervisor_hint;
static bool core_hint_masked;

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
	/* libpfm4's is one clue: the force, the kernel's name, the identified core weigh too (pmu_choose.h). */
	char sysfs[64] = "";
	const struct pmu_clues clues = {
		.forced = set->forced ? getenv("LIBPFM_FORCE_PMU") : NULL,
		.sysfs = pmu_sysfs_name("/sys", sysfs, sizeof(sysfs)) ? sysfs : NULL,
		.core = core_hint,
		.core_masked = core_hint_masked,
		.libpfm = set->pmu_name,
	};
	struct pmu_choice choice;
	pmu_choose(&clues, &choice);
	snprintf(set->pmu_basis, sizeof(set->pmu_basis), "%s", choice.basis);
	if (strcmp(choice.map, set->pmu_name) == 0)
		return;
	/* The map's events are written for a PMU libpfm4 did not make active: have it encode that one inactive. */
	if (choice.encode_inactive && !getenv("LIBPFM_ENCODE_INACTIVE")) {
		pfm_terminate();
		setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
		pfm_initialize();
	}
	snprintf(set->pmu_desc, sizeof(set->pmu_desc), "%s (libpfm4: %s)", choice.map, set->pmu_name);
	snprintf(set->pmu_name, sizeof(set->pmu_name), "%s", choice.map);
}

const char *counter_set_pmu_basis(const struct counter_set *set)
{
	return set->pmu_basis;
}

void counters_set_core(const char *core, bool masked, const char *hypervisor)
{
	snprintf(core_hint_buf, sizeof(core_hint_buf), "%s", core ? core : "");
	core_hint = core_hint_buf;
	core_hint_masked = masked;
	snprintf(hypervisor_buf, sizeof(hypervisor_buf), "%s", hypervisor ? hypervisor : "");
	hypervisor_hint = hypervisor ? hypervisor_buf : NULL;
}

const char *counters_hypervisor(void)
{
	return hypervisor_hint;
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
 * Where the map has no precise event: AMD IBS op sampling, a PMU of its own
 * that /sys offers where the CPU and kernel have it. 0, or -errno with the
 * reason (the map's absence and IBS's) in the set.
 */
static int sample_dtlb_from_ibs(struct counter_set *set)
{
	struct counter_sample_event *se = &set->sample_dtlb;
	struct sample_ibs_op ibs;
	char why[200];
	int err = sample_ibs_op_event(NULL, NULL, &ibs, why, sizeof(why));

	if (err) {
		snprintf(set->sample_dtlb_reason, sizeof(set->sample_dtlb_reason),
			 strcmp(set->pmu_name, "none") == 0
				 ? "no PMU: precise dTLB-miss sampling needs hardware events; %s"
				 : "no precise dTLB-miss event with data addresses in %s.events; %s",
			 strcmp(set->pmu_name, "none") == 0 ? why : set->pmu_name, why);
		return err;
	}
	*se = (struct counter_sample_event){
		.type = ibs.type, .config = ibs.config, .config2 = ibs.config2, .ibs_op = true,
		.exclude_kernel = ibs.swfilt, .exclude_hv = ibs.swfilt, .no_data_addr = !ibs.data_addr,
	};
	snprintf(se->event, sizeof(se->event), "ibs_op/%s%s/", ibs.cnt_ctl ? "cnt_ctl=1" : "",
		 ibs.swfilt ? (ibs.cnt_ctl ? ",swfilt=1" : "swfilt=1") : "");
	snprintf(se->source, sizeof(se->source), "sysfs");
	snprintf(se->note, sizeof(se->note), "%s", ibs.note);
	return 0;
}

/*
 * The PMU map's precise dTLB-miss event for sampling, encoded for user space
 * (where the benchmark's loads are; libpfm4 sets exclude_kernel for PFM_PLM3,
 * and the event keeps it), or IBS op sampling where the map has none: a
 * machine without either, or an event libpfm4 cannot encode, leaves the
 * reason instead.
 */
static void encode_sample_dtlb(struct counter_set *set, const struct event_map *model)
{
	struct counter_sample_event *se = &set->sample_dtlb;
	struct perf_event_attr attr;

	if (!model->sample_dtlb[0]) {
		set->sample_dtlb_err = sample_dtlb_from_ibs(set);
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
	se->exclude_kernel = attr.exclude_kernel;
	se->exclude_hv = attr.exclude_hv;
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

int counter_set_clone(const struct counter_set *set, struct counter_set **out)
{
	struct counter_set *c = malloc(sizeof(*c));

	*out = NULL;
	if (!c)
		return -ENOMEM;
	*c = *set;
	c->events = calloc(set->n ? set->n : 1, sizeof(*c->events));
	if (!c->events) {
		free(c);
		return -ENOMEM;
	}
	memcpy(c->events, set->events, set->n * sizeof(*c->events));
	c->track_threads = false;	/* a clone counts one thread: it has no exits of its own to report */
	c->threads = NULL;
	/* Closed, whatever the original is: the copy opens its own fds on its own task. */
	for (size_t i = 0; i < c->n; i++)
		c->events[i].fd = -1;
	c->pid = 0;
	*out = c;
	return 0;
}

int counter_set_add_user(struct counter_set *set, const char *spec, char *why, size_t why_len)
{
	uint64_t config;
	int raw = user_event_parse_raw(spec, &config, why, why_len);

	if (raw < 0)
		return raw;
	/*
	 * A name the set already counts (task-clock, or one -e given twice) is
	 * counted once: two counters of one name would be two series of one name
	 * to every reader (promtool rejects them). Another name for the same
	 * encoding (cpu/event=0x76/ is Zen's cycles) is the user's, and stays.
	 */
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->events[i].info.name, spec) == 0)
			return 0;
	struct counter_event *grown = realloc(set->events, (set->n + 1) * sizeof(*set->events));
	if (!grown)
		return -ENOMEM;
	set->events = grown;
	struct counter_event *ev = &set->events[set->n];
	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
	struct counter_info *info = &ev->info;
	info->metric = METRIC_USER;
	info->hardware = true;
	info->status = COUNTER_OK;
	snprintf(info->name, sizeof(info->name), "%s", spec);
	snprintf(info->event, sizeof(info->event), "%s", spec);
	snprintf(info->source, sizeof(info->source), "user");
	if (raw) {
		/* perf's raw form: the config as given, user space only like the measured loop. */
		ev->attr = (struct perf_event_attr){ .size = sizeof(ev->attr), .type = PERF_TYPE_RAW, .config = config,
						     .exclude_kernel = 1, .exclude_hv = 1 };
		ev->encoded = info->encoded = true;
		info->type = PERF_TYPE_RAW;
		info->config = config;
		set->n++;
		return 0;
	}
	encode_event(set, ev);
	if (!ev->encoded && strcmp(set->pmu_name, "none") != 0 && strstr(info->reason, pfm_strerror(PFM_ERR_NOTFOUND))) {
		snprintf(why, why_len, "'%s': no such event for PMU %s (tlbprof events --pmu %s lists the map's; "
			 "libpfm4's showevtinfo all of them)", spec, set->pmu_name, set->pmu_name);
		return -EINVAL;
	}
	set->n++;
	return 0;
}
