/* SPDX-License-Identifier: MIT */
/* What the comparison's files (src/judge/compare*.c) share; not for other modules. */
#pragma once

#include "judge/compare.h"

/* A comparison of nothing yet: every figure NaN, no test, COMPARE_NOT_COMPARABLE. */
void compare_samples_clear(struct compare_samples *s);

/*
 * The rules that need more than one metric, over a result whose phases,
 * pairs and checks are filled: each phase's verdict that counts (against its
 * packed control, or the machine's for a control), a smaller speedup with no
 * phase slower made COMPARE_SMALLER_UNCOUNTED, and the totals counted into
 * out (see compare_run()).
 */
void compare_apply_rules(struct compare_result *out);
