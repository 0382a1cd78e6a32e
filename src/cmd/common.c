/* SPDX-License-Identifier: MIT */
/* What several commands do alike: set up a measurement, find the event maps and a program, re-analyse a report. */
#include "cmd/common.h"
#include "cmd/cli.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/command.h"
#include "judge/analysis.h"
#include "measure/region.h"
#include "report/report.h"
#include "version.h"

const char *command_events_dir(const char *events_dir)
{
	/* Never the source tree for an installed binary: counters_default_events_dir() says why. */
	return events_dir ? events_dir : counters_default_events_dir();
}

int command_simulate_pmu(void)
{
	const char *sim = getenv("TLBPROF_SIMULATE_PMU");
	char msg[512], line[640];

	if (!sim || !*sim || counters_simulate(sim, msg, sizeof(msg)) == 0)
		return EXIT_OK;
	snprintf(line, sizeof(line), "TLBPROF_SIMULATE_PMU '%s': %s", sim, msg);
	report_error(line);
	return EXIT_USAGE;
}

int command_measuring_setup(struct measuring *m, const char *events_dir, const struct cli_events *events, int cpu)
{
	char msg[512];
	bool want[METRIC_COUNT];

	memset(m, 0, sizeof(*m));
	counters_default_want(want);
	/* The core first: it is a clue for which PMU's events to count with (pmu/pmu_choose.h). */
	environment_collect(&m->env);
	counters_set_core(m->env.core_name, m->env.core.masked, m->env.hypervisor);
	int sim = command_simulate_pmu();
	if (sim != EXIT_OK)
		return sim;
	if (counter_set_new(&m->counters, command_events_dir(events_dir), want, msg, sizeof(msg)) != 0) {
		if (events_dir) {
			char line[640];
			snprintf(line, sizeof(line), "--events-dir '%s': %s", events_dir, msg);
			report_error(line);
			return EXIT_USAGE;
		}
		/* Measuring still works without counters; the report says none were available. */
		fprintf(stderr, "tlbprof: warning: no counters: %s\n", msg);
		m->counters = NULL;
	}
	if (m->counters)
		snprintf(m->env.pmu_basis, sizeof(m->env.pmu_basis), "%s", counter_set_pmu_basis(m->counters));
	for (size_t i = 0; m->counters && events && i < events->n; i++) {
		char why[320], line[400];
		int rc = counter_set_add_user(m->counters, events->spec[i], why, sizeof(why));
		if (rc == -ENOMEM) {
			report_error("out of memory");
			return EXIT_UNAVAILABLE;
		}
		if (rc) {
			snprintf(line, sizeof(line), "--event %s", why);
			report_error(line);
			counter_set_delete(m->counters);
			m->counters = NULL;
			return EXIT_USAGE;
		}
	}
	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	timing_calibrate(&m->clock);
	/* What a first write to a populated page costs here (shadow_paging), before anything is measured. */
	(void)region_first_access_probe(REGION_FIRST_ACCESS_PROBE_BYTES, &m->env.first_access);
	/* Again with the measured folding of add reg, imm: evidence where the model number is masked. */
	environment_identify_core(&m->env, m->clock.add_imm_per_cycle);
	return 0;
}

void command_host_before(struct measuring *m)
{
	host_read_snapshot("", &m->env.host.before);
	host_read_damon("", &m->env.host.damon_before);
}

void command_host_after(struct measuring *m)
{
	/* The clock first: the core is still busy from the last phase, as it was during the run. */
	timing_recheck(&m->clock);
	host_read_snapshot("", &m->env.host.after);
	host_read_damon("", &m->env.host.damon_after);
	m->env.host.recorded = true;
}

void command_measuring_free(struct measuring *m)
{
	counter_set_delete(m->counters);
	m->counters = NULL;
}

int command_analyse_doc(const struct report_doc *doc, struct analysis *a)
{
	struct analysis_build build = {
		.binary = doc->build_binary,
		.opt_level = doc->build_opt_level,
		.opt_levels = doc->build_opt_levels,
		.source = doc->build_opt_source,
		.defaulted = doc->build_defaulted,
		.unreadable = doc->build_unreadable,
	};

	if (analysis_run(doc->results.phases, doc->results.n, &doc->env, &doc->clock, a) != 0)
		return -ENOMEM;
	if ((doc->has_build && analysis_check_build(a, doc->results.phases, doc->results.n, &build) != 0) ||
	    (doc->has_markers && analysis_check_markers(a, doc->results.phases, doc->results.n, doc->marker_messages,
							doc->marker_refused, doc->marker_first_refusal,
							doc->has_end ? &doc->end : NULL) != 0) ||
	    (doc->watch && analysis_check_unmarked(a, doc->results.phases, doc->results.n, &doc->env, doc->watch) != 0)) {
		analysis_free(a);
		return -ENOMEM;
	}
	return 0;
}

bool command_find_program(const char *name, char *out, size_t len)
{
	struct stat st;

	if (strchr(name, '/')) {
		size_t n = strlen(name);
		if (len) {
			n = n < len ? n : len - 1;
			memcpy(out, name, n);
			out[n] = '\0';
		}
		return stat(name, &st) == 0 && S_ISREG(st.st_mode) && access(name, X_OK) == 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		/* An empty PATH entry is the current directory, as execvp reads it. */
		if ((size_t)snprintf(out, len, "%.*s/%s", (int)(n ? n : 1), n ? path : ".", name) < len &&
		    stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0)
			return true;
		path += n + (colon != NULL);
	}
	if (len)
		out[0] = '\0';
	return false;
}
