/* SPDX-License-Identifier: MIT */
/* tlbprof events: how every metric resolves to an event and an encoding, on this CPU or a forced PMU. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/command.h"
#include "cmd/options.h"
#include "cmd/common.h"
#include "machine/environment.h"
#include "pmu/counters.h"
#include "report/report.h"


static const struct option_spec events_specs[] = {
	{ .name = "pmu", .value = "NAME",
	  .help = "encode for this PMU instead of this machine's (a map name\n"
		  "in the events directory: skx, spr, amd64_fam19h_zen4, ...);\n"
		  "nothing is opened then",
	  .def_help = "this machine's PMU", .set = option_set_string, .offset = offsetof(struct events_options, pmu),
	  .complete = OPTION_COMPLETE_WORD },
	CLI_OPTION_JSON(struct events_options, out, "write the table as JSON (tlbprof.events/1) to FILE, or\nstdout with -"),
	CLI_OPTION_EVENTS_DIR(struct events_options, events_dir),
	CLI_OPTION_QUIET(struct events_options, out, "no table on stdout"),
	CLI_OPTION_HELP,
	{ 0 },
};

static void events_usage(FILE *f)
{
	fputs("Usage: tlbprof events [OPTIONS]\n"
	      "Show how every tlbprof metric resolves on this CPU (or the PMU of --pmu): the\n"
	      "event, the libpfm4 event string, the map file it came from, and its\n"
	      "perf_event type and config.\n"
	      "\n"
	      "Options:\n",
	      f);
	option_print_table(f, events_specs);
	fputs("\n"
	      "Exit status: 0 success, 2 usage error (an unknown --pmu lists the known ones),\n"
	      "4 output could not be written. See tlbprof-events(1).\n",
	      f);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Whether dir holds NAME.events (a map for PMU name, never "generic"); when
 * not, known gets the map names there, sorted and comma-separated.
 */
static bool pmu_map_exists(const char *dir, const char *name, char *known, size_t known_len)
{
	char names[64][64];
	char *sorted[64];
	size_t n = 0;
	bool found = false;
	DIR *d = opendir(dir);
	struct dirent *de;

	known[0] = '\0';
	while (d && (de = readdir(d)) != NULL && n < 64) {
		size_t l = strlen(de->d_name);
		if (l <= 7 || l - 7 >= sizeof(names[0]) || strcmp(de->d_name + l - 7, ".events") != 0)
			continue;
		snprintf(names[n], sizeof(names[n]), "%.*s", (int)(l - 7), de->d_name);
		if (strcmp(names[n], "generic") == 0)
			continue;
		found |= strcmp(names[n], name) == 0;
		sorted[n] = names[n];
		n++;
	}
	if (d)
		closedir(d);
	qsort(sorted, n, sizeof(sorted[0]), cmp_str);
	for (size_t i = 0; i < n; i++)
		snprintf(known + strlen(known), known_len - strlen(known), "%s%s", i ? ", " : "", sorted[i]);
	return found;
}

static enum option_result events_parse(int argc, char **argv, void *options, char *msg, size_t len)
{
	struct events_options *o = options;
	struct option_parser p = {
		.command = "events",
		.tables = { { events_specs, o } },
		.usage = events_usage,
		.measuring_has = command_measure_has_option,
	};
	enum option_result r = option_parse(&p, argc, argv, msg, len);

	if (r != OPTION_OK)
		return r;
	if (p.n_operands > 0)
		return option_error(msg, len, "events: unexpected argument '%s' (see tlbprof events --help)",
				    p.operands[0]);
	/* Checked after the options: --events-dir may come after --pmu. */
	if (o->pmu) {
		const char *dir = command_events_dir(o->events_dir);
		char known[1024];
		if (!dir)
			dir = counters_default_events_dir();
		bool found = pmu_map_exists(dir, o->pmu, known, sizeof(known));
		/* generic.events is there, but it is what any PMU without a map falls back to: there is no PMU to force. */
		if (strcmp(o->pmu, "generic") == 0)
			return option_error(msg, len, "--pmu 'generic': generic is the fallback map, not a PMU "
					    "(a PMU without a map of its own uses it); known PMUs: %s",
					    known[0] ? known : "none");
		if (!found)
			return option_error(msg, len, "--pmu '%s': no map %s/%s.events (known: %s)", o->pmu, dir, o->pmu,
					    known[0] ? known : "none");
	}
	return cli_check_json_output(&o->out, msg, len);
}

static int events_run(const void *options, const struct command_context *ctx)
{
	const struct events_options *o = options;
	struct counter_set *counters = NULL;
	const char *dir = command_events_dir(o->events_dir);
	struct environment env;
	char msg[768], err[512];

	/*
	 * The core and the hypervisor, as env and run see them: a clue for the PMU
	 * (pmu/pmu_choose.h), and what a hardware event that fails to open is
	 * blamed on (a KVM guest, or bare metal), not a guess.
	 */
	environment_collect(&env);
	counters_set_core(env.core_name, env.core.masked, env.hypervisor);
	int sim = command_simulate_pmu();
	if (sim != EXIT_OK)
		return sim;
	/* Before the first counter_set_new(): libpfm4 reads its environment once. */
	if (o->pmu && counters_force_pmu(o->pmu) != 0) {
		report_error("out of memory");
		return EXIT_UNAVAILABLE;
	}
	if (counter_set_new(&counters, dir, NULL, err, sizeof(err)) != 0) {
		if (o->events_dir)
			snprintf(msg, sizeof(msg), "--events-dir '%s': %s", o->events_dir, err);
		else if (o->pmu)
			snprintf(msg, sizeof(msg), "--pmu '%s': %s", o->pmu, err);
		else
			snprintf(msg, sizeof(msg), "%s", err);
		report_error(msg);
		return o->events_dir ? EXIT_USAGE : EXIT_UNAVAILABLE;
	}
	/* A map whose name libpfm4 does not know as a PMU: libpfm4 then finds no core PMU at all. */
	if (o->pmu && strcmp(counter_set_pmu_name(counters), o->pmu) != 0) {
		snprintf(msg, sizeof(msg), "--pmu '%s': libpfm4 knows no PMU of that name (it found '%s')", o->pmu,
			 counter_set_pmu_name(counters));
		report_error(msg);
		counter_set_delete(counters);
		return EXIT_USAGE;
	}
	/* On this machine, open once (disabled, nothing counted) so the status says what opens here. */
	if (!o->pmu) {
		counter_set_open(counters);
		counter_set_close(counters);
	}
	struct report_events_input in = {
		.counters = counters,
		.events_dir = dir ? dir : counters_default_events_dir(),
		.forced = o->pmu != NULL,
		.argc = ctx->argc,
		.argv = ctx->argv,
	};
	int status = report_events_emit(&in, &o->out) == 0 ? EXIT_OK : EXIT_OUTPUT;
	counter_set_delete(counters);
	return status;
}

const struct command command_events = {
	.name = "events",
	.summary = "the metric-to-event table for this CPU or --pmu NAME",
	.specs = events_specs,
	.options_size = sizeof(struct events_options),
	.usage = events_usage,
	.parse = events_parse,
	.run = events_run,
};
