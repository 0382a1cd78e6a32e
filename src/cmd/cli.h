/* SPDX-License-Identifier: MIT */
/*
 * The option machinery the commands share: the options several commands
 * take (outputs, --events-dir, --cpu, --fail-on, --quiet, --help), their
 * setters, and the checks that every output can be written before any work.
 */
#pragma once

#include <stddef.h>

#include "option.h"
#include "report/report.h"
#include "types.h"
#include "version.h"

/* Setters into a struct report_outputs at the spec's offset. */
enum option_result cli_set_json(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len);
enum option_result cli_set_format(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len);
enum option_result cli_set_output(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len);
/* --quiet into a struct report_outputs. */
enum option_result cli_set_quiet(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len);
/* --events-dir: a readable directory (a const char *). */
/* -e/--event, given once or more: the user's events (pmu/user_events.h), checked for syntax as they come. */
#define CLI_MAX_EVENTS 16
struct cli_events {
	char spec[CLI_MAX_EVENTS][160];
	size_t n;
};
enum option_result cli_set_event(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len);
#define CLI_OPTION_EVENT(TYPE, FIELD)                                                                              \
	{ .name = "event", .short_name = 'e', .value = "EVENT",                                                    \
	  .help = "count EVENT too, as perf stat -e: a libpfm4 name or\ncpu/event=N,umask=N/ (a comma list, or -e again)", \
	  .set = cli_set_event, .offset = offsetof(TYPE, FIELD) }

enum option_result cli_set_events_dir(const struct option_spec *o, const char *arg, void *opts, char *msg,
				      size_t len);
/* --cpu: an online CPU this process may run on (an int). */
enum option_result cli_set_cpu(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len);

/*
 * The output options together: --quiet needs a file to write (--json or
 * --output; without one the command would end with nothing to show);
 * --format needs --output (except --format json with --json, which is
 * --json alone); --output alone means json; several formats need a
 * directory or FORMAT=PATH each; one stream cannot
 * take two documents. Then checks that every target can be created
 * (OPTION_NO_OUTPUT, exit 4, when not), so a run never ends with nowhere
 * to put its report.
 */
enum option_result cli_check_outputs(struct report_outputs *out, char *msg, size_t len);
/* The same for a command whose only file output is --json (env, events): -q needs a --json to mean anything. */
enum option_result cli_check_json_output(struct report_outputs *out, char *msg, size_t len);

/*
 * Whether two output paths name one file: "-" is stdout; an existing file is its inode (a device is anybody's); a new
 * one its directory's real path and name, so ./a.json, a path through a symlinked directory and a dangling link to it
 * are all a.json.
 */
bool cli_same_output(const char *a, const char *b);
/*
 * No output of out names one of the reports read (analyze, compare): a gbench or CSV file over the report would lose
 * the measurement. native_may_replace: the JSON report may (analyze's re-analysed report over its source).
 */
enum option_result cli_check_inputs(const char *const *inputs, size_t n, const struct report_outputs *out,
				    bool native_may_replace, char *msg, size_t len);

/* Checks that the output file of option can be created (OPTION_NO_OUTPUT, exit 4, when not). */
enum option_result cli_check_output_target(const char *option, const char *path, char *msg, size_t len);

/* The options several commands share, as specs; TYPE is the command's options struct. */
#define CLI_FORMAT_HELP                                                                  \
	"report formats for --output: json, gbench (Google Benchmark\n"                  \
	"JSON), openmetrics (Prometheus textfile), junit (XML), csv\n"
#define CLI_OUTPUT_HELP                                                                  \
	"where --format goes: a file (one format), stdout with -, or\n"                  \
	"an existing directory: tlbprof.json, tlbprof.gbench.json,\n"                    \
	"tlbprof.prom, tlbprof.junit.xml, tlbprof.csv; or each\n"                        \
	"format to its own file: FORMAT=FILE[,FORMAT=FILE...], e.g.\n"                   \
	"junit=ci.xml,gbench=bench.json"
#define CLI_OPTION_JSON(TYPE, OUT, HELP)                                                                           \
	{ .name = "json", .value = "FILE|-", .help = (HELP), .def_help = "none", .set = cli_set_json,                \
	  .offset = offsetof(TYPE, OUT), .complete = OPTION_COMPLETE_JSON }
#define CLI_OPTION_FORMAT(TYPE, OUT)                                                                               \
	{ .name = "format", .value = "LIST", .help = CLI_FORMAT_HELP, .def = NULL, .def_help = "json",             \
	  .set = cli_set_format, .offset = offsetof(TYPE, OUT), .choice_at = output_format_at,                     \
	  .complete = OPTION_COMPLETE_LIST }
#define CLI_OPTION_OUTPUT(TYPE, OUT)                                                                               \
	{ .name = "output", .value = "PATH|DIR/|-", .help = CLI_OUTPUT_HELP, .def_help = "none",                   \
	  .set = cli_set_output, .offset = offsetof(TYPE, OUT), .complete = OPTION_COMPLETE_OUTPUT }
#define CLI_OPTION_FAIL_ON(TYPE, FIELD, HELP)                                                                      \
	{ .name = "fail-on", .value = "LEVEL", .help = (HELP), .def = "fail", .set = option_set_choice,               \
	  .offset = offsetof(TYPE, FIELD), .choices = fail_on_names, .complete = OPTION_COMPLETE_WORD }
#define CLI_FAIL_ON_HELP "exit 1 when a check reaches LEVEL: fail, warn, never\n"
#define CLI_OPTION_EVENTS_DIR(TYPE, FIELD)                                                                         \
	{ .name = "events-dir", .value = "DIR", .help = "metric-to-event map files", .def_help = TLBPROF_EVENTS_DIR, \
	  .set = cli_set_events_dir, .offset = offsetof(TYPE, FIELD), .complete = OPTION_COMPLETE_DIR }
#define CLI_OPTION_QUIET(TYPE, OUT, HELP)                                                                          \
	{ .name = "quiet", .short_name = 'q', .help = (HELP), .set = cli_set_quiet, .offset = offsetof(TYPE, OUT) }
#define CLI_OPTION_HELP { .name = "help", .short_name = 'h', .help = "show this help and exit", .flags = OPTION_HELP }
#define CLI_OPTION_VERSION                                                                                         \
	{ .name = "version", .short_name = 'V', .help = "show the version and exit", .flags = OPTION_VERSION }
