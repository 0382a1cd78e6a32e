/* SPDX-License-Identifier: MIT */
/* The auto warm-up's stopping rule (measure/warmup.c) on warm-ups timed here, pass by pass. */
#include "check.h"
#include "measure/warmup.h"

#include <stddef.h>

/* Where a rule fed these passes calls the warm-up steady (1-based), or 0 when it never does. */
static unsigned steady_at(const struct warm_rule *r, const double *ns, size_t n)
{
	struct warm_state s;

	warm_start(&s);
	for (size_t i = 0; i < n; i++)
		if (warm_pass(&s, r, ns[i]))
			return s.passes;
	return 0;
}

/*
 * A packed control (8 MiB, 65,536 slots at 128 B, measured at about 17.5 ns)
 * revisited for its second pass after the 4 KiB and 2 MiB chases of 256 MiB,
 * ns per access of each warm-up pass, default runs on an AMD EPYC guest: the
 * first five passes of one re-warm, which the former rule stopped there at
 * 144 ns, then the fall another re-warm went on to from its own plateau.
 */
static const double plateau[] = { 146.0, 128.3, 142.7, 146.1, 144.0, 98.7, 54.8, 30.0, 20.5,
				  18.2, 17.8, 17.7, 17.4, 17.4, 17.2, 17.6, 17.4, 17.7 };
/* The 2 MiB chase's kept allocation, measured at 35 ns: one pass refills, then it is steady. */
static const double refill[] = { 41.0, 35.6, 35.1, 35.4, 35.3, 35.2 };

int main(void)
{
	const struct warm_rule first = { .gain = 0.005, .patience = 3, .settle_ns = 0 };
	const struct warm_rule packed = { .gain = 0.005, .patience = 3, .settle_ns = 2 * 17.5 };
	const struct warm_rule chase2m = { .gain = 0.005, .patience = 3, .settle_ns = 2 * 35.0 };
	size_t np = sizeof(plateau) / sizeof(*plateau), nr = sizeof(refill) / sizeof(*refill);

	/* Without a level to come back to, the plateau passes for steady after five passes at 144 ns. */
	CHECK(steady_at(&first, plateau, np) == 5, "%u", steady_at(&first, plateau, np));
	/* With the allocation's level known, it warms through the plateau and stops at 17 ns. */
	unsigned at = steady_at(&packed, plateau, np);
	CHECK(at >= 12 && plateau[at - 1] < 2 * 17.5, "steady at pass %u", at);
	/* A refill that is back at once costs nothing more than before. */
	CHECK(steady_at(&chase2m, refill, nr) == steady_at(&first, refill, nr), "%u vs %u",
	      steady_at(&chase2m, refill, nr), steady_at(&first, refill, nr));
	/* Still getting faster: never steady, so the caller's caps end it. */
	const double falling[] = { 100, 90, 81, 73, 66, 59, 53, 48 };
	CHECK(steady_at(&first, falling, 8) == 0, "%u", steady_at(&first, falling, 8));
	/* A host slower for good than the level: not steady (the cap ends it, and the pass says unsettled). */
	const double slow[] = { 90, 88, 89, 90, 88, 89 };
	CHECK(steady_at(&chase2m, slow, 6) == 0, "%u", steady_at(&chase2m, slow, 6));
	/* Progress is gain past the best before: 0.4 % faster is not, so patience runs out at pass 4. */
	const double flat[] = { 50, 49.9, 49.85, 49.8 };
	CHECK(steady_at(&first, flat, 4) == 4, "%u", steady_at(&first, flat, 4));
	/* ...and with a level, the fastest pass counts, not the one that last made progress. */
	const struct warm_rule tight = { .gain = 0.005, .patience = 3, .settle_ns = 49.82 };
	CHECK(steady_at(&tight, flat, 4) == 4, "%u", steady_at(&tight, flat, 4));
	return check_finish();
}
