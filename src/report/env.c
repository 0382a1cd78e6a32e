/* SPDX-License-Identifier: MIT */
/* Report writers of tlbprof env (machine findings and fixes) and tlbprof events (the metric -> event table). */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>

#include "parse.h"
#include "report/report.h"
#include "report/internal.h"
#include "version.h"

/* Width of the text output's paragraphs: problems and advice are wrapped to it. */
#define TEXT_WIDTH 100

static json_t *command_json(int argc, char **argv)
{
	json_t *cmd = json_array();

	for (int i = 0; i < argc; i++)
		json_array_append_new(cmd, report_json_text(argv[i]));
	return cmd;
}

/* perf_event_attr.type by name; dynamic PMU types (from sysfs) print as numbers. */
static const char *perf_type_name(uint32_t type, char *buf, size_t len)
{
	switch (type) {
	case PERF_TYPE_HARDWARE: return "hardware";
	case PERF_TYPE_SOFTWARE: return "software";
	case PERF_TYPE_TRACEPOINT: return "tracepoint";
	case PERF_TYPE_HW_CACHE: return "hw_cache";
	case PERF_TYPE_RAW: return "raw";
	case PERF_TYPE_BREAKPOINT: return "breakpoint";
	default:
		snprintf(buf, len, "%" PRIu32, type);
		return buf;
	}
}

/* A counter as the events/env JSON lists it: the report's fields, with type and config null when not encoded. */
static json_t *event_json(const struct counter_info *ci)
{
	json_t *o = report_counter_info_json(ci);
	char buf[16];

	json_object_set_new(o, "type_name", ci->encoded ? json_string(perf_type_name(ci->type, buf, sizeof(buf)))
							 : json_null());
	if (!ci->encoded) {
		json_object_set_new(o, "type", json_null());
		json_object_set_new(o, "config", json_null());
	}
	return o;
}

static void print_tlb_level(FILE *f, const char *label, unsigned entries, unsigned ways, uint64_t page_bytes)
{
	char reach[SIZE_TEXT], assoc[32];

	if (!entries)
		return;
	if (ways == entries)
		snprintf(assoc, sizeof(assoc), "fully associative");
	else if (ways)
		snprintf(assoc, sizeof(assoc), "%u-way", ways);
	else
		snprintf(assoc, sizeof(assoc), "ways unknown");
	fprintf(f, "  %-20s %u entries, %s, reach %s\n", label, entries, assoc,
		format_bytes((uint64_t)entries * page_bytes, reach, sizeof(reach)));
}

static bool cap_bit(const struct environment *env, unsigned bit)
{
	return env->cap_known && (env->cap_effective >> bit & 1);
}

/* The CPU section: model, signature, logical CPUs, hypervisor, PMU and core clock. */
static void print_cpu(const struct report_env_input *in, FILE *f)
{
	const struct environment *env = in->env;
	const char *pmu = in->counters ? counter_set_pmu_name(in->counters) : "unknown";

	fprintf(f, "CPU\n");
	fprintf(f, "  %-20s %s\n", "model", env->cpu_model_name[0] ? env->cpu_model_name : "unknown");
	fprintf(f, "  %-20s %s family %u model %#x stepping %u%s%s%s\n", "signature",
		env->cpu_vendor[0] ? env->cpu_vendor : "unknown", env->cpu_family, env->cpu_model, env->cpu_stepping,
		env->core_name[0] ? " (" : "", env->core_name, env->core_name[0] ? ")" : "");
	fprintf(f, "  %-20s %d\n", "logical CPUs", env->logical_cpus);
	fprintf(f, "  %-20s %s\n", "hypervisor", env->hypervisor[0] ? env->hypervisor : "none (bare metal)");
	fprintf(f, "  %-20s %s%s%s\n", "PMU (libpfm4)", pmu, in->counters ? ": " : "",
		in->counters ? counter_set_pmu_desc(in->counters) : "");
	if (in->clock->core_clock_ghz > 0)
		fprintf(f, "  %-20s %.2f GHz (calibrated: %s), clock overhead %.1f ns\n", "core clock",
			in->clock->core_clock_ghz, in->clock->core_clock_method, in->clock->clock_overhead_ns);
}

/* The TLB section: each level CPUID reports, with its reach. */
static void print_tlb(const struct environment *env, FILE *f)
{
	fprintf(f, "\nTLB (CPUID %s)\n", env->tlb.source[0] ? env->tlb.source : "none");
	print_tlb_level(f, "L1 dTLB 4K", env->tlb.l1d_4k_entries, env->tlb.l1d_4k_ways, 4096);
	print_tlb_level(f, "L1 dTLB 2M", env->tlb.l1d_2m_entries, env->tlb.l1d_2m_ways, 2ull << 20);
	print_tlb_level(f, "L1 dTLB 1G", env->tlb.l1d_1g_entries, env->tlb.l1d_1g_ways, 1ull << 30);
	print_tlb_level(f, "L2 TLB 4K", env->tlb.l2d_4k_entries, env->tlb.l2d_4k_ways, 4096);
	print_tlb_level(f, "L2 TLB 2M", env->tlb.l2d_2m_entries, env->tlb.l2d_2m_ways, 2ull << 20);
	print_tlb_level(f, "L2 TLB 1G", env->tlb.l2d_1g_entries, env->tlb.l2d_1g_ways, 1ull << 30);
	if (!env->tlb.l1d_4k_entries && !env->tlb.l2d_4k_entries)
		fprintf(f, "  %-20s not reported\n", "geometry");
	const struct env_tlb *doc = &env->documented_tlb;
	if (environment_tlb_disagrees(env))
		fprintf(f, "  %-20s the documented %s row, L1 %u, L2 %u entries: CPUID under %s disagrees, and\n"
			"  %-20s hypervisors invent these leaves\n", "expected", env->core_name, doc->l1d_4k_entries,
			doc->l2d_4k_entries, env->hypervisor, "");
	else if (environment_expected_tlb(env) == doc && doc->l1d_4k_entries)
		fprintf(f, "  %-20s the documented %s row, L1 %u, L2 %u entries\n", "expected", env->core_name,
			doc->l1d_4k_entries, doc->l2d_4k_entries);
}

/* The Caches section: each cache's size, ways, line and sets. */
static void print_caches(const struct environment *env, FILE *f)
{
	char a[SIZE_TEXT];

	fprintf(f, "\nCaches\n");
	for (size_t i = 0; i < env->n_caches; i++) {
		const struct env_cache *c = &env->caches[i];
		char label[32];
		snprintf(label, sizeof(label), "L%u %s", c->level, c->type);
		fprintf(f, "  %-20s %s, %u-way, %u B lines, %u sets\n", label, format_bytes(c->size_bytes, a, sizeof(a)),
			c->ways, c->line_bytes, c->sets);
	}
	if (!env->n_caches)
		fprintf(f, "  %-20s not reported\n", "caches");
}

/* The Kernel and memory section: kernel, perf_event_paranoid, privileges, THP, hugetlb pools, fault-around. */
static void print_kernel(const struct environment *env, FILE *f)
{
	const struct env_first_access *fa = env->first_access.pages ? &env->first_access : NULL;
	char a[SIZE_TEXT], b[SIZE_TEXT];

	fprintf(f, "\nKernel and memory\n");
	fprintf(f, "  %-20s %s\n", "kernel", env->kernel);
	if (env->perf_event_paranoid == INT32_MIN)
		fprintf(f, "  %-20s unreadable\n", "perf_event_paranoid");
	else
		fprintf(f, "  %-20s %d\n", "perf_event_paranoid", env->perf_event_paranoid);
	if (env->cap_known)
		fprintf(f, "  %-20s uid %u, CAP_PERFMON %s, CAP_SYS_ADMIN %s\n", "privileges", env->euid,
			cap_bit(env, ENV_CAP_PERFMON) ? "yes" : "no", cap_bit(env, ENV_CAP_SYS_ADMIN) ? "yes" : "no");
	else
		fprintf(f, "  %-20s uid %u, capabilities unreadable\n", "privileges", env->euid);
	fprintf(f, "  %-20s enabled %s, defrag %s\n", "THP", env->thp_enabled[0] ? env->thp_enabled : "unavailable",
		env->thp_defrag[0] ? env->thp_defrag : "unavailable");
	for (size_t i = 0; i < env->n_pools; i++) {
		const struct env_hugepool *p = &env->pools[i];
		char label[32];
		snprintf(label, sizeof(label), "hugetlb pool %s", format_size(p->page_bytes, a, sizeof(a)));
		fprintf(f, "  %-20s %ld pages, %ld free, %ld reserved, %ld surplus\n", label, p->nr, p->free, p->resv,
			p->surplus);
	}
	if (!env->n_pools)
		fprintf(f, "  %-20s none\n", "hugetlb pools");
	if (env->fault_around_bytes >= 0)
		fprintf(f, "  %-20s %s\n", "fault_around_bytes",
			format_bytes((uint64_t)env->fault_around_bytes, b, sizeof(b)));
	else
		fprintf(f, "  %-20s unknown: %s\n", "fault_around_bytes",
			env->fault_around_why[0] ? env->fault_around_why : "debugfs is unreadable");
	if (fa)
		fprintf(f, "  %-20s %.0f ns a populated 4 KiB page (median, %llu pages): %s\n", "first access",
			fa->ns_per_page, (unsigned long long)fa->pages,
			env_shadow_paging(env) ? "a trap each, shadow paging" : "a TLB miss, no trap");
	else
		fprintf(f, "  %-20s not measured (no MADV_POPULATE_WRITE, or no 16 MiB to map)\n", "first access");
}

/* The Frequency and noise section: cpufreq, turbo and the steal time sampled. */
static void print_frequency(const struct report_env_input *in, FILE *f)
{
	const struct environment *env = in->env;

	fprintf(f, "\nFrequency and noise\n");
	if (env->cpufreq_driver[0] || env->cpufreq_governor[0])
		fprintf(f, "  %-20s %s, governor %s\n", "cpufreq", env->cpufreq_driver[0] ? env->cpufreq_driver : "?",
			env->cpufreq_governor[0] ? env->cpufreq_governor : "?");
	else
		fprintf(f, "  %-20s not exposed (usual in a VM)\n", "cpufreq");
	fprintf(f, "  %-20s %s\n", "turbo/boost", env->turbo < 0 ? "unknown" : env->turbo ? "on" : "off");
	if (in->steal)
		fprintf(f, "  %-20s %.1f %% of the CPU time over %u ms\n", "steal", 100 * in->steal->fraction,
			in->steal->window_ms);
	else
		fprintf(f, "  %-20s could not be sampled\n", "steal");
}

/* The Counters section (each counter's status), then Can measure: what the diagnosis says is possible here. */
static void print_counters(const struct report_env_input *in, FILE *f)
{
	const struct diagnosis *d = in->diagnosis;

	fprintf(f, "\nCounters (maps: %s)\n", in->events_dir);
	if (!in->counters)
		fprintf(f, "  none: %s\n", in->counters_error ? in->counters_error : "unknown reason");
	for (size_t i = 0; in->counters && i < counter_set_size(in->counters); i++) {
		const struct counter_info *ci = counter_set_info(in->counters, i);
		fprintf(f, "  %-20s %-12s %s\n", ci->name, counter_status_name(ci->status), ci->reason);
	}

	fprintf(f, "\nCan measure\n");
	for (size_t i = 0; i < DIAGNOSE_PAGES; i++) {
		char label[32];
		snprintf(label, sizeof(label), "--pages %s", d->pages[i].label);
		fprintf(f, "  %-20s %-4s %s\n", label, d->pages[i].available ? "yes" : "no", d->pages[i].reason);
	}
	fprintf(f, "  %-20s %s\n", "dTLB misses", d->tlb_misses ? "yes" : "no");
	fprintf(f, "  %-20s %s\n", "page-walk cycles", d->walk_cycles ? "yes" : "no");
	fprintf(f, "  %-20s %s\n", "cycles", d->hardware_cycles ? "counted" : "from the calibrated clock");
	fprintf(f, "  %-20s %s\n", "page faults", d->page_faults ? "yes" : "no");
	fprintf(f, "  %-20s %s\n", "attribution",
		d->tlb_misses ? "counters (per dTLB miss)"
			      : "differential (packed control phases run by default)");
}

/* The Problems section: each problem with its fix, wrapped (to the terminal's width on one). */
static void print_problems(const struct diagnosis *d, FILE *f)
{
	struct term_style ts;

	term_style_for(f, &ts);
	size_t width = ts.width ? ts.width : TEXT_WIDTH;
	fprintf(f, "\nProblems (%zu)\n", d->n_problems);
	if (!d->n_problems)
		fprintf(f, "  none\n");
	for (size_t i = 0; i < d->n_problems; i++) {
		const struct diagnose_problem *p = &d->problems[i];
		fprintf(f, "  ");
		term_put_status(f, &ts, diagnose_severity_name(p->severity), 4);
		int col = fprintf(f, "  %s: ", p->id);
		term_put_wrapped(f, p->message, col > 0 ? (size_t)col + 6 : 0, 8, width);
		if (p->command[0])
			fprintf(f, "        fix:  %s\n", p->command);
		if (p->advice[0]) {
			fprintf(f, "        %s", p->command[0] ? "also: " : "fix:  ");
			term_put_wrapped(f, p->advice, 14, 14, width);
		}
	}
}

static void print_env_text(const struct report_env_input *in, FILE *f)
{
	fprintf(f, "tlbprof env: what this machine can measure, and what stops it\n\n");
	print_cpu(in, f);
	print_tlb(in->env, f);
	print_caches(in->env, f);
	print_kernel(in->env, f);
	print_frequency(in, f);
	print_counters(in, f);
	print_problems(in->diagnosis, f);
	term_note(f, "\ntlbprof records the system's state; it never changes it. Run a fix yourself, then tlbprof env "
		  "again.\n");
}

static json_t *env_json(const struct report_env_input *in)
{
	const struct environment *env = in->env;
	const struct diagnosis *d = in->diagnosis;
	json_t *root = json_object(), *counters = json_array(), *problems = json_array(), *pages = json_object();
	char cap[32];

	json_object_set_new(root, "schema", json_string(REPORT_ENV_SCHEMA));
	json_object_set_new(root, "tool", json_pack("{s:s, s:s}", "name", "tlbprof", "version", TLBPROF_VERSION));
	json_object_set_new(root, "command", command_json(in->argc, in->argv));
	json_object_set_new(root, "environment", report_environment_json(env, in->clock,
									  in->counters ? counter_set_pmu_name(in->counters) : "none"));
	snprintf(cap, sizeof(cap), "0x%" PRIx64, env->cap_effective);
	json_object_set_new(root, "privileges",
			    json_pack("{s:I, s:o, s:o, s:o}", "euid", (json_int_t)env->euid, "cap_effective",
				      env->cap_known ? json_string(cap) : json_null(), "cap_perfmon",
				      env->cap_known ? json_boolean(cap_bit(env, ENV_CAP_PERFMON)) : json_null(),
				      "cap_sys_admin",
				      env->cap_known ? json_boolean(cap_bit(env, ENV_CAP_SYS_ADMIN)) : json_null()));
	json_object_set_new(root, "steal",
			    in->steal ? json_pack("{s:i, s:I, s:I, s:f}", "window_ms", (int)in->steal->window_ms,
						  "steal_ticks", (json_int_t)in->steal->steal_ticks, "total_ticks",
						  (json_int_t)in->steal->total_ticks, "fraction", in->steal->fraction)
				      : json_null());
	json_object_set_new(root, "events_dir", report_json_text(in->events_dir));
	json_object_set_new(root, "pmu", json_pack("{s:s, s:o}", "name",
						   in->counters ? counter_set_pmu_name(in->counters) : "unknown",
						   "description",
						   in->counters ? report_json_text(counter_set_pmu_desc(in->counters))
								: json_null()));
	json_object_set_new(root, "counters_error", report_json_str_or_null(in->counters_error));
	for (size_t i = 0; in->counters && i < counter_set_size(in->counters); i++)
		json_array_append_new(counters, event_json(counter_set_info(in->counters, i)));
	json_object_set_new(root, "counters", counters);
	for (size_t i = 0; i < DIAGNOSE_PAGES; i++)
		json_object_set_new(pages, d->pages[i].label,
				    json_pack("{s:b, s:o}", "available", d->pages[i].available, "reason",
					      report_json_text(d->pages[i].reason)));
	json_object_set_new(root, "can_measure",
			    json_pack("{s:o, s:b, s:b, s:b, s:b, s:s}", "pages", pages, "tlb_misses", d->tlb_misses,
				      "walk_cycles", d->walk_cycles, "hardware_cycles", d->hardware_cycles,
				      "page_faults", d->page_faults, "attribution", d->attribution));
	for (size_t i = 0; i < d->n_problems; i++) {
		const struct diagnose_problem *p = &d->problems[i];
		json_array_append_new(problems,
				      json_pack("{s:s, s:s, s:o, s:o, s:o}", "id", p->id, "severity",
						diagnose_severity_name(p->severity), "message", report_json_text(p->message),
						"command", report_json_str_or_null(p->command), "advice", report_json_str_or_null(p->advice)));
	}
	json_object_set_new(root, "problems", problems);
	return root;
}

static void print_events_text(const struct report_events_input *in, FILE *f)
{
	const struct counter_set *cs = in->counters;
	char type[16], config[24];

	fprintf(f, "PMU %s: %s%s\nmaps: %s\n\n", counter_set_pmu_name(cs), counter_set_pmu_desc(cs),
		in->forced ? "\n(--pmu: encoded for that PMU; status says whether it encodes, nothing was opened)"
			   : "", in->events_dir);
	fprintf(f, "%-18s %-18s %-8s %-10s %-12s %-12s %s\n", "metric", "name", "map", "type", "config", "status",
		"event");
	for (size_t i = 0; i < counter_set_size(cs); i++) {
		const struct counter_info *ci = counter_set_info(cs, i);
		snprintf(config, sizeof(config), "0x%" PRIx64, ci->config);
		fprintf(f, "%-18s %-18s %-8s %-10s %-12s %-12s %s\n", metric_name(ci->metric), ci->name,
			ci->source[0] ? ci->source : "-", ci->encoded ? perf_type_name(ci->type, type, sizeof(type)) : "-",
			ci->encoded ? config : "-", counter_status_name(ci->status), ci->event[0] ? ci->event : "-");
		if (ci->reason[0])
			fprintf(f, "%18s %s\n", "", ci->reason);
	}
}

static json_t *events_json(const struct report_events_input *in)
{
	json_t *root = json_object(), *events = json_array();
	const struct counter_set *cs = in->counters;

	json_object_set_new(root, "schema", json_string(REPORT_EVENTS_SCHEMA));
	json_object_set_new(root, "tool", json_pack("{s:s, s:s}", "name", "tlbprof", "version", TLBPROF_VERSION));
	json_object_set_new(root, "command", command_json(in->argc, in->argv));
	json_object_set_new(root, "pmu", json_pack("{s:s, s:o, s:b}", "name", counter_set_pmu_name(cs), "description",
						   report_json_text(counter_set_pmu_desc(cs)), "forced", in->forced));
	json_object_set_new(root, "events_dir", report_json_text(in->events_dir));
	json_object_set_new(root, "opened", json_boolean(!in->forced));
	for (size_t i = 0; i < counter_set_size(cs); i++)
		json_array_append_new(events, event_json(counter_set_info(cs, i)));
	json_object_set_new(root, "events", events);
	return root;
}

/* The text (unless quiet; to stderr when the JSON takes stdout), then the JSON. 0, or -1 after the error line. */
static int emit(const struct report_outputs *out, const void *in, void (*print)(const void *in, FILE *f),
		json_t *(*build)(const void *in))
{
	bool json_stdout = out->json_path && strcmp(out->json_path, "-") == 0;
	char msg[512];
	int failed = 0;

	/* A failed table costs the JSON nothing (report_emit()). */
	if (!out->quiet) {
		FILE *f = json_stdout ? stderr : stdout;
		errno = 0;
		print(in, f);
		if (fflush(f) != 0 || ferror(f)) {
			snprintf(msg, sizeof(msg), "cannot write to %s: %s", json_stdout ? "stderr" : "stdout",
				 strerror(errno ? errno : EIO));
			report_error(msg);
			clearerr(f);
			failed = -1;
		}
	}
	if (!out->json_path)
		return failed;
	json_t *root = build(in);
	int rc = root ? report_json_dump(root, out->json_path, msg, sizeof(msg)) : -ENOMEM;
	if (!root)
		snprintf(msg, sizeof(msg), "out of memory building the JSON");
	json_decref(root);
	if (rc) {
		report_error(msg);
		return -1;
	}
	return failed;
}

static void print_env(const void *in, FILE *f)
{
	print_env_text(in, f);
}

static json_t *build_env(const void *in)
{
	return env_json(in);
}

static void print_events(const void *in, FILE *f)
{
	print_events_text(in, f);
}

static json_t *build_events(const void *in)
{
	return events_json(in);
}

int report_env_emit(const struct report_env_input *in, const struct report_outputs *out)
{
	return emit(out, in, print_env, build_env);
}

int report_events_emit(const struct report_events_input *in, const struct report_outputs *out)
{
	return emit(out, in, print_events, build_events);
}
