/* SPDX-License-Identifier: MIT */
/*
 * Start/stop pairs among the hot thread's clock reads: a harness that times each run of its loop between two reads
 * of a clock, and does its other work between a run's stop and the next run's start, leaves that work in windows
 * no timer measures. Google Benchmark reads the elapsed time and the thread's CPU time when a run starts and when
 * it stops, sets up before each run (the code before `for (auto _ : state)`) and between PauseTiming() and
 * ResumeTiming(); the windows between consecutive reads hold both kinds alike.
 */
#include "target/clocks.h"

#include <stdlib.h>

#include "stats.h"

int clocks_read_id(int fn, const struct sample_record *r)
{
	if (fn != SAMPLE_CLOCK_GETTIME || !r->n_regs)
		return -1;
	return r->regs[0] < SAMPLE_CLOCK_IDS - 1 ? (int)r->regs[0] : SAMPLE_CLOCK_IDS - 1;
}

/* The index of the last of t[0..n) (sorted) at or before x; n when none is. */
static size_t last_at_or_before(const uint64_t *t, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t[mid] <= x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : n;
}

size_t clocks_window_of(const uint64_t *reads, size_t k, uint64_t t)
{
	size_t w = last_at_or_before(reads, k, t);

	return w + 1 < k ? w : k;
}

enum side { OUTSIDE, PAIR, GAP };

/* One mark of the hot code's in a pair or a gap: its code (CLOCKS_PAIRS_CODE_BYTES of it), its side and weight. */
struct code_at {
	uint64_t code;
	enum side side;
	uint32_t weight;
};

static int code_cmp(const void *x, const void *y)
{
	const struct code_at *a = x, *b = y;

	return a->code < b->code ? -1 : a->code > b->code;
}

/* What the hot code did on either side of one clock's pairs. */
struct sides {
	uint64_t pair_weight, gap_weight;
	double overlap;			/* of the gaps' weight, the share that ran the pairs' code */
	bool gap_fault_in_pair_code;	/* a fault the hot code took in a gap in the pairs' code (timed_code()) */
};

/*
 * Whether a block of code that holds pair and gap of the two sides' weights is the pairs' own: a quarter of their
 * weight or more, and a larger share of it than of the gaps'. A sample's time can part from the probes' by a
 * millisecond on a paravirtual guest, and where the sampler has slowed to 100 Hz one sample weighs a fifth of a
 * run's: the setup's sample that lands in a pair is not what the pairs ran.
 */
static bool timed_code(uint64_t pair, uint64_t gap, const struct sides *s)
{
	double p = (double)pair / (double)s->pair_weight, g = s->gap_weight ? (double)gap / (double)s->gap_weight : 0;

	return s->pair_weight && p >= CLOCKS_PAIRS_CODE_SHARE && p > g;
}

/*
 * The hot code's marks on each side of key's pairs (side[w] for each window), and how much of its code the gaps
 * share with the pairs: the histogram intersection of the two sides' weights by code, each side taken as a whole.
 */
static bool weigh_sides(const enum side *side, const size_t *mark_window, size_t k, const struct clocks_mark *marks,
			size_t n_marks, struct sides *s)
{
	struct code_at *at = malloc((n_marks ? n_marks : 1) * sizeof(*at));
	size_t n = 0;

	if (!at)
		return false;
	*s = (struct sides){ 0 };
	for (size_t i = 0; i < n_marks; i++) {
		size_t w = mark_window[i];
		if (w >= k || side[w] == OUTSIDE)
			continue;
		at[n++] = (struct code_at){ marks[i].ip / CLOCKS_PAIRS_CODE_BYTES, side[w], marks[i].weight };
		*(side[w] == PAIR ? &s->pair_weight : &s->gap_weight) += marks[i].weight;
	}
	qsort(at, n, sizeof(*at), code_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t pair = 0, gap = 0;
		bool gap_fault = false;
		for (j = i; j < n && at[j].code == at[i].code; j++) {
			*(at[j].side == PAIR ? &pair : &gap) += at[j].weight;
			gap_fault |= at[j].side == GAP && at[j].weight == 0;
		}
		if (pair && s->gap_weight) {
			double p = (double)pair / (double)s->pair_weight, g = (double)gap / (double)s->gap_weight;
			s->overlap += p < g ? p : g;
		}
		s->gap_fault_in_pair_code |= gap_fault && timed_code(pair, gap, s);
	}
	free(at);
	return true;
}

/*
 * Whether key's reads are a timer's starts and stops, from what the hot code did on either side: it ran in the
 * pairs, and in the gaps it ran little of its weight or other code than in the pairs, and took no fault in the
 * pairs' own code (timed_code()). A loop timed between every two consecutive reads runs alike on both sides.
 */
static bool paired(const struct sides *s)
{
	uint64_t all = s->pair_weight + s->gap_weight;

	if (!s->pair_weight || s->gap_fault_in_pair_code)
		return false;
	return (double)s->gap_weight <= CLOCKS_PAIRS_GAP_SHARE * (double)all ||
	       (s->overlap <= CLOCKS_PAIRS_OVERLAP && (double)s->pair_weight >= CLOCKS_PAIRS_TIMED_SHARE * (double)all);
}

/*
 * Where key's reads put each window w (side[w]): inside a pair after an odd number of them, in a gap after an even
 * one, outside before the first and after the last.
 */
static void sides_of(unsigned key, uint64_t count, const unsigned *keys, size_t k, enum side *side)
{
	uint64_t seen = 0;

	for (size_t w = 0; w + 1 < k; w++) {
		seen += keys[w] == key;
		side[w] = seen == 0 || seen == count ? OUTSIDE : seen % 2 ? PAIR : GAP;
	}
}

/* How key's pairs measure against their reads (pair_levels()). */
struct levels {
	size_t pairs;		/* of key's reads */
	size_t bare;		/* of those, pairs that hold nothing but their reads */
	bool spanned;		/* every pair spans two windows or more: another read among them */
	bool single;		/* every pair is one window: no other read among them */
	bool gap_work;		/* a gap, from a stop to the next start, longer than a bare pair may be */
	uint64_t work_p75;	/* the upper quartile of the time a pair's longest window held beyond its least */
};

/*
 * Whether a window of len holds nothing but a read whose own cost is own: no longer than CLOCKS_PAIRS_EMPTY_TIMES
 * times own plus CLOCKS_PAIRS_EMPTY_NS.
 */
static bool bare_window(uint64_t len, uint64_t own)
{
	return len <= CLOCKS_PAIRS_EMPTY_TIMES * own + CLOCKS_PAIRS_EMPTY_NS;
}

/*
 * Which of key's pairs hold nothing but their reads (count of them in reads[0..k), keys[] in time order): no window
 * in a pair is longer than a bare one (bare_window()). A pair that spans two windows or more has a read's own cost
 * in it, its least window (another clock read at the same start or stop: one read can cost several times another, a
 * syscall's clock beside a vDSO one, a first call's faults); a pair of one window is weighed against the least
 * window of all, least.
 */
static bool pair_levels(unsigned key, uint64_t count, const unsigned *keys, const uint64_t *reads, size_t k,
			uint64_t least, struct levels *l)
{
	size_t start = k, stop = k, seen = 0;
	uint64_t *work = malloc((count / 2 ? count / 2 : 1) * sizeof(*work));

	*l = (struct levels){ .spanned = true, .single = true };
	if (!work)
		return false;
	for (size_t i = 0; i < k; i++) {
		if (keys[i] != key)
			continue;
		if (seen++ % 2 == 0) {
			start = i;
			l->gap_work |= stop < k && !bare_window(reads[i] - reads[stop], least);
			continue;
		}
		stop = i;
		uint64_t own = UINT64_MAX, most = 0;
		for (size_t w = start; w < i; w++) {
			uint64_t len = reads[w + 1] - reads[w];
			own = len < own ? len : own;
			most = len > most ? len : most;
		}
		l->spanned &= i - start >= 2;
		l->single &= i - start == 1;
		own = i - start >= 2 ? own : least;
		work[l->pairs++] = most > own ? most - own : 0;
		l->bare += bare_window(most, own);
	}
	if (l->pairs) {
		qsort(work, l->pairs, sizeof(*work), stats_cmp_u64);
		l->work_p75 = work[(3 * l->pairs + 3) / 4 - 1];	/* the least that three in four are at or below */
	}
	free(work);
	return true;
}

/* Three pairs in four or more hold nothing but their reads: one may hold a preemption. */
static bool mostly_bare(const struct levels *l)
{
	return l->pairs && 4 * l->bare >= 3 * l->pairs;
}

/*
 * Empty pairs: every pair spans two windows or more, and they are mostly bare: with the hot code in the gaps, a
 * timer around a loop the compiler deleted.
 */
static bool empty_pairs(const struct levels *l)
{
	return l->spanned && mostly_bare(l);
}

/*
 * A total's reads around back-to-back timed reps, not a timer: three pairs or more hold nothing but their reads, and
 * at most two hold more. Anchored at the total's first read, its pairs are the setup before the first rep, the
 * instants between a rep's stop and the next start, and the end after the last, while the reps lie in the gaps.
 */
static bool shifted_pairs(const struct levels *l)
{
	return l->bare >= 3 && l->pairs - l->bare <= 2;
}

bool clocks_pairs(const unsigned *keys, const uint64_t *reads, size_t k, const struct clocks_mark *marks,
		  const size_t *mark_window, size_t n_marks, bool *gap, struct sample_clocks *out)
{
	uint64_t count[CLOCKS_KEYS] = { 0 }, least = UINT64_MAX;
	bool adopted[CLOCKS_KEYS] = { false }, any = false;
	enum side *side = calloc(k ? k : 1, sizeof(*side));	/* OUTSIDE where sides_of() writes none */
	bool *timed = calloc(k ? k : 1, sizeof(*timed));
	bool ok = side && timed;

	out->paired_fn = out->paired_id = -1;
	for (size_t i = 0; i < k; i++) {
		count[keys[i]]++;
		if (i + 1 < k && reads[i + 1] - reads[i] < least)
			least = reads[i + 1] - reads[i];
	}
	for (unsigned key = 0; ok && key < CLOCKS_KEYS; key++) {
		if (count[key] < CLOCKS_PAIRS_MIN_READS || count[key] % 2)
			continue;
		struct sides s;
		struct levels l;
		sides_of(key, count[key], keys, k, side);
		if (!(ok = weigh_sides(side, mark_window, k, marks, n_marks, &s) &&
			   pair_levels(key, count[key], keys, reads, k, least, &l)))
			continue;
		bool empty = !s.pair_weight && s.gap_weight && empty_pairs(&l);
		/* Bare one-window pairs (three in four) with work between them: a deleted loop's timer, or a total's. */
		if (!s.pair_weight && l.single && mostly_bare(&l) && l.gap_work && count[key] > out->bare_reads)
			out->bare_reads = count[key];
		if (!empty && (!paired(&s) || shifted_pairs(&l)))
			continue;
		adopted[key] = any = true;
		if (count[key] > out->paired_reads) {
			out->pairs_empty = empty;
			out->pair_work_p75_ns = empty ? l.work_p75 : 0;
			out->paired_fn = (int)(key / (SAMPLE_CLOCK_IDS + 1));
			out->paired_id = (int)(key % (SAMPLE_CLOCK_IDS + 1)) - 1;
			out->paired_reads = count[key];
			uint64_t all = s.pair_weight + s.gap_weight;
			out->gap_weight_share = all ? (double)s.gap_weight / (double)all : 0;
			out->gap_code_overlap = s.overlap;
		}
	}
	/*
	 * A window lies in no timer's measure where every clock read twice or more around it is read in pairs and has
	 * it in a gap or outside its pairs (the setup before a harness's first run): a clock whose reads are not known
	 * to pair may be timing anything between them.
	 */
	for (unsigned key = 0; ok && any && key < CLOCKS_KEYS; key++) {
		if (count[key] < 2)
			continue;
		sides_of(key, count[key], keys, k, side);
		for (size_t w = 0; w + 1 < k; w++)
			timed[w] |= side[w] == PAIR || (side[w] == GAP && !adopted[key]);
	}
	for (size_t w = 0; ok && any && w + 1 < k; w++) {
		gap[w] = !timed[w];
		out->gap_windows += gap[w];
	}
	out->pairs_known = ok;
	free(side);
	free(timed);
	return ok;
}
