/* SPDX-License-Identifier: MIT */
/* Checks only tlbprof run makes, on input only it has: how the benchmark was built, and the marker lines it sent. */
#include <stdio.h>
#include <string.h>

#include "judge/analysis_internal.h"

void checks_build_optimised(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct analysis_build *build = in->build;
	const char *level = build->opt_level ? build->opt_level : "";
	const char *levels = build->opt_levels ? build->opt_levels : "";
	const char *source = build->source ? build->source : "none";
	struct analysis_check *c;

	/* Where the level was read, in words. */
	if (strcmp(source, "gcc-command-line") == 0)
		source = ".GCC.command.line section";
	else if (strcmp(source, "dwarf-producer") == 0)
		source = "DWARF producer strings";

	if (build->unreadable && *build->unreadable)
		c = checks_add(a, def, CHECK_SKIP, "the executable was not read as ELF (%s): no recorded build "
			       "to judge", build->unreadable);
	else if (!*level)
		c = checks_add(a, def, CHECK_SKIP,
			       "%s records no optimisation level (clang records none by default: build with "
			       "-frecord-command-line, or gcc -g / -frecord-gcc-switches)", build->binary);
	else if (strcmp(level, "-O0") == 0)
		c = checks_add(a, def, CHECK_WARN,
			       "%s was compiled -O0%s (read from its %s): unoptimised code spills and reloads around "
			       "every access, so the phases time the compiler's bookkeeping as well as the memory "
			       "system; build the benchmark with -O2", build->binary,
			       build->defaulted ? " (no -O given: the compiler's default)" : "", source);
	else if (strcmp(level, "mixed") == 0 && strstr(levels, "-O0"))
		c = checks_add(a, def, CHECK_WARN,
			       "%s mixes optimisation levels (%s, read from its %s): the parts built -O0 spill and "
			       "reload around every access; check that the timed loop is not among them", build->binary,
			       levels, source);
	else
		c = checks_add(a, def, CHECK_PASS, "%s was compiled %s (read from its %s)", build->binary,
			       strcmp(level, "mixed") == 0 ? levels : level, source);
	checks_evidence(c, "defaulted", build->defaulted);
	if (!(build->unreadable && *build->unreadable))
		checks_evidence(c, "level_recorded", *level != '\0');
}

void checks_marker_protocol(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct analysis_markers *m = in->markers;
	struct analysis_check *c;

	if (!m->messages)
		c = checks_add(a, def, CHECK_SKIP, "the command sent no marker or control line");
	else if (m->refused)
		c = checks_add(a, def, CHECK_WARN,
			       "tlbprof refused %u of the command's %u marker or control lines (first: %s): the phases "
			       "they marked are missing or incomplete", m->refused, m->messages,
			       m->first && *m->first ? m->first : "?");
	else
		c = checks_add(a, def, CHECK_PASS, "all %u marker or control lines were accepted", m->messages);
	checks_evidence(c, "messages", m->messages);
	checks_evidence(c, "refused", m->refused);
}

/*
 * A benchmark that crashed, aborted or exited non-zero: its exit status reached the shell, but the report's phases
 * and every CI format said ok (JUnit without a failure, no metric of it): a review of the edges found it.
 */
void checks_command_exit(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct analysis_command_end *e = in->markers->end;
	struct analysis_check *c;
	char how[96];

	if (!e) {
		checks_add(a, def, CHECK_SKIP, "could not tell, because the report does not say how the command ended");
		return;
	}
	if (e->signal)
		snprintf(how, sizeof(how), "was killed by %s%s", e->signal, e->core_dumped ? " (core dumped)" : "");
	else
		snprintf(how, sizeof(how), "exited with status %d", e->exit_code);
	if (e->attached)
		c = checks_add(a, def, CHECK_SKIP, "could not tell, because the process was attached (run -p), not "
			       "started: how it ends is its parent's to judge");
	else if (e->interrupted)
		/* Not the command's fault, but a run cut short: a CI format must not read it as a clean one. */
		c = checks_add(a, def, CHECK_FAIL, "tlbprof was interrupted and stopped the command, which %s at its "
			       "signal: the run is cut short, and what it measured is partial", how);
	else if (e->failed && e->runs > 1)
		c = checks_add(a, def, CHECK_FAIL, "%u of the command's %u runs failed (the last %s): what a failed run "
			       "measured and printed may be partial or wrong", e->failed, e->runs, how);
	else if (e->failed)
		c = checks_add(a, def, CHECK_FAIL, "the command %s: what it measured and printed may be partial or "
			       "wrong, and its phases %s", how, in->n ? "are what it reached" : "are missing");
	else
		c = checks_add(a, def, CHECK_PASS, "the command exited with status 0%s",
			       e->runs > 1 ? " in every run" : "");
	checks_evidence(c, "runs", e->runs);
	checks_evidence(c, "failed", e->failed);
}
