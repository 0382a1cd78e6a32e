/* SPDX-License-Identifier: MIT */
/* Fuzz target: the option-value parsers and the whole command line (argv split at newlines). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/command.h"
#include "types.h"
#include "parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	command_parse(argc, argv, &cmd, &options, msg, sizeof(msg));
	free(options);
	free(s);
	return 0;
}
