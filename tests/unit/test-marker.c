/* SPDX-License-Identifier: MIT */
/* The marker protocol parser (golden table) and the walk of someone else's chain. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "measure/chain.h"
#include "check.h"
#include "target/marker.h"

static const struct {
	int line;
	const char *text;
	int want;		/* 0 or -EINVAL */
	int type;		/* enum marker_type when 0 */
	const char *err_has;	/* substring of the reason when -EINVAL */
} rows[] = {
	{ __LINE__, "phase begin chase4k", 0, MARKER_BEGIN, NULL },
	{ __LINE__, "phase begin a.b:c/d-e_f accesses=100 region=0x1000,8192 page=4k chain=0x1000 slots=2", 0,
	  MARKER_BEGIN, NULL },
	{ __LINE__, "phase begin x kind=throughput", 0, MARKER_BEGIN, NULL },
	{ __LINE__, "phase begin x kind=latency\r", 0, MARKER_BEGIN, NULL },
	{ __LINE__, "phase end", 0, MARKER_END, NULL },
	{ __LINE__, "phase end ns=123 accesses=5 timings=5", 0, MARKER_END, NULL },
	{ __LINE__, "enable", 0, MARKER_ENABLE, NULL },
	{ __LINE__, "disable", 0, MARKER_DISABLE, NULL },
	{ __LINE__, "ping", 0, MARKER_PING, NULL },
	{ __LINE__, "enable cycles", -EINVAL, 0, "per-event" },
	{ __LINE__, "", -EINVAL, 0, "empty" },
	{ __LINE__, "   ", -EINVAL, 0, "empty" },
	{ __LINE__, "stop", -EINVAL, 0, "unknown command 'stop'" },
	{ __LINE__, "phase", -EINVAL, 0, "phase begin NAME" },
	{ __LINE__, "phase middle", -EINVAL, 0, "'phase middle'" },
	{ __LINE__, "phase begin", -EINVAL, 0, "no name" },
	{ __LINE__, "phase begin bad$name", -EINVAL, 0, "bad name" },
	{ __LINE__, "phase begin 0123456789012345678901234567890123456789012345678901234567890123", -EINVAL, 0,
	  "bad name" },
	{ __LINE__, "phase begin x accesses=0", -EINVAL, 0, "accesses '0'" },
	{ __LINE__, "phase begin x accesses=-1", -EINVAL, 0, "accesses '-1'" },
	{ __LINE__, "phase begin x accesses=99999999999999999999", -EINVAL, 0, "accesses" },
	{ __LINE__, "phase begin x accesses=1 accesses=2", -EINVAL, 0, "twice" },
	{ __LINE__, "phase begin x region=0x1000", -EINVAL, 0, "not ADDR,LEN" },
	{ __LINE__, "phase begin x region=0x1000,0", -EINVAL, 0, "region '0x1000,0'" },
	{ __LINE__, "phase begin x region=0xffffffffffffffff,2", -EINVAL, 0, "region" },
	{ __LINE__, "phase begin x region=0xzz,2", -EINVAL, 0, "region" },
	{ __LINE__, "phase begin x page=3m", -EINVAL, 0, "page '3m'" },
	{ __LINE__, "phase begin x chain=0x1000", -EINVAL, 0, "chain needs region" },
	{ __LINE__, "phase begin x region=0x1000,4096 chain=0x3000", -EINVAL, 0, "outside region" },
	{ __LINE__, "phase begin x region=0x1000,4096 chain=0x1ffc", -EINVAL, 0, "outside region" },
	{ __LINE__, "phase begin x slots=1", -EINVAL, 0, "slots '1'" },
	{ __LINE__, "phase begin x kind=fast", -EINVAL, 0, "kind 'fast'" },
	{ __LINE__, "phase begin x ns=5", -EINVAL, 0, "'ns' belongs to phase end" },
	{ __LINE__, "phase end region=0x1000,4096", -EINVAL, 0, "'region' belongs to phase begin" },
	{ __LINE__, "phase end timings=0", -EINVAL, 0, "timings '0'" },
	{ __LINE__, "phase end bogus=1", -EINVAL, 0, "unknown key 'bogus'" },
	{ __LINE__, "phase end =1", -EINVAL, 0, "KEY=VALUE" },
	{ __LINE__, "phase end novalue", -EINVAL, 0, "KEY=VALUE" },
};

/* A region of n slots, one per stride, linked by next[i] (indices), as another process would hold it. */
static uint64_t *fake_region(uint64_t base, size_t n, size_t stride, const size_t *next)
{
	uint64_t *mem = calloc(n * stride / 8, 8);
	for (size_t i = 0; i < n; i++)
		mem[i * stride / 8] = base + next[i] * stride;
	return mem;
}

static void test_foreign_chain(void)
{
	enum { N = 64 };
	const uint64_t base = 0x7f0000000000ull;
	const size_t stride = 4096;
	size_t next[N];
	struct self_check out[2];
	struct chain_walk walk;

	/* A random single cycle (Sattolo): both checks pass and the cycle holds every slot. */
	size_t order[N];
	uint64_t s = 99;
	for (size_t i = 0; i < N; i++)
		order[i] = i;
	for (size_t i = N - 1; i > 0; i--) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		size_t j = (size_t)((s >> 33) % i), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < N; i++)
		next[order[i]] = order[(i + 1) % N];
	uint64_t *mem = fake_region(base, N, stride, next);
	CHECK(chain_check_foreign(mem, base, N * stride, base, 0, out, &walk) == 0, "walk");
	CHECK(out[0].status == CHECK_PASS && out[1].status == CHECK_PASS, "random cycle passes: %s / %s", out[0].message,
	      out[1].message);
	CHECK(walk.cycle_slots == N && walk.expected_slots == N, "cycle %llu of %llu", (unsigned long long)walk.cycle_slots,
	      (unsigned long long)walk.expected_slots);
	CHECK_NEAR(walk.pages_covered, 1.0, 1e-9);
	CHECK(walk.span_bytes == (N - 1) * stride + 8, "span %llu", (unsigned long long)walk.span_bytes);
	CHECK(walk.aligned, "every slot at its page start is the aligned layout");
	/* The same chain in the first quarter of a region four times its size: it spans a quarter. */
	uint64_t *big = calloc(4 * N * stride / 8, 8);
	memcpy(big, mem, N * stride);
	CHECK(chain_check_foreign(big, base, 4 * N * stride, base, N, out, &walk) == 0 &&
		      walk.span_bytes == (N - 1) * stride + 8 && fabs(walk.pages_covered - 0.25) < 1e-9,
	      "a quarter: span %llu, covered %g", (unsigned long long)walk.span_bytes, walk.pages_covered);
	free(big);
	CHECK(chain_check_foreign(mem, base, N * stride, base, N + 1, out, &walk) == 0 && out[0].status == CHECK_FAIL,
	      "declared slots that the cycle does not hold fail");
	free(mem);

	/* The same cycle with colored slots (line i mod 64 of page i): not aligned. */
	uint64_t *colored = calloc(N * stride / 8, 8);
	for (size_t i = 0; i < N; i++)
		colored[(i * stride + (i * 64) % stride) / 8] = base + next[i] * stride + (next[i] * 64) % stride;
	CHECK(chain_check_foreign(colored, base, N * stride, base, N, out, &walk) == 0 && out[0].status == CHECK_PASS &&
	      !walk.aligned, "colored: %s, aligned %d", out[0].message, walk.aligned);
	free(colored);

	/* Constant stride: one cycle, but the prefetcher's favourite. */
	for (size_t i = 0; i < N; i++)
		next[i] = (i + 1) % N;
	mem = fake_region(base, N, stride, next);
	chain_check_foreign(mem, base, N * stride, base, N, out, &walk);
	CHECK(out[0].status == CHECK_PASS && out[1].status == CHECK_FAIL, "constant stride: %s", out[1].message);
	free(mem);

	/* Random for its first 20 steps, then sequential: the whole walk is judged, not its first 16 steps. */
	for (size_t i = 0; i < 20; i++)
		order[i] = N - 1 - i;	/* 63, 62 ... 44: strides of -4096, constant too, but 19 steps */
	order[19] = 50;
	order[13] = 44;	/* 63 .. 51, 44, 49 .. 45, 50: no run of 16 in the first 20 steps */
	for (size_t i = 20; i < N; i++)
		order[i] = i - 20;	/* then 0, 1, 2 ... 43 */
	for (size_t i = 0; i < N; i++)
		next[order[i]] = order[(i + 1) % N];
	mem = fake_region(base, N, stride, next);
	chain_check_foreign(mem, base, N * stride, base + order[0] * stride, N, out, &walk);
	CHECK(out[0].status == CHECK_PASS && out[1].status == CHECK_FAIL && strstr(out[1].message, "steps 20 to"),
	      "rotated after step 16: %s / %s", out[0].message, out[1].message);
	free(mem);

	/* Two slots half a region apart, no slots declared: bytes / gap agrees, the coverage does not. */
	uint64_t *two = calloc(N * stride / 8, 8);
	two[0] = base + N / 2 * stride;
	two[N / 2 * stride / 8] = base;
	chain_check_foreign(two, base, N * stride, base, 0, out, &walk);
	CHECK(walk.cycle_slots == 2 && walk.expected_slots == 2 && out[0].status == CHECK_FAIL &&
	      strstr(out[0].message, "sliver"), "2 slots: %s", out[0].message);
	free(two);

	/* Eight separate cycles of 8: the walk from slot 0 covers an eighth. */
	for (size_t i = 0; i < N; i++)
		next[i] = i / 8 * 8 + (i % 8 + 3) % 8;
	mem = fake_region(base, N, stride, next);
	chain_check_foreign(mem, base, N * stride, base, 0, out, &walk);
	CHECK(out[0].status == CHECK_FAIL && walk.cycle_slots == 8, "small cycles: %s (%llu)", out[0].message,
	      (unsigned long long)walk.cycle_slots);
	free(mem);

	/* A pointer out of the region, and a start that is not on its cycle (a rho: 0 -> 1 -> 2 -> 3 -> 1). */
	for (size_t i = 0; i < N; i++)
		next[i] = (i + 1) % N;
	mem = fake_region(base, N, stride, next);
	mem[2 * stride / 8] = base - 8;
	chain_check_foreign(mem, base, N * stride, base, 0, out, &walk);
	CHECK(out[0].status == CHECK_FAIL && strstr(out[0].message, "outside"), "escape: %s", out[0].message);
	mem[2 * stride / 8] = base + 3 * stride;
	mem[3 * stride / 8] = base + 1 * stride;
	chain_check_foreign(mem, base, N * stride, base, 0, out, &walk);
	CHECK(out[0].status == CHECK_FAIL && strstr(out[0].message, "not on a cycle"), "rho: %s", out[0].message);
	free(mem);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct marker_msg m;
		char err[200] = "";
		int rc = marker_parse(rows[i].text, strlen(rows[i].text), &m, err, sizeof(err));
		CHECK_ROW(rows[i].line, rc == rows[i].want, "rc %d want %d (%s)", rc, rows[i].want, err);
		if (rc == 0 && rows[i].want == 0)
			CHECK_ROW(rows[i].line, (int)m.type == rows[i].type, "type %d want %d", m.type, rows[i].type);
		if (rows[i].err_has)
			CHECK_ROW(rows[i].line, strstr(err, rows[i].err_has) != NULL, "reason '%s' lacks '%s'", err,
				  rows[i].err_has);
	}
	/* The values of a full begin line. */
	struct marker_msg m;
	char err[200];
	const char *full = "phase begin chase2m accesses=1000000 region=0x7f0000200000,67108864 page=2m "
			   "chain=0x7f0000200040 slots=16384 kind=throughput";
	CHECK(marker_parse(full, strlen(full), &m, err, sizeof(err)) == 0, "full: %s", err);
	CHECK(strcmp(m.name, "chase2m") == 0 && m.accesses == 1000000 && m.region_addr == 0x7f0000200000ull &&
	      m.region_bytes == 67108864 && m.has_page && m.page.bytes == (2u << 20) && m.chain_addr == 0x7f0000200040ull &&
	      m.slots == 16384 && m.throughput, "full values");
	/* Not NUL-terminated input: only len bytes are read. */
	CHECK(marker_parse("pingXXXX", 4, &m, err, sizeof(err)) == 0 && m.type == MARKER_PING, "length-bounded");
	char nul[] = "ping\0x";
	CHECK(marker_parse(nul, 6, &m, err, sizeof(err)) == -EINVAL, "a NUL inside is refused");
	char big[MARKER_LINE_MAX + 2];
	memset(big, 'a', sizeof(big));
	CHECK(marker_parse(big, sizeof(big), &m, err, sizeof(err)) == -EINVAL && strstr(err, "longer"), "overlong");
	test_foreign_chain();
	return check_finish();
}
