/* SPDX-License-Identifier: MIT */
/* Build step: write the bash completion of tlbprof from its template and the option tables. */
#include <stdio.h>
#include <string.h>

#include "cmd/completion.h"

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s TEMPLATE EVENTS_DIR OUTPUT\n", argv[0]);
		return 2;
	}
	FILE *in = fopen(argv[1], "re"), *out = fopen(argv[3], "we");
	int rc = in && out ? completion_write(out, in, argv[2]) : -1;
	if (in)
		fclose(in);
	if (out && fclose(out) != 0)
		rc = -1;
	if (rc)
		fprintf(stderr, "%s: cannot write %s from %s: %s\n", argv[0], argv[3], argv[1],
			rc == -1 ? "cannot open" : strerror(-rc));
	return rc ? 1 : 0;
}
