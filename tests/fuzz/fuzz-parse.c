/* SPDX-License-Identifier: MIT */
/* Fuzz target: the option-value parsers and the whole command line (argv split at newlines). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/command.h"
#include "cmd/options.h"
#include "measure/workload.h"
#include "types.h"
#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* The registry's entries (measure/workloads/registry.c). */
extern const struct workload_ops workload_chase, workload_stride;

/*
 * The bounds a parse that succeeds must hold, written without overflow: every
 * stride at most half of every size (2 * 2^63 wrapped to 0 once). abort()
 * makes a violation a crash the fuzzer keeps.
 */
static void check_bounds(const struct command *cmd, const void *options)
{
	if (cmd != &command_measure)
		return;
	const struct plan_request *req = &((const struct measure_options *)options)->plan;
	for (size_t i = 0; i < req->n_sizes; i++) {
		if (req->workload == &workload_chase && req->sizes_bytes[i] / 2 < req->stride_bytes)
			abort();
		for (size_t k = 0; req->workload == &workload_stride && k < req->n_strides; k++)
			if (req->sizes_bytes[i] / 2 < req->strides_bytes[k])
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *items[16], msg[512];
	char *argv[34] = { "tlbprof" };
	int argc = 1;
	uint64_t v;
	double d;
	struct page_request pr;
	const struct command *cmd;
	void *options = NULL;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	parse_size(s, &v);
	parse_count(s, &v);
	parse_double(s, &d);
	page_request_parse(s, &pr);
	/* A cpu list: the set never holds more CPUs than the count says, and a malformed list none. */
	cpu_set_t set;
	unsigned cpus = parse_cpulist(s, &set);
	if ((unsigned)CPU_COUNT(&set) > cpus)
		abort();
	char *copy = strdup(s);
	if (copy)
		parse_list(copy, items, 16);
	free(copy);
	/* The command line: one argument per line; never --help/--version (they print) or the internal child. */
	for (char *p = s, *nl; p && argc < 33; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (strstr(p, "-h") || strstr(p, "-V") || strstr(p, "internal") || strstr(p, "--help") ||
		    strstr(p, "--vers"))
			continue;
		argv[argc++] = p;
	}
	argv[argc] = NULL;
	if (command_parse(argc, argv, &cmd, &options, msg, sizeof(msg)) == OPTION_OK)
		check_bounds(cmd, options);
	free(options);
	free(s);
	return 0;
}
