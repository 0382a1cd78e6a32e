/* SPDX-License-Identifier: MIT */
/* The chase chain: single cycle for many sizes and seeds, coloring, determinism, and self-checks that reject bad chains. */
#include <stdint.h>
#include <stdlib.h>

#include "measure/chain.h"
#include "check.h"

static void *region_for(const struct chain_geom *g, uint64_t *bytes)
{
	*bytes = g->slots * g->stride_bytes;
	return aligned_alloc(4096, (*bytes + 4095) & ~4095ull);
}

static void set_next(void *base, const struct chain_geom *g, uint64_t i, uint64_t j)
{
	*(void **)((char *)base + chain_slot_offset(g, i)) = (char *)base + chain_slot_offset(g, j);
}

static void test_single_cycle_many(void)
{
	static const uint64_t strides[] = { 8, 64, 128, 512, 4096, 8192 };
	static const uint64_t slot_counts[] = { 2, 3, 16, 17, 100, 1000, 4096, 65537 };

	for (size_t s = 0; s < sizeof(strides) / sizeof(strides[0]); s++) {
		for (size_t n = 0; n < sizeof(slot_counts) / sizeof(slot_counts[0]); n++) {
			for (uint64_t seed = 1; seed <= 5; seed++) {
				for (int layout = 0; layout < 2; layout++) {
					struct chain_geom g = { strides[s], slot_counts[n], (enum chase_layout)layout };
					uint64_t bytes;
					if (g.slots * g.stride_bytes > (64u << 20))
						continue;
					void *base = region_for(&g, &bytes);
					void *start = chain_build(base, &g, seed);
					struct self_check c1, c2;
					chain_check_single_cycle(base, bytes, start, g.slots, &c1);
					CHECK(c1.status == CHECK_PASS, "stride %llu slots %llu seed %llu layout %d: %s",
					      (unsigned long long)g.stride_bytes, (unsigned long long)g.slots,
					      (unsigned long long)seed, layout, c1.message);
					chain_check_strides(start, g.slots, &c2);
					if (g.slots >= 17)
						CHECK(c2.status == CHECK_PASS, "strides slots %llu: %s",
						      (unsigned long long)g.slots, c2.message);
					else
						CHECK(c2.status == CHECK_SKIP, "few slots skip: %s", c2.message);
					free(base);
				}
			}
		}
	}
}

static void test_deterministic(void)
{
	struct chain_geom g = { 4096, 1000, LAYOUT_COLORED };
	uint64_t bytes;
	char *a = region_for(&g, &bytes), *b = region_for(&g, &bytes), *c = region_for(&g, &bytes);
	void *sa = chain_build(a, &g, 42), *sb = chain_build(b, &g, 42), *sc = chain_build(c, &g, 43);
	int same = 1, differ = 0;

	for (uint64_t i = 0; i < g.slots; i++) {
		uint64_t off = chain_slot_offset(&g, i);
		uint64_t na = (uint64_t)(*(char **)(a + off) - a), nb = (uint64_t)(*(char **)(b + off) - b);
		uint64_t nc = (uint64_t)(*(char **)(c + off) - c);
		same &= na == nb;
		differ += na != nc;
	}
	CHECK(same, "same seed, same chain");
	CHECK(differ > 900, "another seed changes almost every link (%d of 1000)", differ);
	(void)sa, (void)sb, (void)sc;
	free(a), free(b), free(c);
}

static void test_coloring(void)
{
	struct chain_geom col = { 4096, 64 * 512, LAYOUT_COLORED }, al = { 4096, 64, LAYOUT_ALIGNED };
	int seen[64] = { 0 };
	unsigned distinct_l2 = 0;
	static unsigned char l2_sets[2048];

	/* Aligned: every slot at its page start. */
	for (uint64_t i = 0; i < al.slots; i++)
		CHECK(chain_slot_offset(&al, i) == i * 4096, "aligned slot %llu", (unsigned long long)i);
	/* Colored: 64 consecutive slots use each of the 64 line offsets of a page once. */
	for (uint64_t i = 0; i < 64; i++) {
		uint64_t off = chain_slot_offset(&col, i);
		CHECK(off / 4096 == i && off % 64 == 0, "slot %llu stays in its page, line aligned", (unsigned long long)i);
		seen[(off % 4096) / 64]++;
	}
	for (int k = 0; k < 64; k++)
		CHECK(seen[k] == 1, "line offset %d used %d times", k, seen[k]);
	/* On 2 MiB pages address bits 6..16 (a 2048-set L2) must still all be used. */
	for (uint64_t i = 0; i < col.slots; i++) {
		unsigned set = (unsigned)((chain_slot_offset(&col, i) >> 6) & 2047);
		if (!l2_sets[set]++)
			distinct_l2++;
	}
	CHECK(distinct_l2 == 2048, "colored slots cover %u of 2048 sets", distinct_l2);
	/* Small strides have no room to rotate. */
	struct chain_geom s64 = { 64, 100, LAYOUT_COLORED };
	CHECK(chain_slot_offset(&s64, 7) == 7 * 64, "64 B stride is not rotated");
}

static void test_rejects_rotation(void)
{
	struct chain_geom g = { 4096, 256, LAYOUT_ALIGNED };
	uint64_t bytes;
	void *base = region_for(&g, &bytes);
	struct self_check c1, c2;

	for (uint64_t i = 0; i < g.slots; i++)
		set_next(base, &g, i, (i + 1) % g.slots);
	chain_check_single_cycle(base, bytes, base, g.slots, &c1);
	CHECK(c1.status == CHECK_PASS, "a rotation is one cycle: %s", c1.message);
	chain_check_strides(base, g.slots, &c2);
	CHECK(c2.status == CHECK_FAIL, "a rotation has constant strides: %s", c2.message);
	free(base);
}

static void test_rejects_multi_cycle(void)
{
	struct chain_geom g = { 64, 1000, LAYOUT_ALIGNED };
	uint64_t bytes;
	void *base = region_for(&g, &bytes);
	struct chain_rng rng = { 7 };
	uint64_t *perm = malloc(g.slots * sizeof(*perm));
	struct self_check c;
	int failures = 0;

	/* A random "next" (Fisher-Yates, not Sattolo) almost surely has several cycles. */
	for (int trial = 0; trial < 20; trial++) {
		for (uint64_t i = 0; i < g.slots; i++)
			perm[i] = i;
		for (uint64_t i = g.slots - 1; i > 0; i--) {
			uint64_t j = chain_rng_below(&rng, i + 1), t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
		for (uint64_t i = 0; i < g.slots; i++)
			set_next(base, &g, i, perm[i]);
		/* Count the cycle through slot 0 independently of the check. */
		uint64_t len = 1;
		for (uint64_t k = perm[0]; k != 0; k = perm[k])
			len++;
		chain_check_single_cycle(base, bytes, base, g.slots, &c);
		CHECK((c.status == CHECK_PASS) == (len == g.slots), "trial %d: cycle of %llu, check says %s", trial,
		      (unsigned long long)len, c.message);
		failures += c.status == CHECK_FAIL;
	}
	CHECK(failures >= 15, "random next pointers rejected %d of 20 times", failures);

	/* Two explicit cycles. */
	for (uint64_t i = 0; i < g.slots; i++)
		set_next(base, &g, i, i < 500 ? (i * 7 + 3) % 500 : 500 + ((i - 500) * 7 + 3) % 500);
	chain_check_single_cycle(base, bytes, base, g.slots, &c);
	CHECK(c.status == CHECK_FAIL, "two cycles: %s", c.message);

	/* A pointer out of the region. */
	for (uint64_t i = 0; i < g.slots; i++)
		set_next(base, &g, i, (i + 1) % g.slots);
	*(void **)((char *)base + 5 * 64) = (char *)base + bytes + 64;
	chain_check_single_cycle(base, bytes, base, g.slots, &c);
	CHECK(c.status == CHECK_FAIL, "escape: %s", c.message);
	free(perm);
	free(base);
}

static void test_rng(void)
{
	struct chain_rng r = { 1 };
	unsigned hist[10] = { 0 };

	for (int i = 0; i < 100000; i++) {
		uint64_t v = chain_rng_below(&r, 10);
		CHECK(v < 10, "below bound");
		hist[v < 10 ? v : 0]++;
	}
	for (int i = 0; i < 10; i++)
		CHECK(hist[i] > 9500 && hist[i] < 10500, "bucket %d: %u", i, hist[i]);
}

int main(void)
{
	test_single_cycle_many();
	test_deterministic();
	test_coloring();
	test_rejects_rotation();
	test_rejects_multi_cycle();
	test_rng();
	return check_finish();
}
