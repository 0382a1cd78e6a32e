/* SPDX-License-Identifier: MIT */
/* The one list of commands: adding a command is its file in src/cmd/, one line here and one in meson.build. */
#include "cmd/command.h"

#include <stdlib.h>
#include <string.h>

extern const struct command command_analyze;
extern const struct command command_compare;
extern const struct command command_env;
extern const struct command command_events;
extern const struct command command_plot;
extern const struct command command_run;

/* In the order the main --help lists them. */
const struct command *const commands[] = {
	&command_analyze,
	&command_compare,
	&command_env,
	&command_events,
	&command_plot,
	&command_run,
	NULL,
};

void commands_print(FILE *f)
{
	fprintf(f, "Commands (tlbprof COMMAND --help for each):\n");
	for (size_t i = 0; commands[i]; i++)
		fprintf(f, "  %-20s %s\n", commands[i]->name, commands[i]->summary);
}

enum option_result command_parse(int argc, char **argv, const struct command **cmd, void **options, char *msg,
				 size_t len)
{
	*cmd = &command_measure;
	for (size_t i = 0; argc > 1 && commands[i]; i++)
		if (strcmp(argv[1], commands[i]->name) == 0)
			*cmd = commands[i];
	*options = calloc(1, (*cmd)->options_size);
	if (!*options)
		return option_error(msg, len, "out of memory");
	if (*cmd == &command_measure)
		return (*cmd)->parse(argc, argv, *options, msg, len);
	return (*cmd)->parse(argc - 1, argv + 1, *options, msg, len);
}
