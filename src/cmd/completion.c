/* SPDX-License-Identifier: MIT */
/* Bash completion made from the commands' option tables: the data part of completion/tlbprof.bash.in. */
#include "cmd/completion.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/command.h"
#include "measure/workload.h"
#include "option.h"
#include "report/report.h"

#define PLACEHOLDER "@TLBPROF_COMPLETION_DATA@"

/* Every option table of cmd: its own, and for measuring each workload's. */
static size_t command_tables(const struct command *cmd, const struct option_spec **tables, size_t max)
{
	size_t n = 0;

	tables[n++] = cmd->specs;
	for (size_t i = 0; cmd == &command_measure && workload_at(i) && n < max; i++)
		if (workload_at(i)->params)
			tables[n++] = workload_at(i)->params;
	return n;
}

static const char *var_name(const struct command *cmd)
{
	return cmd->name ? cmd->name : "measure";
}

static void write_words(FILE *f, const struct option_spec *o, const char *events_dir)
{
	const char *w;

	if (strcmp(o->name, "pmu") == 0) {
		/* The maps there are: the PMUs tlbprof has events for (generic is the fallback, not a PMU). */
		struct dirent **names;
		int n = scandir(events_dir, &names, NULL, alphasort);
		for (int i = 0, k = 0; i < n; i++) {
			size_t l = strlen(names[i]->d_name);
			if (l > 7 && strcmp(names[i]->d_name + l - 7, ".events") == 0 &&
			    strcmp(names[i]->d_name, "generic.events") != 0)
				fprintf(f, "%s%.*s", k++ ? " " : "", (int)(l - 7), names[i]->d_name);
			free(names[i]);
		}
		if (n > 0)
			free(names);
		return;
	}
	for (size_t i = 0; (w = option_choice(o, i)) != NULL; i++)
		fprintf(f, "%s%s", i ? " " : "", w);
}

/* The case arm that completes o's value. */
static void write_value_arm(FILE *f, const struct option_spec *o, const char *events_dir)
{
	fprintf(f, "\t--%s", o->name);
	if (o->short_name)
		fprintf(f, " | -%c", o->short_name);
	fputs(") ", f);
	switch (o->complete) {
	case OPTION_COMPLETE_NOTHING:
		fputs(";;\t# a number or free text: nothing to offer\n", f);
		return;
	case OPTION_COMPLETE_WORD:
		fputs("COMPREPLY=($(compgen -W '", f);
		write_words(f, o, events_dir);
		fputs("' -- \"$cur\")) ;;\n", f);
		return;
	case OPTION_COMPLETE_LIST:
		fputs("_tlbprof_list '", f);
		write_words(f, o, events_dir);
		fputs("' ;;\n", f);
		return;
	case OPTION_COMPLETE_FILE:
		fputs("_tlbprof_files; [[ -z $cur ]] && COMPREPLY+=(-) ;;\n", f);
		return;
	case OPTION_COMPLETE_JSON:
		fputs("_tlbprof_files '*.json'; [[ -z $cur ]] && COMPREPLY+=(-) ;;\n", f);
		return;
	case OPTION_COMPLETE_DIR:
		fputs("compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\")) ;;\n", f);
		return;
	case OPTION_COMPLETE_OUTPUT:
		fputs("_tlbprof_output ;;\n", f);
		return;
	}
}

static void write_command(FILE *f, const struct command *cmd, const char *events_dir)
{
	const struct option_spec *tables[OPTION_MAX_TABLES];
	size_t n = command_tables(cmd, tables, OPTION_MAX_TABLES);
	int k = 0;

	fprintf(f, "_tlbprof_options_%s='", var_name(cmd));
	for (size_t t = 0; t < n; t++)
		for (const struct option_spec *o = tables[t]; o->name; o++)
			if (!(o->flags & OPTION_HIDDEN))
				fprintf(f, "%s--%s", k++ ? " " : "", o->name);
	fprintf(f, "'\n_tlbprof_valued_%s='", var_name(cmd));
	k = 0;
	for (size_t t = 0; t < n; t++)
		for (const struct option_spec *o = tables[t]; o->name; o++)
			if (o->value) {
				fprintf(f, "%s--%s", k++ ? " " : "", o->name);
				if (o->short_name)
					fprintf(f, " -%c", o->short_name);
			}
	fprintf(f, "'\n# Complete the value of option $1 of %s%s; 1 when it takes none.\n", cmd->name ? "tlbprof " : "measuring",
		cmd->name ? cmd->name : "");
	fprintf(f, "_tlbprof_value_%s()\n{\n\tcase $1 in\n", var_name(cmd));
	for (size_t t = 0; t < n; t++)
		for (const struct option_spec *o = tables[t]; o->name; o++)
			if (o->value && !(o->flags & OPTION_HIDDEN))
				write_value_arm(f, o, events_dir);
	fputs("\t*) return 1 ;;\n\tesac\n\treturn 0\n}\n", f);
}

static void write_data(FILE *f, const char *events_dir)
{
	const char *w;

	fputs("# Generated from the option tables of src/cmd/ and the workloads (src/cmd/completion.c).\n", f);
	fputs("_tlbprof_commands='", f);
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "%s%s", i ? " " : "", commands[i]->name);
	fputs("'\n_tlbprof_formats='", f);
	for (size_t i = 0; (w = output_format_at(i)) != NULL; i++)
		fprintf(f, "%s%s", i ? " " : "", w);
	fputs("'\n", f);
	write_command(f, &command_measure, events_dir);
	for (size_t i = 0; commands[i]; i++)
		write_command(f, commands[i], events_dir);
}

int completion_write(FILE *out, FILE *template, const char *events_dir)
{
	char line[4096];
	bool done = false;

	while (fgets(line, sizeof(line), template)) {
		if (strncmp(line, PLACEHOLDER, strlen(PLACEHOLDER)) == 0) {
			write_data(out, events_dir);
			done = true;
		} else {
			fputs(line, out);
		}
	}
	if (ferror(template))
		return -EIO;
	if (!done)
		return -EINVAL;
	return fflush(out) == 0 && !ferror(out) ? 0 : -EIO;
}
