/* SPDX-License-Identifier: MIT */
/* What the commands share: where the metric-to-event map files are found. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "judge/analysis.h"
#include "cmd/commands.h"
#include "pmu/counters.h"
#include "report/report.h"
#include "version.h"

const char *tlbprof_events_dir(const struct tlbprof_config *cfg)
{
	if (cfg->events_dir)
		return cfg->events_dir;
	if (access(counters_default_events_dir(), R_OK | X_OK) != 0)
		return TLBPROF_SOURCE_EVENTS_DIR;
	return NULL;
}

int tlbprof_analyse_doc(const struct report_doc *doc, struct analysis *a)
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
							doc->marker_refused, doc->marker_first_refusal) != 0)) {
		analysis_free(a);
		return -ENOMEM;
	}
	return 0;
}

bool tlbprof_find_command(const char *name, char *out, size_t len)
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
