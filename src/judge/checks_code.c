/* SPDX-License-Identifier: MIT */
/*
 * What the hot loop's machine code says it measures (target/code.c): whether its loads wait on one another, and
 * whether it was built -O0 where the ELF does not say.
 */
#include <stdio.h>
#include <string.h>

#include "judge/analysis_internal.h"

/* A declared latency phase is taken for the hot loop's when the hot function holds at least this share of the
 * cpu-clock samples in user code (its own and its libraries', not the kernel's faults or the vDSO's clock reads):
 * a hottest loop with less may be the benchmark's setup, not what it times. */
#define DECLARED_HOT_SHARE 0.5

/* A hot loop with a frame pointer, a variable kept in a stack slot and this share of its instructions loading or
 * storing stack slots is -O0 code: optimised loops keep their variables in registers. */
#define UNOPTIMISED_STACK_SHARE (1.0 / 3.0)

/* The hot function's share of the cpu-clock samples in user code. */
static double hot_user_share(const struct sample_profile *p)
{
	uint64_t user = p->clock_own + p->clock_libs;

	return user ? (double)p->hot_exe_count / (double)user : 0;
}

/* Declared phases of each kind: latency (accesses= without kind=throughput) and throughput. */
static void declared_kinds(const struct analysis_input *in, size_t *latency, size_t *throughput)
{
	*latency = *throughput = 0;
	for (size_t i = 0; i < in->n; i++) {
		const struct phase_result *r = &in->results[i];
		if (!r->target || !r->target->has_accesses)
			continue;
		if (r->spec.throughput)
			(*throughput)++;
		else
			(*latency)++;
	}
}

/* The reason the code says nothing of the loads, or NULL when it does. */
static const char *unknown_why(const struct sample_profile *p, char *buf, size_t len)
{
	const struct sample_code *code = &p->code;

	if (!p->hot_hi)
		return "no hot loop was located (see hot_loop)";
	if (!code->decoded) {
		snprintf(buf, len, "the hot loop's code was not decoded: %s",
			 *code->error ? code->error : "no reason given");
		return buf;
	}
	if (!code->body_recorded)
		return "this report was written before tlbprof followed the hot loop's loads";
	if (!code->body_end) {
		snprintf(buf, len, "no jump in the hot loop's code (0x%llx-0x%llx, or %u bytes past it) leads back into it, "
			 "so its body is unknown", (unsigned long long)code->loop_start, (unsigned long long)code->loop_end,
			 SAMPLE_CODE_LATCH_BYTES);
		return buf;
	}
	if (!code->body_followed) {
		snprintf(buf, len, "the hot loop's body (0x%llx-0x%llx) is %u instructions, more than the %u followed "
			 "(an interpreter's dispatch loop)", (unsigned long long)code->body_start,
			 (unsigned long long)code->body_end, code->body_instructions, SAMPLE_CODE_MAX_BODY);
		return buf;
	}
	if (code->calls) {
		snprintf(buf, len, "the hot loop's body (0x%llx-0x%llx) calls out at 0x%llx, and the loads of the code "
			 "it calls are not followed", (unsigned long long)code->body_start,
			 (unsigned long long)code->body_end, (unsigned long long)code->call_at);
		return buf;
	}
	if (!code->loads && !code->stores) {
		snprintf(buf, len, "the hot loop's body (0x%llx-0x%llx) reads and writes nothing but its own variables "
			 "(stack slots, cells at fixed addresses)", (unsigned long long)code->body_start,
			 (unsigned long long)code->body_end);
		return buf;
	}
	return NULL;
}

/*
 * A latency benchmark chains its loads (p = *p: each address comes from the
 * last load), so that each access waits for the one before. Loads whose
 * addresses come from a counter, an index array or a generator overlap, as
 * many as the core keeps in flight, and the time per access is a
 * throughput, several times below the latency of one access and the page
 * walk behind it. That is right for a scan or GUPS and wrong for a latency:
 * the check warns only where the benchmark declared latency accesses and
 * no throughput phase, and the hot loop holds most of the CPU time.
 */
void checks_load_dependence(const struct analysis_check_def *def, const struct analysis_input *in, struct analysis *a)
{
	const struct sample_profile *p = in->profile;
	const struct sample_code *code = &p->code;
	struct analysis_check *c;
	char why[320];
	size_t latency, throughput;

	if (checks_no_clock(def, p, a))
		return;
	declared_kinds(in, &latency, &throughput);
	double hot = hot_user_share(p);
	const char *unknown = unknown_why(p, why, sizeof(why));
	if (unknown)
		c = checks_add(a, def, CHECK_SKIP, "could not tell what the hot loop's loads wait on, because %s", unknown);
	else if (code->chained_loads)
		c = checks_add(a, def, CHECK_PASS,
			       "the hot loop of %s is a chain: the load at 0x%llx takes its address from a load of the pass "
			       "before (%u of its %u loads, body 0x%llx-0x%llx), so each access waits for the one before "
			       "it: its time per access is a latency", checks_short_fn(p),
			       (unsigned long long)code->chained_at, code->chained_loads, code->loads,
			       (unsigned long long)code->body_start, (unsigned long long)code->body_end);
	else {
		/* What the loop does instead of a chain: loads that overlap, or stores, which the core never waits on. */
		char what[300];
		if (code->loads)
			snprintf(what, sizeof(what), "none of the %u loads in the hot loop of %s (body 0x%llx-0x%llx) takes "
				 "its address from a load of an earlier pass, so the core overlaps them (memory-level "
				 "parallelism)", code->loads, checks_short_fn(p), (unsigned long long)code->body_start,
				 (unsigned long long)code->body_end);
		else
			snprintf(what, sizeof(what), "the hot loop of %s (body 0x%llx-0x%llx) loads nothing but its own "
				 "variables and stores %u time(s) a pass, and the core never waits on a store",
				 checks_short_fn(p), (unsigned long long)code->body_start,
				 (unsigned long long)code->body_end, code->stores);
		if (latency && !throughput && hot >= DECLARED_HOT_SHARE)
			c = checks_add(a, def, CHECK_WARN,
				       "%zu phase(s) declare latency accesses, and its hot loop holds %.0f %% of the CPU "
				       "time in user code, but %s: the time per access is a throughput, several times "
				       "below the latency of one access and of the page walk behind it; chain the loads "
				       "(each address read from the last load, as tlbprof's chase does), or declare "
				       "kind=throughput", latency, 100 * hot, what);
		else
			c = checks_add(a, def, CHECK_PASS,
				       "informational: %s: its time per access is a throughput (a scan's bandwidth, "
				       "random updates as GUPS), not the latency of one access; a latency benchmark "
				       "chains its loads (p = *p)%s", what, throughput ? "; it declares throughput phases" : "");
	}
	checks_evidence(c, "loads", code->loads);
	checks_evidence(c, "chained_loads", code->chained_loads);
	checks_evidence(c, "stores", code->stores);
	checks_evidence(c, "calls", code->calls);
	checks_evidence(c, "declared_latency_phases", (double)latency);
	checks_evidence(c, "declared_throughput_phases", (double)throughput);
	checks_evidence(c, "hot_function_user_share", hot);
}

/*
 * declared_accesses_plausible (warn) and too_fast (fail) give two causes
 * for a phase too fast per declared access: fewer accesses than declared,
 * or loads that overlap. The hot loop's code tells them apart where it was
 * followed and the loop holds most of the user code's samples (as
 * load_dependence asks).
 */
void checks_rejudge_declared(const struct sample_profile *p, struct analysis *a)
{
	const struct sample_code *code = &p->code;
	char why[320];

	if (unknown_why(p, why, sizeof(why)) || hot_user_share(p) < DECLARED_HOT_SHARE)
		return;
	for (size_t i = 0; i < a->n_checks; i++) {
		struct analysis_check *c = &a->checks[i];
		if (!((strcmp(c->id, "declared_accesses_plausible") == 0 && c->status == CHECK_WARN) ||
		      (strcmp(c->id, "too_fast") == 0 && c->status == CHECK_FAIL)))
			continue;
		char was[sizeof(c->message)];
		snprintf(was, sizeof(was), "%s", c->message);
		if (code->chained_loads)
			analysis_text(c->message, sizeof(c->message), "%s. Its hot loop chains its loads (the load at 0x%llx "
				      "takes its address from the last pass's, load_dependence): the count is what is off",
				      was, (unsigned long long)code->chained_at);
		else if (code->loads)
			analysis_text(c->message, sizeof(c->message), "%s. None of its hot loop's %u loads is chained "
				      "(load_dependence): they overlap, so it is what the loads wait on that is off, not "
				      "necessarily the count", was, code->loads);
		else
			analysis_text(c->message, sizeof(c->message), "%s. Its hot loop loads nothing but its own "
				      "variables and stores %u time(s) a pass (load_dependence): the core never waits on a "
				      "store, so it is what the accesses are that is off, not necessarily the count", was,
				      code->stores);
		checks_evidence(c, "hot_loop_chained_loads", code->chained_loads);
	}
}

static double evidence_of(const struct analysis_check *c, const char *key, double dflt)
{
	for (size_t i = 0; i < c->evidence.n; i++)
		if (strcmp(c->evidence.items[i].key, key) == 0)
			return c->evidence.items[i].value;
	return dflt;
}

/*
 * Where the ELF records no optimisation level (build_optimised skipped: a
 * course program built gcc -O0 without -g), the hot loop's machine code
 * answers instead: -O0 code sets up a frame pointer and keeps every variable
 * in a stack slot, so its loop stores and reloads them around each access;
 * optimised code keeps them in registers. The answer says it is inferred.
 */
void checks_rejudge_build(const struct sample_profile *p, struct analysis *a)
{
	const struct sample_code *code = &p->code;

	if (!p->hot_hi || !code->decoded)
		return;
	for (size_t i = 0; i < a->n_checks; i++) {
		struct analysis_check *c = &a->checks[i];
		if (strcmp(c->id, "build_optimised") != 0 || c->status != CHECK_SKIP ||
		    evidence_of(c, "level_recorded", 1) != 0)
			continue;
		double stack = code->instructions ? (double)code->stack_accesses / code->instructions : 0;
		bool o0 = code->frame_pointer && code->reloaded_slots > 0 && stack >= UNOPTIMISED_STACK_SHARE;
		c->status = o0 ? CHECK_WARN : CHECK_PASS;
		analysis_text(c->message, sizeof(c->message),
			      o0 ? "inferred from its machine code (the ELF records no level): the hot loop of %s "
			           "(0x%llx-0x%llx) has %u of %u instructions loading or storing stack slots, %u variable(s) "
			           "stored and reloaded each pass, behind a frame pointer: the marks of -O0, whose loop times "
			           "the compiler's bookkeeping as well as the memory system; build the benchmark with -O2"
			         : "inferred from its machine code (the ELF records no level): the hot loop of %s "
			           "(0x%llx-0x%llx) has %u of %u instructions loading or storing stack slots, %u variable(s) "
			           "kept in memory: it keeps its variables in registers, as optimised code does",
			      checks_short_fn(p), (unsigned long long)code->loop_start, (unsigned long long)code->loop_end,
			      code->stack_accesses, code->instructions, code->reloaded_slots);
		checks_evidence(c, "inferred", 1);
		checks_evidence(c, "loop_instructions", code->instructions);
		checks_evidence(c, "stack_accesses", code->stack_accesses);
		checks_evidence(c, "reloaded_slots", code->reloaded_slots);
		checks_evidence(c, "frame_pointer", code->frame_pointer);
	}
}
