/* SPDX-License-Identifier: MIT */
/* Command line -> a validated, read-only config. The only module that prints usage. */
#pragma once

#include <stddef.h>
#include <stdio.h>

#include "config.h"

enum cli_result {
	CLI_RUN = 0,	/* config is valid: run it */
	CLI_EXIT = 1,	/* --help or --version was printed: exit 0 */
	CLI_USAGE = 2,	/* bad option or value: msg holds one line; exit 2 */
	CLI_NO_OUTPUT = 4,	/* the --json target cannot be created: msg holds one line; exit 4 */
};

/*
 * Parse argv into *cfg (which borrows argv strings; argv must outlive it).
 * Every value is validated here, before any work: on CLI_USAGE, msg holds a
 * one-line error that names the option and the value. --help and --version
 * print to stdout.
 */
enum cli_result cli_parse(int argc, char **argv, struct tlbprof_config *cfg, char *msg, size_t msg_len);

/* Print the help text (the commands, and every measuring option with its default) to f. */
void cli_usage(FILE *f);

/* Print the --help of subcommand name (NULL or "": the main help) to f. 0, or -ENOENT when unknown. */
int cli_command_usage(const char *name, FILE *f);
