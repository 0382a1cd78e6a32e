/* SPDX-License-Identifier: MIT */
/* What every check uses: adding a check, its evidence, and the words of its message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "judge/analysis_internal.h"

const char *checks_phases_word(size_t n)
{
	return n == 1 ? "phase" : "phases";
}

__attribute__((format(printf, 4, 5)))
struct analysis_check *checks_add(struct analysis *a, const char *id, enum check_status st, const char *fmt,
				   ...)
{
	static struct analysis_check overflow;
	struct analysis_check *c = a->n_checks < MAX_CHECKS ? &a->checks[a->n_checks++] : &overflow;
	va_list ap;

	memset(c, 0, sizeof(*c));
	c->id = id;
	c->status = st;
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
	return c;
}

void checks_evidence(struct analysis_check *c, const char *key, double value)
{
	analysis_evidence_add(&c->evidence, key, value);
}
