/* SPDX-License-Identifier: MIT */
/*
 * The commands (tlbprof NAME ..., and measuring without a name): one file
 * each in src/cmd/, one table line each in cmd/commands.c. A command owns
 * its options (a struct of its own, filled from its option table), its
 * usage, its parse and its run; main() only dispatches and handles signals.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "option.h"

/* Exit statuses (DESIGN.md, tlbprof(1)). */
enum {
	EXIT_OK = 0,
	EXIT_CHECK_FAILED = 1,
	EXIT_USAGE = 2,
	EXIT_UNAVAILABLE = 3,
	EXIT_OUTPUT = 4,
	EXIT_INTERRUPTED = 130,
};

/*
 * How main handles SIGINT, SIGTERM and SIGHUP while a command runs (SIGPIPE
 * is ignored for all: a closed reader is EPIPE, exit 4). Wherever a signal
 * ends tlbprof, the files of cleanup.h are removed first.
 */
enum command_signals {
	COMMAND_SIGNALS_DEFAULT,	/* the first signal ends tlbprof: the command has nothing to save */
	/* Measuring: stop at the next safe point and write what is done; a second signal ends tlbprof. */
	COMMAND_SIGNALS_STOP,
	/*
	 * tlbprof run: tlbprof must outlive its command to reap it and write the
	 * report, so a second signal only raises the stop level to 2 (the command
	 * is then killed at once). The command gets the signal tlbprof got (a
	 * SIGHUP passed on as SIGHUP), and SIGPIPE's default back at exec (a
	 * benchmark that stops reading its acks must not kill tlbprof).
	 */
	COMMAND_SIGNALS_SURVIVE,
};

/* What main gives every command besides its options. */
struct command_context {
	int argc;			/* the command line as typed (for the report and re-execution) */
	char **argv;
	volatile sig_atomic_t *stop;	/* raised by signals (COMMAND_SIGNALS_STOP/SURVIVE): stop at a safe point */
	volatile sig_atomic_t *stop_signal;	/* the latest of those signals (SIGINT, SIGTERM, SIGHUP), 0 before */
};

struct command {
	const char *name;	/* "analyze"; NULL: measuring, the default command */
	const char *summary;	/* one line for the main --help */
	enum command_signals signals;
	const struct option_spec *specs;	/* its options as data (for measuring, the workloads add theirs) */
	size_t options_size;	/* the command's options struct, zeroed before parse */
	void (*usage)(FILE *f);
	/*
	 * argv[0] is the command's name (or "tlbprof"). Fill options; every value
	 * is validated here, before any work: OPTION_USAGE and OPTION_NO_OUTPUT
	 * come with a one-line error naming the option and the value in msg.
	 */
	enum option_result (*parse)(int argc, char **argv, void *options, char *msg, size_t len);
	/* Do the work; returns the exit status. */
	int (*run)(const void *options, const struct command_context *ctx);
};

/* The registry (cmd/commands.c): the named commands in --help order, NULL-terminated. */
extern const struct command *const commands[];
/* Measuring, the command without a name. */
extern const struct command command_measure;

/*
 * The command argv names (argv[1], else measuring), and its options parsed
 * from the rest into a new buffer (*options, caller frees; NULL on
 * OPTION_USAGE before anything was allocated). Returns what the parse gave.
 */
enum option_result command_parse(int argc, char **argv, const struct command **cmd, void **options, char *msg,
				 size_t len);

/* Print "Commands (...):" and a line per named command, for the main --help. */
void commands_print(FILE *f);

/* Whether name (n bytes, without "--") is an option of measuring, for "applies only to measuring". */
bool command_measure_has_option(const char *name, size_t n);
