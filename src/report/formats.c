/* SPDX-License-Identifier: MIT */
/*
 * The formats of the report by name: each one's file name in an --output
 * directory, and the dispatch to its writer, onto a stream or into a file.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "report/internal.h"
#include "report/report.h"

/* The native document onto a stream. */
static int write_json(const struct report_input *in, FILE *f)
{
	json_t *root = report_json_build(in);
	int rc;

	if (!root)
		return -ENOMEM;
	rc = report_json_dumpf(root, f);
	json_decref(root);
	return rc;
}

/* The one list of formats: --format's name, the file in an --output directory, the writer. */
static const struct {
	const char *name;
	const char *file_name;
	int (*write)(const struct report_input *in, FILE *f);
} formats[OUTPUT_FORMATS] = {
	[OUTPUT_JSON] = { "json", "tlbprof.json", write_json },
	[OUTPUT_GBENCH] = { "gbench", "tlbprof.gbench.json", report_gbench_write },
	[OUTPUT_OPENMETRICS] = { "openmetrics", "tlbprof.prom", report_openmetrics_write },
	[OUTPUT_JUNIT] = { "junit", "tlbprof.junit.xml", report_junit_write },
	[OUTPUT_CSV] = { "csv", "tlbprof.csv", report_csv_write },
};

const char *output_format_name(enum output_format f)
{
	return (unsigned)f < OUTPUT_FORMATS ? formats[f].name : NULL;
}

const char *output_format_at(size_t i)
{
	return i < OUTPUT_FORMATS ? formats[i].name : NULL;
}

int output_format_from_name(const char *s)
{
	for (int f = 0; f < OUTPUT_FORMATS; f++)
		if (strcmp(s, formats[f].name) == 0)
			return f;
	return -1;
}

const char *report_format_file_name(enum output_format fmt)
{
	return (unsigned)fmt < OUTPUT_FORMATS ? formats[fmt].file_name : NULL;
}

int report_format_write(const struct report_input *in, enum output_format fmt, FILE *f)
{
	return (unsigned)fmt < OUTPUT_FORMATS ? formats[fmt].write(in, f) : -EINVAL;
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
