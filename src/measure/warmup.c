/* SPDX-License-Identifier: MIT */
/*
 * The auto warm-up's stopping rule. Passes around the structure run until
 * `patience` of them in a row are not `gain` faster than the best before
 * them. A plateau defeats that alone: a kept allocation revisited after
 * other phases (the packed control, 8 MiB, after two 256 MiB chases) read
 * 140 ns for three to six passes here, then fell over ten more to the 17 ns
 * it had been measured at; stopped on the plateau, its second pass timed
 * DRAM, not the control. So where the allocation's level is known
 * (settle_ns), steady also needs the best pass back at or below it; the
 * caller's pass and time caps end a warm-up that never gets there.
 */
#include "measure/warmup.h"

#include <math.h>

void warm_start(struct warm_state *s)
{
	s->best = INFINITY;
	s->low = INFINITY;
	s->stale = 0;
	s->passes = 0;
}

bool warm_pass(struct warm_state *s, const struct warm_rule *r, double ns)
{
	s->passes++;
	if (ns < s->low)
		s->low = ns;
	if (ns < s->best * (1 - r->gain)) {
		s->best = ns;
		s->stale = 0;
		return false;
	}
	return ++s->stale >= r->patience && (r->settle_ns <= 0 || s->low <= r->settle_ns);
}
