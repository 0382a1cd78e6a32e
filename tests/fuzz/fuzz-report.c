/* SPDX-License-Identifier: MIT */
/* Fuzz target: the report reader of `tlbprof analyze` and `plot`; the analysis, every format, the SVG of what it
 * accepts, and `compare` of it with itself. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "judge/analysis.h"
#include "judge/compare.h"
#include "judge/plot.h"
#include "report/report.h"

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
			struct report_input in = { .argc = doc.argc, .argv = doc.argv, .workload = doc.workload, .env = &doc.env, .clock = &doc.clock,
						   .results = &doc.results, .analysis = &a, .pmu_name = doc.pmu_name,
						   .reanalyzed_from = path, .source = doc.source };
			FILE *sink = fopen("/dev/null", "we");
			for (int fmt = 0; sink && fmt < OUTPUT_FORMATS; fmt++)
				report_format_write(&in, (enum output_format)fmt, sink);
			if (sink)
				fclose(sink);
			struct compare_side side = { .results = &doc.results, .analysis = &a, .env = &doc.env,
						     .clock = &doc.clock, .pmu_name = doc.pmu_name };
			struct compare_result cmp;
			if (compare_run(&side, &side, 0.05, &cmp) == 0) {
				struct report_compare_input cin = { .cmp = &cmp, .base_path = path, .new_path = path,
								    .base = &doc, .new = &doc, .base_analysis = &a,
								    .new_analysis = &a };
				FILE *devnull = fopen("/dev/null", "we");
				if (devnull) {
					report_compare_print_text(&cin, devnull);
					fclose(devnull);
				}
				compare_free(&cmp);
			}
			struct plot_input pin = { .phases = doc.results.phases, .n = doc.results.n, .analysis = &a,
						 .env = &doc.env, .interrupted = doc.results.interrupted, .source = path };
			struct plot p;
			/* Layout and writer both: a character device is written in place, nothing is kept. */
			if (plot_build(&pin, &p) == 0) {
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
