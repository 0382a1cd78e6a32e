/* SPDX-License-Identifier: MIT */
/* Sampling, pure side: the attributes a session opens with, the period policy, the data source's TLB level, IBS op. */
#include "pmu/sample.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

/* ---- the period policy ------------------------------------------------------ */

static bool is_prime(uint64_t n)
{
	if (n < 2)
		return false;
	for (uint64_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return false;
	return true;
}

static uint64_t next_prime(uint64_t n)
{
	while (!is_prime(n))
		n++;
	return n;
}

uint64_t sample_period_initial(enum sample_source source)
{
	switch (source) {
	case SAMPLE_SOURCE_SOFTWARE:
		return 1;
	case SAMPLE_SOURCE_IBS_OP:
		return SAMPLE_IBS_OP_PERIOD;
	case SAMPLE_SOURCE_HARDWARE:
		break;
	}
	return next_prime(SAMPLE_DEFAULT_PERIOD);
}

uint64_t sample_period_raise(enum sample_source source, uint64_t period)
{
	uint64_t p = period < 1 ? 2 : period * 2;

	if (source == SAMPLE_SOURCE_SOFTWARE || period >= SAMPLE_MAX_PERIOD)
		return period;
	if (p > SAMPLE_MAX_PERIOD)
		p = SAMPLE_MAX_PERIOD;
	if (source == SAMPLE_SOURCE_IBS_OP)
		return (p + 15) & ~15ull;
	return p == SAMPLE_MAX_PERIOD ? p : next_prime(p);
}

/* ---- the attributes --------------------------------------------------------- */

/*
 * What a PEBS record holds, so what large PEBS allows in sample_type
 * (arch/x86/events/perf_event.h LARGE_PEBS_FLAGS, with TIME from PEBS format
 * 3 on, which intel_pmu_large_pebs_flags() takes away again under use_clockid).
 */
#define SAMPLE_LARGE_PEBS_TYPES                                                                                   \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC |          \
	 PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TRANSACTION | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_PERIOD)

static void event_name(const struct sample_options *opts, struct sample_info *info)
{
	if (opts->name)
		snprintf(info->event, sizeof(info->event), "%s", opts->name);
	else
		snprintf(info->event, sizeof(info->event), "%" PRIu32 ":0x%" PRIx64, opts->type, opts->config);
}

void sample_attr_build(struct perf_event_attr *attr, const struct sample_options *opts, struct sample_info *info)
{
	static const struct sample_options defaults = { 0 };

	if (!opts)
		opts = &defaults;
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	info->source = !opts->custom_event ? SAMPLE_SOURCE_SOFTWARE
		       : opts->ibs_op	   ? SAMPLE_SOURCE_IBS_OP
					   : SAMPLE_SOURCE_HARDWARE;
	/* For a page fault, PERF_SAMPLE_ADDR is the faulting address (do_user_addr_fault passes it). */
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;	/* NMI-safe, and comparable with clock_gettime() for the hold-back */
	if (opts->custom_event) {
		attr->type = opts->type;
		attr->config = opts->config;
		attr->config1 = opts->config1;
		attr->config2 = opts->config2;
		attr->precise_ip = opts->precise_ip;
		attr->exclude_kernel = opts->exclude_kernel;
		attr->exclude_hv = opts->exclude_hv;
		/* The data source carries the TLB level of the access (PEBS: the STLB miss bit; IBS: IbsOpData3). */
		attr->sample_type |= PERF_SAMPLE_DATA_SRC;
		if (opts->no_data_addr)
			attr->sample_type &= ~(uint64_t)(PERF_SAMPLE_ADDR | PERF_SAMPLE_DATA_SRC);
		/* See sample_attr_build()'s contract: TIME under use_clockid would cost large PEBS. */
		if (opts->precise_ip && !opts->ibs_op) {
			attr->use_clockid = 0;
			attr->clockid = 0;
		}
		event_name(opts, info);
	} else {
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = PERF_COUNT_SW_PAGE_FAULTS;
		snprintf(info->event, sizeof(info->event), "page-faults");
	}
	if (opts->cpu)
		attr->sample_type |= PERF_SAMPLE_CPU;
	if (opts->read_count)
		attr->sample_type |= PERF_SAMPLE_READ;	/* read_format 0: the value alone */
	if (opts->regs_user) {
		attr->sample_type |= PERF_SAMPLE_REGS_USER;
		attr->sample_regs_user = opts->regs_user;
	}
	/* A fixed period, never attr.freq: see SAMPLE_TARGET_HZ. */
	attr->sample_period = opts->period ? opts->period : sample_period_initial(info->source);
	/* Side-band records end with {pid, tid, time} too, so all records of all rings merge by time. */
	attr->sample_id_all = 1;
	/*
	 * inherit: threads and children created after the open get events of
	 * their own that write into these rings. disabled + enable_on_exec: the
	 * kernel enables the events in the target's execve(), before the new
	 * program's ELF loader maps it, so the MMAP2 records of the executable,
	 * the interpreter and the libraries all arrive (as perf record learns
	 * them); a disabled event gets no side-band records.
	 */
	attr->inherit = !opts->per_task;
	attr->disabled = opts->enable_on_exec;
	attr->enable_on_exec = opts->enable_on_exec;
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->mmap_data = 1;	/* data mappings too (anonymous ones as "//anon"), for the data regions */
	attr->comm = 1;
	attr->comm_exec = 1;	/* marks the COMM record of an exec: the address space is new */
	attr->task = 1;
	attr->context_switch = opts->context_switch;

	info->type = attr->type;
	info->config = attr->config;
	info->period = info->period_initial = attr->sample_period;
	info->sample_type = attr->sample_type;
	info->regs_user = attr->sample_regs_user;
	info->data_source = (attr->sample_type & PERF_SAMPLE_DATA_SRC) != 0;
	info->precise_ip = opts->precise_ip;
	info->use_clockid = attr->use_clockid;
	info->large_pebs = info->source == SAMPLE_SOURCE_HARDWARE && attr->precise_ip && !attr->freq &&
			   !attr->use_clockid && !(attr->sample_type & ~(uint64_t)SAMPLE_LARGE_PEBS_TYPES);
	info->exclude_kernel = attr->exclude_kernel;
	info->exclude_hv = attr->exclude_hv;
	info->note[0] = '\0';
	if (opts->note && *opts->note)
		snprintf(info->note, sizeof(info->note), "%s", opts->note);
	else if (attr->exclude_kernel)
		snprintf(info->note, sizeof(info->note), "user space only, as the event is encoded");
}

uint64_t sample_perf_time_from_tsc(uint64_t tsc, uint64_t time_zero, uint32_t time_mult, uint16_t time_shift)
{
	uint64_t quot = time_shift < 64 ? tsc >> time_shift : 0;
	uint64_t rem = time_shift < 64 ? tsc & ((1ull << time_shift) - 1) : tsc;

	return time_zero + quot * time_mult + ((rem * time_mult) >> time_shift);
}

/* ---- the data source -------------------------------------------------------- */

enum sample_tlb_level sample_tlb_level(uint64_t data_src)
{
	unsigned tlb = (unsigned)(data_src >> PERF_MEM_TLB_SHIFT) & 0x7f;

	if (tlb == 0 || (tlb & PERF_MEM_TLB_NA))
		return SAMPLE_TLB_NA;
	if (tlb & PERF_MEM_TLB_OS)
		return SAMPLE_TLB_OS_FAULT;
	if (tlb & (PERF_MEM_TLB_MISS | PERF_MEM_TLB_WK))
		return SAMPLE_TLB_WALK;
	if (!(tlb & PERF_MEM_TLB_HIT))
		return SAMPLE_TLB_NA;
	if ((tlb & PERF_MEM_TLB_L1) && (tlb & PERF_MEM_TLB_L2))
		return SAMPLE_TLB_L1_OR_L2_HIT;
	if (tlb & PERF_MEM_TLB_L1)
		return SAMPLE_TLB_L1_HIT;
	if (tlb & PERF_MEM_TLB_L2)
		return SAMPLE_TLB_L2_HIT;
	return SAMPLE_TLB_NA;
}

const char *sample_tlb_level_name(enum sample_tlb_level level)
{
	static const char *const names[SAMPLE_TLB_LEVELS] = {
		[SAMPLE_TLB_NA] = "not_available",	   [SAMPLE_TLB_L1_HIT] = "l1_hit",
		[SAMPLE_TLB_L2_HIT] = "l2_hit",		   [SAMPLE_TLB_L1_OR_L2_HIT] = "l1_or_l2_hit",
		[SAMPLE_TLB_WALK] = "walk",		   [SAMPLE_TLB_OS_FAULT] = "os_fault",
	};

	return (int)level >= 0 && level < SAMPLE_TLB_LEVELS ? names[level] : NULL;
}

bool sample_ibs_op_is_miss(uint64_t data_src)
{
	enum sample_tlb_level l = sample_tlb_level(data_src);

	return l == SAMPLE_TLB_L2_HIT || l == SAMPLE_TLB_WALK || l == SAMPLE_TLB_OS_FAULT;
}

/* ---- IBS op ----------------------------------------------------------------- */

/* The first line of DIR/NAME into buf, without its newline. 0 or -errno. */
static int read_line(const char *dir, const char *name, char *buf, size_t size)
{
	char path[512];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (!fgets(buf, (int)size, f))
		err = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return err;
}

/*
 * A one-bit format field ("config:19", "config2:0") of the ibs_op PMU: which
 * of config (0), config1 (1), config2 (2) and the bit. false when the file
 * is absent or is not one bit.
 */
static bool format_bit(const char *pmu_dir, const char *field, int *word, unsigned *bit)
{
	char name[64], text[64], *end;
	unsigned long b;

	snprintf(name, sizeof(name), "format/%s", field);
	if (read_line(pmu_dir, name, text, sizeof(text)) != 0)
		return false;
	if (strncmp(text, "config:", 7) == 0)
		*word = 0;
	else if (strncmp(text, "config1:", 8) == 0)
		*word = 1;
	else if (strncmp(text, "config2:", 8) == 0)
		*word = 2;
	else
		return false;
	b = strtoul(strchr(text, ':') + 1, &end, 10);
	if (end == strchr(text, ':') + 1 || *end != '\0' || b > 63)
		return false;
	*bit = (unsigned)b;
	return true;
}

bool sample_release_at_least(const char *release, long want_major, long want_minor)
{
	struct utsname uts;
	char *end;

	if (!release)
		release = uname(&uts) == 0 ? uts.release : "";
	long major = strtol(release, &end, 10), minor = 0;

	if (end == release)
		return false;
	if (*end == '.')
		minor = strtol(end + 1, NULL, 10);
	return major > want_major || (major == want_major && minor >= want_minor);
}

int sample_ibs_op_event(const char *sysfs_root, const char *kernel_release, struct sample_ibs_op *out, char *why,
			size_t why_len)
{
	char dir[400], text[64], *end;
	unsigned long type;
	unsigned bit;
	int word, err;

	*out = (struct sample_ibs_op){ 0 };
	snprintf(dir, sizeof(dir), "%s/bus/event_source/devices/ibs_op", sysfs_root ? sysfs_root : "/sys");
	err = read_line(dir, "type", text, sizeof(text));
	if (err) {
		snprintf(why, why_len, "no IBS op PMU (%s/type: %s)", dir, strerror(-err));
		return err;
	}
	type = strtoul(text, &end, 10);
	if (end == text || *end != '\0' || type > UINT32_MAX) {
		snprintf(why, why_len, "%s/type: not a PMU type: \"%s\"", dir, text);
		return -EINVAL;
	}
	out->type = (uint32_t)type;
	/* Count dispatched ops, not cycles: a sample is then one op in period, loads among them as often as they run. */
	if (format_bit(dir, "cnt_ctl", &word, &bit) && word == 0) {
		out->config |= 1ull << bit;
		out->cnt_ctl = true;
	}
	/* The kernel's software filter, the only way IBS takes exclude_kernel (perf_ibs_init refuses it otherwise). */
	if (format_bit(dir, "swfilt", &word, &bit) && word == 2) {
		out->config2 |= 1ull << bit;
		out->swfilt = true;
	}
	/* perf_ibs_parse_ld_st_data() fills ADDR and DATA_SRC from Linux 6.1 on; before, samples carry neither. */
	out->data_addr = sample_release_at_least(kernel_release, 6, 1);
	snprintf(out->note, sizeof(out->note), "IBS op: one op in every period %s; %s%s",
		 out->cnt_ctl ? "dispatched ops" : "cycles",
		 out->data_addr ? "only loads and stores that missed the L1 dTLB are kept"
				: "no data addresses or TLB levels before Linux 6.1, so every sampled op is kept",
		 out->swfilt ? "" : "; the kernel side is sampled too (IBS filters it only with format/swfilt, Linux 6.14)");
	return 0;
}
