/* SPDX-License-Identifier: MIT */
/* tlbprof's entry point: find the command, parse its options, install its signal handling, run it. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "cmd/command.h"
#include "report/report.h"

/* A signal handler can only reach file scope; these are all it touches. */
static volatile sig_atomic_t stop_flag;
static volatile sig_atomic_t stop_signal;	/* the latest signal caught, for tlbprof run to pass on */
static volatile sig_atomic_t signals_how;	/* enum command_signals */

/*
 * The fatal end: remove the files a report or a workload has open
 * (cleanup.h), then die of sig as if it had not been caught, so the parent
 * sees the signal. sig is blocked while its handler runs: it is delivered
 * with the default action as the handler returns.
 */
static void die_of(int sig)
{
	cleanup_run();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_signal(int sig)
{
	stop_signal = sig;
	if (signals_how == COMMAND_SIGNALS_DEFAULT || (signals_how == COMMAND_SIGNALS_STOP && stop_flag >= 1)) {
		die_of(sig);
		return;
	}
	if (stop_flag < 2)
		stop_flag = stop_flag + 1;
}

/*
 * SIGINT, SIGTERM and SIGHUP (a closed terminal or ssh session) raise
 * stop_flag, checked at the command's next safe point (enum command_signals
 * says how each command wants them); where one ends tlbprof, its temporary
 * and data files are removed first. SIGPIPE is ignored everywhere: a reader
 * that went away (| head) is EPIPE on that stream, which costs no other
 * output and ends in exit 4.
 */
static void install_signals(enum command_signals how)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	signals_how = (sig_atomic_t)how;
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
	const struct command *cmd;
	void *options = NULL;
	char msg[512];
	int status;

	switch (command_parse(argc, argv, &cmd, &options, msg, sizeof(msg))) {
	case OPTION_OK:
		break;
	case OPTION_EXIT:
		free(options);
		return EXIT_OK;
	case OPTION_USAGE:
		report_error(msg);
		free(options);
		return EXIT_USAGE;
	case OPTION_NO_OUTPUT:
		report_error(msg);
		free(options);
		return EXIT_OUTPUT;
	}
	install_signals(cmd->signals);
	struct command_context ctx = { .argc = argc, .argv = argv, .stop = &stop_flag, .stop_signal = &stop_signal };
	status = cmd->run(options, &ctx);
	free(options);
	return status;
}
