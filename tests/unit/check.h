/* SPDX-License-Identifier: MIT */
/* Minimal unit-test helpers: each failed CHECK prints file:line and the test exits 1 at the end. */
#pragma once

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		check_count++;                                                  \
		if (!(cond)) {                                                  \
			check_failures++;                                       \
			fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, \
				__LINE__, #cond);                               \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
		}                                                               \
	} while (0)

/* Golden-table rows carry their own __LINE__ so a failure points at the row. */
#define CHECK_ROW(line, cond, ...)                                              \
	do {                                                                    \
		check_count++;                                                  \
		if (!(cond)) {                                                  \
			check_failures++;                                       \
			fprintf(stderr, "%s:%d (row at line %d): CHECK(%s) failed: ", \
				__FILE__, __LINE__, (line), #cond);             \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
		}                                                               \
	} while (0)

#define CHECK_NEAR(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol), \
				    "%g vs %g (tol %g)", (double)(a), (double)(b), (double)(tol))

/* Exit code meson treats as "skipped". */
#define CHECK_EXIT_SKIP 77

static inline int check_finish(void)
{
	fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
	return check_failures ? 1 : 0;
}
