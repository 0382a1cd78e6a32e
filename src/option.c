/* SPDX-License-Identifier: MIT */
/* Options as data: the table-driven command-line parser, the value setters and the --help printer. */
#include "option.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse.h"
#include "version.h"

/* The column help text starts in, and the width of the option column before it. */
#define HELP_COLUMN 23
/* The width a default is kept within when its parts can be broken. */
#define HELP_WIDTH 80
#define MAX_SPECS 96

enum option_result option_error(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
	return OPTION_USAGE;
}

static const char *errno_phrase(int rc)
{
	return rc == -ERANGE ? "out of range" : "not a number";
}

void option_store(const struct option_spec *o, void *opts, const void *v, size_t n)
{
	memcpy((char *)opts + o->offset, v, n);
}

const char *option_choice(const struct option_spec *o, size_t i)
{
	if (o->choices) {
		for (size_t k = 0; k < i; k++)
			if (!o->choices[k])
				return NULL;
		return o->choices[i];
	}
	return o->choice_at ? o->choice_at(i) : NULL;
}

enum option_result option_set_flag(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	(void)arg;
	(void)msg;
	(void)len;
	bool yes = true;

	option_store(o, opts, &yes, sizeof(yes));
	return OPTION_OK;
}

enum option_result option_set_string(const struct option_spec *o, const char *arg, void *opts, char *msg,
				     size_t len)
{
	(void)msg;
	(void)len;
	option_store(o, opts, &arg, sizeof(arg));
	return OPTION_OK;
}

enum option_result option_set_count(const struct option_spec *o, const char *arg, void *opts, char *msg,
				    size_t len)
{
	uint64_t v;

	if (parse_count(arg, &v) != 0 || (double)v < o->min || (double)v > o->max)
		return option_error(msg, len, "--%s '%s': must be a whole number from %.0f to %.0f", o->name, arg, o->min,
				    o->max);
	unsigned u = (unsigned)v;
	option_store(o, opts, &u, sizeof(u));
	return OPTION_OK;
}

enum option_result option_set_u64(const struct option_spec *o, const char *arg, void *opts, char *msg, size_t len)
{
	uint64_t v;
	int rc = parse_count(arg, &v);

	if (rc)
		return option_error(msg, len, "--%s '%s': %s", o->name, arg, errno_phrase(rc));
	option_store(o, opts, &v, sizeof(v));
	return OPTION_OK;
}

enum option_result option_set_double(const struct option_spec *o, const char *arg, void *opts, char *msg,
				     size_t len)
{
	double v;
	bool low_ok, high_ok;

	if (parse_double(arg, &v) != 0)
		return option_error(msg, len, "--%s '%s': must be %s", o->name, arg, o->range_help);
	low_ok = o->flags & OPTION_MIN_OPEN ? v > o->min : v >= o->min;
	high_ok = o->flags & OPTION_MAX_OPEN ? v < o->max : v <= o->max;
	if (!low_ok || !high_ok)
		return option_error(msg, len, "--%s '%s': must be %s", o->name, arg, o->range_help);
	option_store(o, opts, &v, sizeof(v));
	return OPTION_OK;
}

enum option_result option_set_choice(const struct option_spec *o, const char *arg, void *opts, char *msg,
				     size_t len)
{
	const char *w;
	char words[256] = "";
	size_t n = 0;

	for (size_t i = 0; (w = option_choice(o, i)) != NULL; i++) {
		if (strcasecmp(arg, w) == 0) {
			int v = o->values ? o->values[i] : (int)i;
			option_store(o, opts, &v, sizeof(v));
			return OPTION_OK;
		}
		n++;
	}
	/* "use a, b or c" */
	for (size_t i = 0; i < n; i++)
		snprintf(words + strlen(words), sizeof(words) - strlen(words), "%s%s",
			 i == 0 ? "" : i + 1 == n ? " or " : ", ", option_choice(o, i));
	return option_error(msg, len, "--%s '%s': use %s", o->name, arg, words);
}

int option_split_list(const struct option_spec *o, const char *arg, const char *what, char *buf, size_t buf_len,
		      char **items, size_t max, char *msg, size_t len)
{
	int n;

	if (strlen(arg) >= buf_len) {
		option_error(msg, len, "--%s '%.40s...': too long", o->name, arg);
		return -1;
	}
	strcpy(buf, arg);
	n = parse_list(buf, items, max);
	if (n == -E2BIG)
		option_error(msg, len, "--%s '%s': more than %zu %s", o->name, arg, max, what);
	else if (n < 0)
		option_error(msg, len, "--%s '%s': empty item in the list", o->name, arg);
	return n < 0 ? -1 : n;
}

/* ---- the parser ---- */

struct found {
	size_t table, index;
};

/* Every spec of p in order, with where it came from. Returns the count. */
static size_t collect(const struct option_parser *p, const struct option_spec **specs, struct found *where)
{
	size_t n = 0;

	for (size_t t = 0; t < OPTION_MAX_TABLES && p->tables[t].specs; t++)
		for (size_t i = 0; i < OPTION_MAX_SPECS && n < MAX_SPECS && p->tables[t].specs[i].name; i++) {
			specs[n] = &p->tables[t].specs[i];
			where[n++] = (struct found){ t, i };
		}
	return n;
}

const struct option_spec *option_find(const struct option_parser *p, const char *name)
{
	for (size_t t = 0; t < OPTION_MAX_TABLES && p->tables[t].specs; t++)
		for (const struct option_spec *o = p->tables[t].specs; o->name; o++)
			if (strcmp(o->name, name) == 0)
				return o;
	return NULL;
}

enum option_result option_apply(const struct option_parser *p, const char *name, const char *value, char *msg,
				size_t len)
{
	for (size_t t = 0; t < OPTION_MAX_TABLES && p->tables[t].specs; t++)
		for (const struct option_spec *o = p->tables[t].specs; o->name; o++)
			if (strcmp(o->name, name) == 0)
				return o->set(o, value, p->tables[t].opts, msg, len);
	return option_error(msg, len, "unknown option '--%s'", name);
}

bool option_given(const struct option_parser *p, const char *name)
{
	for (size_t t = 0; t < OPTION_MAX_TABLES && p->tables[t].specs; t++)
		for (size_t i = 0; i < OPTION_MAX_SPECS && p->tables[t].specs[i].name; i++)
			if (strcmp(p->tables[t].specs[i].name, name) == 0 && p->given[t][i])
				return true;
	return false;
}

/*
 * A getopt_long error as one line: a missing value, a value given to a flag,
 * an unknown option, or (for a command) an option that only measuring takes.
 */
static enum option_result getopt_error(const struct option_parser *p, int c, char **argv, const struct option *opts,
				       char *msg, size_t len)
{
	const char *arg = argv[optind - 1], *cmd = p->command;

	if (c == ':')
		return option_error(msg, len, "option '%s' needs a value", arg);
	if (strncmp(arg, "--", 2) == 0) {
		const char *eq = strchr(arg, '=');
		size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		for (const struct option *o = opts; o->name; o++)
			if (eq && o->has_arg == no_argument && strlen(o->name) == n && memcmp(o->name, arg + 2, n) == 0)
				return option_error(msg, len, "option '--%s' takes no value ('%s')", o->name, arg);
		if (cmd && p->measuring_has && p->measuring_has(arg + 2, n))
			return option_error(msg, len, "%s: option '--%.*s' applies only to measuring", cmd, (int)n, arg + 2);
		return option_error(msg, len, "unknown option '%s' (see tlbprof %s%s--help)", arg, cmd ? cmd : "",
				    cmd ? " " : "");
	}
	return option_error(msg, len, "unknown option '-%c' (see tlbprof %s%s--help)", optopt ? optopt : '?',
			    cmd ? cmd : "", cmd ? " " : "");
}

/* Apply spec o to value arg: help and version print and end parsing; everything else goes to its setter. */
static enum option_result apply(const struct option_parser *p, const struct option_spec *o, void *opts,
				const char *arg, char *msg, size_t len)
{
	if (o->flags & OPTION_HELP) {
		p->usage(stdout);
		return OPTION_EXIT;
	}
	if (o->flags & OPTION_VERSION) {
		printf("tlbprof %s\n", TLBPROF_VERSION);
		return OPTION_EXIT;
	}
	return o->set(o, arg ? arg : "", opts, msg, len);
}

enum option_result option_parse(struct option_parser *p, int argc, char **argv, char *msg, size_t len)
{
	const struct option_spec *specs[MAX_SPECS];
	struct found where[MAX_SPECS];
	struct option longopts[MAX_SPECS + 1];
	char shortopts[2 * MAX_SPECS + 4], **args;
	size_t n = collect(p, specs, where), s = 0;
	enum option_result r = OPTION_OK;
	int c;

	memset(p->given, 0, sizeof(p->given));
	for (size_t i = 0; i < n; i++)
		if (specs[i]->def && specs[i]->set(specs[i], specs[i]->def, p->tables[where[i].table].opts, msg, len))
			return option_error(msg, len, "internal error: bad built-in default of --%s", specs[i]->name);
	shortopts[s++] = p->stop_at_operand ? '+' : ':';
	if (p->stop_at_operand)
		shortopts[s++] = ':';
	for (size_t i = 0; i < n; i++) {
		longopts[i] = (struct option){ specs[i]->name, specs[i]->value ? required_argument : no_argument, NULL,
					       256 + (int)i };
		if (specs[i]->short_name) {
			shortopts[s++] = specs[i]->short_name;
			if (specs[i]->value)
				shortopts[s++] = ':';
		}
	}
	longopts[n] = (struct option){ 0 };
	shortopts[s] = '\0';
	/* getopt_long permutes the array it parses: give it a copy, so argv stays the command as typed. */
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args)
		return option_error(msg, len, "out of memory");
	memcpy(args, argv, (size_t)argc * sizeof(*args));
	opterr = 0;
	optind = 0;	/* 0, not 1: glibc then resets all its state (a parse may run more than once) */
	while (r == OPTION_OK && (c = getopt_long(argc, args, shortopts, longopts, NULL)) != -1) {
		size_t i = n;
		if (c >= 256)
			i = (size_t)c - 256;
		for (size_t k = 0; c < 256 && k < n; k++)
			if (specs[k]->short_name && specs[k]->short_name == c)
				i = k;
		if (i == n) {
			r = getopt_error(p, c, args, longopts, msg, len);
			break;
		}
		p->given[where[i].table][where[i].index] = true;
		r = apply(p, specs[i], p->tables[where[i].table].opts, optarg, msg, len);
	}
	p->optind = optind;
	p->n_operands = argc > optind ? argc - optind : 0;
	for (int i = 0; i < p->n_operands && i < OPTION_MAX_OPERANDS; i++)
		p->operands[i] = args[optind + i];
	free(args);
	return r;
}

/* ---- --help ---- */

/*
 * Text with '\n' line breaks, each next line from the help column; a final
 * '\n' is not printed. Returns the column the text ends in.
 */
static int print_lines(FILE *f, const char *h, int col)
{
	for (;;) {
		const char *nl = strchr(h, '\n');
		size_t l = nl ? (size_t)(nl - h) : strlen(h);
		fwrite(h, 1, l, f);
		col += (int)l;
		if (!nl || !nl[1])
			return col;
		fprintf(f, "\n%*s", HELP_COLUMN, "");
		col = HELP_COLUMN;
		h = nl + 1;
	}
}

/*
 * The default "(default: A; B: b; C: c)": the parts after "; " (the
 * workloads' own defaults) go on the next line when they would pass the
 * 80th column.
 */
static void print_default(FILE *f, const char *d, int col)
{
	col += fprintf(f, "(default: ");
	for (const char *part = d; part;) {
		const char *next = strstr(part, "; ");
		size_t l = next ? (size_t)(next - part) : strlen(part);
		if (part != d) {
			fputc(';', f);
			if (col + 2 + (int)l + 1 > HELP_WIDTH) {
				fprintf(f, "\n%*s", HELP_COLUMN, "");
				col = HELP_COLUMN;
			} else {
				col += fprintf(f, " ") + 1;
			}
		}
		char buf[256];
		snprintf(buf, sizeof(buf), "%.*s", (int)l, part);
		col = print_lines(f, buf, col);
		part = next ? next + 2 : NULL;
	}
	fputc(')', f);
}

void option_print(FILE *f, const struct option_spec *o, unsigned indent, const char *def_help)
{
	char tag[128] = "";
	const char *d = def_help ? def_help : o->def_help ? o->def_help : o->def;
	int width = HELP_COLUMN - 1 - (int)indent, col;

	if (o->short_name)
		snprintf(tag, sizeof(tag), "-%c, ", o->short_name);
	snprintf(tag + strlen(tag), sizeof(tag) - strlen(tag), "--%s%s%s", o->name, o->value ? " " : "",
		 o->value ? o->value : "");
	if ((int)strlen(tag) > width)
		fprintf(f, "%*s%s\n%*s", (int)indent, "", tag, HELP_COLUMN, "");
	else
		fprintf(f, "%*s%-*s ", (int)indent, "", width, tag);
	col = print_lines(f, o->help, HELP_COLUMN);
	if (d) {
		if (*o->help && o->help[strlen(o->help) - 1] == '\n') {
			fprintf(f, "\n%*s", HELP_COLUMN, "");
			col = HELP_COLUMN;
		} else {
			col += fprintf(f, " ");
		}
		print_default(f, d, col);
	}
	fputc('\n', f);
}

void option_print_table(FILE *f, const struct option_spec *specs)
{
	for (const struct option_spec *o = specs; o->name; o++)
		if (!(o->flags & OPTION_HIDDEN))
			option_print(f, o, 2, NULL);
}
