/* SPDX-License-Identifier: MIT */
/* The hot loop's machine code, read from the executable and decoded with Capstone, for the marks -O0 leaves. */
#include "target/code.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmu/elfinfo.h"
#include "version.h"

#if TLBPROF_HAVE_CAPSTONE
#include <capstone/capstone.h>

/* Stack slots followed per loop; a loop touching more is summarised by the first ones. */
#define CODE_MAX_SLOTS 64

struct slot {
	int64_t disp;
	unsigned base;
	bool loaded, stored;
};

static void slot_note(struct slot *slots, unsigned *n, unsigned base, int64_t disp, uint8_t access)
{
	unsigned i;

	for (i = 0; i < *n; i++)
		if (slots[i].base == base && slots[i].disp == disp)
			break;
	if (i == *n) {
		if (*n == CODE_MAX_SLOTS)
			return;
		slots[(*n)++] = (struct slot){ .disp = disp, .base = base };
	}
	slots[i].loaded |= (access & CS_AC_READ) != 0;
	slots[i].stored |= (access & CS_AC_WRITE) != 0;
}

/* push rbp; mov rbp, rsp at the start, after an endbr64: the frame pointer -O0 always sets up. */
static bool prologue(const cs_insn *insn, size_t n)
{
	size_t i = 0;

	if (i < n && insn[i].id == X86_INS_ENDBR64)
		i++;
	if (i + 1 >= n || insn[i].id != X86_INS_PUSH || insn[i].detail->x86.op_count != 1 ||
	    insn[i].detail->x86.operands[0].type != X86_OP_REG || insn[i].detail->x86.operands[0].reg != X86_REG_RBP)
		return false;
	const cs_x86 *mov = &insn[i + 1].detail->x86;
	return insn[i + 1].id == X86_INS_MOV && mov->op_count == 2 && mov->operands[0].type == X86_OP_REG &&
	       mov->operands[0].reg == X86_REG_RBP && mov->operands[1].type == X86_OP_REG &&
	       mov->operands[1].reg == X86_REG_RSP;
}

/*
 * What the loop's loads wait on. Registers are followed by family (al, ax,
 * eax and rax are one; xmm3, ymm3 and zmm3 are one), and so are the loop's
 * own variables in memory: a cell read or written at a fixed address (a
 * stack slot, a global, a field off a register the body never writes, with
 * no index), as -O0 keeps every variable. Every other read is a load.
 */
#define CODE_MAX_CELLS 128
/* Passes over the body: a chain that needs more to reach an address is not seen. */
#define CODE_PASSES 4

enum { FROM_EARLIER = 1, FROM_NOW = 2 };	/* from a load of an earlier pass, of this pass */

struct cell {
	char reg[8];		/* a register family, or "" for a memory cell */
	char base[8];		/* a memory cell's base register family ("" for an absolute address) */
	int64_t disp;
	unsigned segment;
	uint8_t from;		/* FROM_* */
};

struct flow {
	csh cs;
	struct cell cells[CODE_MAX_CELLS];
	unsigned n;
	char written[CODE_MAX_CELLS][8];	/* the register families the body writes */
	unsigned n_written;
};

/* One name per register family: rax, eax, ax, al, ah are "ax"; r8, r8d, r8w, r8b are "r8"; xmm3..zmm3 "v3". */
static void reg_family(csh cs, unsigned reg, char out[8])
{
	const char *n = cs_reg_name(cs, reg);
	size_t len = n ? strlen(n) : 8;

	if (len >= 8) {
		snprintf(out, 8, "?%u", reg & 0xfffu);
		return;
	}
	if (len >= 4 && strchr("xyz", n[0]) && strncmp(n + 1, "mm", 2) == 0) {
		snprintf(out, 8, "v%s", n + 3);
		return;
	}
	if (n[0] == 'r' && n[1] >= '0' && n[1] <= '9') {
		size_t k = 1;
		while (n[k] >= '0' && n[k] <= '9')
			k++;
		snprintf(out, 8, "%.*s", (int)k, n);
		return;
	}
	if (strstr(n, "flags")) {
		snprintf(out, 8, "flags");
		return;
	}
	if (len == 3 && (n[0] == 'r' || n[0] == 'e') && n[2] != 'l') {	/* rax, eax, rsi, rip: ax, si, ip */
		n++;
		len--;
	} else if (len == 3 && n[2] == 'l') {	/* sil, dil, bpl, spl */
		len = 2;
	} else if (len == 2 && (n[1] == 'l' || n[1] == 'h') && strchr("abcd", n[0])) {
		snprintf(out, 8, "%cx", n[0]);
		return;
	}
	snprintf(out, 8, "%.*s", (int)len, n);
}

static struct cell *cell_of(struct flow *f, const char *reg, const char *base, int64_t disp, unsigned segment)
{
	for (unsigned i = 0; i < f->n; i++) {
		struct cell *c = &f->cells[i];
		if (strcmp(c->reg, reg) == 0 && strcmp(c->base, base) == 0 && c->disp == disp && c->segment == segment)
			return c;
	}
	if (f->n == CODE_MAX_CELLS)
		return NULL;
	struct cell *c = &f->cells[f->n++];
	*c = (struct cell){ .disp = disp, .segment = segment };
	snprintf(c->reg, sizeof(c->reg), "%s", reg);
	snprintf(c->base, sizeof(c->base), "%s", base);
	return c;
}

static uint8_t reg_from(struct flow *f, unsigned reg)
{
	char fam[8];

	if (reg == X86_REG_INVALID)
		return 0;
	reg_family(f->cs, reg, fam);
	const struct cell *c = cell_of(f, fam, "", 0, 0);
	return c ? c->from : 0;
}

static bool body_writes(const struct flow *f, const char *fam)
{
	for (unsigned i = 0; i < f->n_written; i++)
		if (strcmp(f->written[i], fam) == 0)
			return true;
	return false;
}

/*
 * The cell a memory operand names when it is one of the loop's own
 * variables (no index; rip-relative, absolute, or off a register the body
 * never writes), else NULL: a load or store of data.
 */
static struct cell *own_cell(struct flow *f, const cs_insn *in, const cs_x86_op *op)
{
	char base[8] = "";
	int64_t disp = op->mem.disp;

	if (op->mem.index != X86_REG_INVALID)
		return NULL;
	if (op->mem.base == X86_REG_RIP) {
		disp += (int64_t)(in->address + in->size);
	} else if (op->mem.base != X86_REG_INVALID) {
		reg_family(f->cs, op->mem.base, base);
		if (body_writes(f, base) && strcmp(base, "sp") != 0)
			return NULL;
	}
	return cell_of(f, "", base, disp, op->mem.segment);
}

/* xor eax, eax and its kin: a register set to zero, which depends on nothing. */
static bool zeroing(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	switch (in->id) {
	case X86_INS_XOR: case X86_INS_SUB: case X86_INS_PXOR: case X86_INS_VPXOR: case X86_INS_XORPS:
	case X86_INS_VXORPS: case X86_INS_XORPD: case X86_INS_VXORPD: case X86_INS_VPXORD: case X86_INS_VPXORQ:
		break;
	default:
		return false;
	}
	for (unsigned k = 1; k < x->op_count; k++)
		if (x->operands[k].type != X86_OP_REG || x->operands[0].type != X86_OP_REG ||
		    x->operands[k].reg != x->operands[0].reg)
			return false;
	return x->op_count >= 2;
}

/* An operand that reads no memory although it names it: lea's, a nop's, a prefetch's hint. */
static bool no_access(unsigned id)
{
	switch (id) {
	case X86_INS_LEA: case X86_INS_NOP: case X86_INS_PREFETCH: case X86_INS_PREFETCHW: case X86_INS_PREFETCHT0:
	case X86_INS_PREFETCHT1: case X86_INS_PREFETCHT2: case X86_INS_PREFETCHNTA:
		return true;
	default:
		return false;
	}
}

/*
 * One instruction of a pass: what it writes comes from what it reads; a
 * load adds FROM_NOW. Returns the loads it makes (*chained: one of them has
 * an address from an earlier pass's load; *stores: its writes of data).
 */
static unsigned flow_insn(struct flow *f, const cs_insn *in, bool *chained, unsigned *stores)
{
	cs_regs rd, wr;
	uint8_t n_rd = 0, n_wr = 0, from = 0;
	unsigned loads = 0;
	const cs_x86 *x = &in->detail->x86;

	*chained = false;
	*stores = 0;
	if (cs_regs_access(f->cs, in, rd, &n_rd, wr, &n_wr) != CS_ERR_OK)
		n_rd = n_wr = 0;
	for (unsigned k = 0; k < n_rd; k++)
		from |= reg_from(f, rd[k]);
	for (unsigned k = 0; k < x->op_count && !no_access(in->id); k++) {
		const cs_x86_op *op = &x->operands[k];
		bool reads = (op->access & CS_AC_READ) || !(op->access & CS_AC_WRITE);
		if (op->type != X86_OP_MEM || !reads)
			continue;
		const struct cell *own = own_cell(f, in, op);
		if (own) {
			from |= own->from;
			continue;
		}
		loads++;
		*chained |= ((reg_from(f, op->mem.base) | reg_from(f, op->mem.index)) & FROM_EARLIER) != 0;
		from |= FROM_NOW;
	}
	if (zeroing(in))
		from = 0;
	for (unsigned k = 0; k < x->op_count && !no_access(in->id); k++) {
		if (x->operands[k].type != X86_OP_MEM || !(x->operands[k].access & CS_AC_WRITE))
			continue;
		struct cell *own = own_cell(f, in, &x->operands[k]);
		if (own)
			own->from = from;
		else
			(*stores)++;
	}
	for (unsigned k = 0; k < n_wr; k++) {
		char fam[8];
		reg_family(f->cs, wr[k], fam);
		struct cell *c = cell_of(f, fam, "", 0, 0);
		if (c)
			c->from = from;
	}
	return loads;
}

/*
 * The loop's body: the code from the target of a jump back to that jump,
 * the smallest one holding the middle of [lo, hi) (the hot samples' centre),
 * else the smallest one; its jump may lie up to SAMPLE_CODE_LATCH_BYTES past hi.
 * Returns false when no such jump leads back to decoded code.
 */
static bool loop_body(csh cs, const cs_insn *insn, size_t n, uint64_t lo, uint64_t hi, size_t *first, size_t *last)
{
	uint64_t mid = lo + (hi - lo) / 2, best = UINT64_MAX;
	bool best_mid = false, found = false;

	for (size_t i = 0; i < n; i++) {
		const cs_x86 *x = &insn[i].detail->x86;
		if (insn[i].address < lo || insn[i].address >= hi + SAMPLE_CODE_LATCH_BYTES ||
		    !cs_insn_group(cs, &insn[i], CS_GRP_JUMP) || x->op_count != 1 ||
		    x->operands[0].type != X86_OP_IMM || (uint64_t)x->operands[0].imm > insn[i].address)
			continue;
		uint64_t to = (uint64_t)x->operands[0].imm, end = insn[i].address + insn[i].size;
		if (to >= hi)
			continue;	/* a loop after this one's code */
		size_t j = i;
		while (j > 0 && insn[j].address > to)
			j--;
		if (insn[j].address != to)
			continue;	/* before the decoded code, or inside an instruction */
		bool has_mid = to <= mid && mid < end;
		if ((has_mid && !best_mid) || (has_mid == best_mid && end - to < best)) {
			best = end - to;
			best_mid = has_mid;
			*first = j;
			*last = i;
			found = true;
		}
	}
	return found;
}

/* The loop body's loads, passed over CODE_PASSES times (code.h, struct sample_code). */
static void code_loads(csh cs, const cs_insn *insn, size_t n, uint64_t lo, uint64_t hi, struct sample_code *out)
{
	size_t first, last;

	out->body_recorded = true;
	if (!loop_body(cs, insn, n, lo, hi, &first, &last))
		return;
	out->body_start = insn[first].address;
	out->body_end = insn[last].address + insn[last].size;
	out->body_instructions = (unsigned)(last - first + 1);
	if (out->body_instructions > SAMPLE_CODE_MAX_BODY)
		return;
	out->body_followed = true;
	struct flow *f = calloc(1, sizeof(*f));
	bool *chained = calloc(last - first + 1, sizeof(*chained));
	if (!f || !chained) {
		out->body_followed = false;
		goto out;
	}
	f->cs = cs;
	for (size_t i = first; i <= last; i++) {
		cs_regs rd, wr;
		uint8_t n_rd = 0, n_wr = 0;
		if (cs_regs_access(cs, &insn[i], rd, &n_rd, wr, &n_wr) != CS_ERR_OK)
			n_wr = 0;
		for (unsigned k = 0; k < n_wr && f->n_written < CODE_MAX_CELLS; k++) {
			char fam[8];
			reg_family(cs, wr[k], fam);
			if (!body_writes(f, fam))
				snprintf(f->written[f->n_written++], 8, "%s", fam);
		}
		if (cs_insn_group(cs, &insn[i], CS_GRP_CALL) && !out->calls++)
			out->call_at = insn[i].address;
	}
	for (int pass = 0; pass < CODE_PASSES; pass++) {
		for (size_t i = first; i <= last; i++) {
			bool ch;
			unsigned stores, loads = flow_insn(f, &insn[i], &ch, &stores);
			if (pass == 0) {
				out->loads += loads;
				out->stores += stores;
			}
			chained[i - first] |= ch;
		}
		for (unsigned k = 0; k < f->n; k++)
			if (f->cells[k].from & FROM_NOW)
				f->cells[k].from = FROM_EARLIER;
	}
	for (size_t i = first; i <= last; i++)
		if (chained[i - first] && !out->chained_loads++)
			out->chained_at = insn[i].address;
out:
	free(chained);
	free(f);
}

int code_describe(const uint8_t *bytes, size_t len, uint64_t addr, uint64_t lo, uint64_t hi, struct sample_code *out)
{
	struct slot slots[CODE_MAX_SLOTS];
	unsigned n_slots = 0;
	cs_insn *insn = NULL;
	csh cs;

	memset(out, 0, sizeof(*out));
	out->function_start = addr;
	out->loop_start = lo;
	out->loop_end = hi;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		snprintf(out->error, sizeof(out->error), "Capstone could not start an x86-64 decoder");
		return -ENOMEM;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	size_t n = cs_disasm(cs, bytes, len, addr, 0, &insn);
	out->frame_pointer = prologue(insn, n);
	for (size_t i = 0; i < n && insn[i].address < hi; i++) {
		/* The TSC read inline (__rdtsc()), before the loop or in it: timing no uprobe on a clock sees. */
		if (insn[i].id == X86_INS_RDTSC || insn[i].id == X86_INS_RDTSCP) {
			if (!out->tsc_reads++)
				out->tsc_read_at = insn[i].address;
		}
		if (insn[i].address < lo)
			continue;
		out->instructions++;
		/* The nearest jump target before the loop's first instruction: where a pass of it may really start. */
		const cs_x86 *jmp = &insn[i].detail->x86;
		uint64_t to = jmp->op_count == 1 && jmp->operands[0].type == X86_OP_IMM ? (uint64_t)jmp->operands[0].imm : 0;
		if (cs_insn_group(cs, &insn[i], CS_GRP_JUMP) && to < lo && to > out->loop_head)
			out->loop_head = to;
		if (insn[i].id == X86_INS_LEA || insn[i].id == X86_INS_NOP)
			continue;
		const cs_x86 *x = &insn[i].detail->x86;
		bool stack = false;
		for (unsigned k = 0; k < x->op_count; k++) {
			const cs_x86_op *op = &x->operands[k];
			if (op->type != X86_OP_MEM || op->mem.index != X86_REG_INVALID || op->mem.segment != X86_REG_INVALID)
				continue;
			if ((op->mem.base == X86_REG_RBP && out->frame_pointer) || op->mem.base == X86_REG_RSP) {
				stack = true;
				slot_note(slots, &n_slots, op->mem.base, op->mem.disp, op->access);
			}
		}
		out->stack_accesses += stack;
	}
	code_loads(cs, insn, n, lo, hi, out);
	cs_free(insn, n);
	cs_close(&cs);
	out->slots = n_slots;
	for (unsigned i = 0; i < n_slots; i++)
		out->reloaded_slots += slots[i].loaded && slots[i].stored;
	if (!out->instructions) {
		snprintf(out->error, sizeof(out->error), "no instruction of 0x%llx-0x%llx decoded as x86-64",
			 (unsigned long long)lo, (unsigned long long)hi);
		return -EINVAL;
	}
	out->decoded = true;
	return 0;
}
#else
int code_describe(const uint8_t *bytes, size_t len, uint64_t addr, uint64_t lo, uint64_t hi, struct sample_code *out)
{
	(void)bytes;
	(void)len;
	memset(out, 0, sizeof(*out));
	out->function_start = addr;
	out->loop_start = lo;
	out->loop_end = hi;
	snprintf(out->error, sizeof(out->error), "this tlbprof was built without Capstone (libcapstone-dev)");
	return -ENOTSUP;
}
#endif

/* The file bytes of [start, end) through the PT_LOAD header that maps them. */
static int read_vaddr(int fd, Elf *elf, uint64_t start, uint64_t end, uint8_t *buf)
{
	uint64_t off;
	int rc = elf_vaddr_offset(elf, start, end - start, &off);

	if (rc != 0)
		return rc;
	return pread(fd, buf, end - start, (off_t)off) == (ssize_t)(end - start) ? 0 : -EIO;
}

int code_read(const char *path, uint64_t function_start, uint64_t lo, uint64_t hi, struct sample_code *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	out->function_start = function_start;
	out->loop_start = lo;
	out->loop_end = hi;
	if (function_start > lo || lo >= hi || hi - function_start > CODE_MAX_BYTES) {
		snprintf(out->error, sizeof(out->error), "the hot loop 0x%llx-0x%llx is not within %u bytes of its "
			 "function's start 0x%llx", (unsigned long long)lo, (unsigned long long)hi, CODE_MAX_BYTES,
			 (unsigned long long)function_start);
		return -ERANGE;
	}
	uint8_t *buf = malloc(hi + SAMPLE_CODE_LATCH_BYTES - function_start);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = NULL;
	if (!buf || fd < 0) {
		rc = !buf ? -ENOMEM : -errno;
		snprintf(out->error, sizeof(out->error), "%.100s: %s", path, strerror(-rc));
		goto out;
	}
	if (elf_version(EV_CURRENT) == EV_NONE || !(elf = elf_begin(fd, ELF_C_READ, NULL)) ||
	    elf_kind(elf) != ELF_K_ELF) {
		rc = -EINVAL;
		snprintf(out->error, sizeof(out->error), "%.100s: not an ELF file", path);
		goto out;
	}
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64) {
		rc = -ENOTSUP;
		snprintf(out->error, sizeof(out->error), "%.100s: not x86-64 code (e_machine %u)", path,
			 gelf_getehdr(elf, &eh) ? eh.e_machine : 0u);
		goto out;
	}
	/* With the bytes past hi where the segment has them: the loop's jump back may lie beyond the last sample. */
	uint64_t end = hi + SAMPLE_CODE_LATCH_BYTES;
	if (read_vaddr(fd, elf, function_start, end, buf) != 0)
		end = hi;
	if (end == hi && (rc = read_vaddr(fd, elf, function_start, hi, buf)) != 0) {
		snprintf(out->error, sizeof(out->error), "%.100s: 0x%llx-0x%llx is not in a loaded segment", path,
			 (unsigned long long)function_start, (unsigned long long)hi);
		goto out;
	}
	rc = code_describe(buf, end - function_start, function_start, lo, hi, out);
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}
