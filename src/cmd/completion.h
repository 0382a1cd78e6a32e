/* SPDX-License-Identifier: MIT */
/* Bash completion made from the commands' option tables, so it cannot drift from the parser. */
#pragma once

#include <stdio.h>

/*
 * Write the bash completion script: the template's text with its line
 * "@TLBPROF_COMPLETION_DATA@" replaced by what the option tables declare
 * (the commands, each command's long options, which options take a value,
 * and a function per command that completes each option's value), and the
 * PMU maps of events_dir for --pmu. Returns 0 or -errno.
 */
int completion_write(FILE *out, FILE *template, const char *events_dir);
