/* SPDX-License-Identifier: MIT */
/* When --iters auto's warm-up is steady: a pure rule over the passes it has timed (measure/warmup.c). */
#pragma once

#include <stdbool.h>

struct warm_rule {
	double gain;		/* a pass this much (relative) faster than the best before it is progress */
	unsigned patience;	/* steady after this many passes in a row without progress... */
	double settle_ns;	/* ...and, when > 0, once the fastest pass is at or below this ns per access */
};

struct warm_state {
	double best;		/* the pass that last made progress, ns per access */
	double low;		/* the fastest pass so far */
	unsigned stale;		/* passes since the last progress */
	unsigned passes;
};

void warm_start(struct warm_state *s);

/* Feed one pass's ns per access; true once the warm-up is steady under rule r. */
bool warm_pass(struct warm_state *s, const struct warm_rule *r, double ns);
