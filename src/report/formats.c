/* SPDX-License-Identifier: MIT */
/*
 * The formats of the report by name: each one's file name in an --output
 * directory, and the dispatch to its writer, onto a stream or into a file.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>

#include "report/internal.h"
#include "report/report.h"

static const char *const file_names[OUTPUT_FORMATS] = {
	[OUTPUT_JSON] = "tlbprof.json",
	[OUTPUT_GBENCH] = "tlbprof.gbench.json",
	[OUTPUT_OPENMETRICS] = "tlbprof.prom",
	[OUTPUT_JUNIT] = "tlbprof.junit.xml",
	[OUTPUT_CSV] = "tlbprof.csv",
};

const char *report_format_file_name(enum output_format fmt)
{
	return (unsigned)fmt < OUTPUT_FORMATS ? file_names[fmt] : NULL;
}

int report_format_write(const struct report_input *in, enum output_format fmt, FILE *f)
{
	switch (fmt) {
	case OUTPUT_JSON: {
		json_t *root = report_json_build(in);
		if (!root)
			return -ENOMEM;
		int rc = report_json_dumpf(root, f);
		json_decref(root);
		return rc;
	}
	case OUTPUT_GBENCH:
		return report_gbench_write(in, f);
	case OUTPUT_OPENMETRICS:
		return report_openmetrics_write(in, f);
	case OUTPUT_JUNIT:
		return report_junit_write(in, f);
	case OUTPUT_CSV:
		return report_csv_write(in, f);
	case OUTPUT_FORMATS:
		break;
	}
	return -EINVAL;
}

int report_write_json(const struct report_input *in, const char *path, char *err, size_t err_len)
{
	return report_write_format(in, OUTPUT_JSON, path, "--json", err, err_len);
}

/* A format as the stream writer of report_write_file(). */
struct format_job {
	const struct report_input *in;
	enum output_format format;
};

static int format_stream(FILE *f, const void *ctx)
{
	const struct format_job *job = ctx;

	return report_format_write(job->in, job->format, f);
}

int report_write_format(const struct report_input *in, enum output_format fmt, const char *path, const char *option,
			char *err, size_t err_len)
{
	const struct format_job job = { .in = in, .format = fmt };
	int rc = report_write_file(path, option, "report", format_stream, &job, err, err_len);

	if (rc == -ENOMEM)
		snprintf(err, err_len, "out of memory building the %s report", output_format_name(fmt));
	return rc;
}
