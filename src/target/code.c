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
	uint8_t *buf = malloc(hi - function_start);
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
	if ((rc = read_vaddr(fd, elf, function_start, hi, buf)) != 0) {
		snprintf(out->error, sizeof(out->error), "%.100s: 0x%llx-0x%llx is not in a loaded segment", path,
			 (unsigned long long)function_start, (unsigned long long)hi);
		goto out;
	}
	rc = code_describe(buf, hi - function_start, function_start, lo, hi, out);
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}
