/* SPDX-License-Identifier: MIT */
/* Fuzz target: the report reader of `tlbprof analyze` and `plot`, and the analysis and the SVG of whatever it accepts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "analysis.h"
#include "plot.h"
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
		if (analysis_run(doc.results.phases, doc.results.n, &doc.env, &doc.clock, &a) == 0) {
			struct plot_input in = { .phases = doc.results.phases, .n = doc.results.n, .analysis = &a,
						 .env = &doc.env, .interrupted = doc.results.interrupted, .source = path };
			struct plot p;
			/* Layout and writer both: a character device is written in place, nothing is kept. */
			if (plot_build(&in, &p) == 0) {
				report_write_svg(&p, "/dev/null", err, sizeof(err));
				plot_free(&p);
			}
			analysis_free(&a);
		}
		report_doc_free(&doc);
	}
	close(fd);
	return 0;
}
