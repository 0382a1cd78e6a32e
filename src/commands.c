/* SPDX-License-Identifier: MIT */
/* What the commands share: where the metric-to-event map files are found. */
#include <unistd.h>

#include "commands.h"
#include "counters.h"
#include "version.h"

const char *tlbprof_events_dir(const struct tlbprof_config *cfg)
{
	if (cfg->events_dir)
		return cfg->events_dir;
	if (access(counters_default_events_dir(), R_OK | X_OK) != 0)
		return TLBPROF_SOURCE_EVENTS_DIR;
	return NULL;
}
