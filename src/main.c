/* SPDX-License-Identifier: MIT */
/* tlbprof's entry point: find the command, parse its options, install its signal handling, run it. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/command.h"
#include "report/report.h"

/* A signal handler can only reach file scope; this counter is all it touches. */
static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	if (stop_flag < 2)
		stop_flag = stop_flag + 1;
}

/*
 * SIGINT and SIGTERM raise stop_flag, checked at the command's next safe
 * point (enum command_signals says how each command wants them).
 */
static void install_signals(enum command_signals how)
{
	struct sigaction sa;

	if (how == COMMAND_SIGNALS_DEFAULT)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	/* Measuring: a second signal acts as if none were caught and ends tlbprof. */
	sa.sa_flags = how == COMMAND_SIGNALS_STOP ? SA_RESETHAND : 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (how == COMMAND_SIGNALS_SURVIVE)
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
	struct command_context ctx = { .argc = argc, .argv = argv, .stop = &stop_flag };
	status = cmd->run(options, &ctx);
	free(options);
	return status;
}
