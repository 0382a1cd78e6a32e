/* SPDX-License-Identifier: MIT */
/* Fuzz target: the report reader of `tlbprof analyze`, and the analysis of whatever it accepts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis.h"
#include "report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_doc doc;
	struct analysis a;
	char path[64], err[512];
	int fd = memfd_create("report", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (report_read_json(path, &doc, err, sizeof(err)) == 0) {
		if (analysis_run(doc.results.phases, doc.results.n, &doc.env, &doc.clock, &a) == 0)
			analysis_free(&a);
		report_doc_free(&doc);
	}
	close(fd);
	return 0;
}
