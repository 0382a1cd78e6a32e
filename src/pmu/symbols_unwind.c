/* SPDX-License-Identifier: MIT */
/*
 * A stripped executable still says where its functions begin and end: the
 * unwinder needs a frame description entry (FDE) for each, and its first two
 * fields are the function's start and length. perf shows such code as
 * [unknown]; tlbprof names it by its start (symbols_object.c) so that a
 * stripped benchmark's hot loop can be found and read.
 *
 * The FDE's fields are encoded as its CIE's augmentation says ('R': the
 * DW_EH_PE_* pointer encoding; none: absolute). libdw splits the section into
 * CIEs and FDEs (dwarf_next_cfi); the decoding below is ours.
 */
#include "pmu/symbols_unwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

/* A function longer than this is no function: a broken or hostile entry. */
#define UNWIND_MAX_FUNCTION (16ull << 20)

struct encoded {
	const uint8_t *p, *end;	/* the bytes left */
	const uint8_t *base;	/* the section's data, whose first byte is at section_addr */
	uint64_t section_addr;
	unsigned addr_size;	/* 8 for ELFCLASS64, 4 for ELFCLASS32 */
};

static bool leb128(struct encoded *e, bool is_signed, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t byte;

	do {
		if (e->p >= e->end || shift >= 64)
			return false;
		byte = *e->p++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	if (is_signed && shift < 64 && (byte & 0x40))
		v |= ~0ull << shift;
	*out = v;
	return true;
}

static bool fixed(struct encoded *e, unsigned size, bool is_signed, uint64_t *out)
{
	uint64_t v = 0;

	if ((size_t)(e->end - e->p) < size)
		return false;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)e->p[i] << (8 * i);	/* little-endian: the x86-64 and AArch64 ABIs */
	if (is_signed && size < 8 && (v >> (8 * size - 1)) & 1)
		v |= ~0ull << (8 * size);
	e->p += size;
	*out = v;
	return true;
}

/* One value in encoding enc (DW_EH_PE_*), PC-relative ones made absolute; false for what is not supported. */
static bool read_encoded(struct encoded *e, uint8_t enc, uint64_t *out)
{
	uint64_t here = e->section_addr + (uint64_t)(e->p - e->base);
	bool ok;

	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
		ok = fixed(e, e->addr_size, false, out);
		break;
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128:
		ok = leb128(e, (enc & 0x0f) == DW_EH_PE_sleb128, out);
		break;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		ok = fixed(e, 2, (enc & 0x0f) == DW_EH_PE_sdata2, out);
		break;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		ok = fixed(e, 4, (enc & 0x0f) == DW_EH_PE_sdata4, out);
		break;
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		ok = fixed(e, 8, (enc & 0x0f) == DW_EH_PE_sdata8, out);
		break;
	default:
		return false;
	}
	if (!ok)
		return false;
	switch (enc & 0x70) {
	case DW_EH_PE_absptr:
		return true;
	case DW_EH_PE_pcrel:
		*out += here;
		return true;
	default:
		return false;	/* text-, data-, function-relative, aligned: not emitted for x86-64 or AArch64 */
	}
}

/* The encoding of the FDE pointers a CIE's augmentation gives, or -1 where it cannot be told. */
static int fde_encoding(const Dwarf_CIE *cie, struct encoded *e)
{
	const char *a = cie->augmentation;
	uint64_t skip;

	if (!a || !*a)
		return DW_EH_PE_absptr;
	if (*a != 'z' || !cie->augmentation_data)
		return -1;
	e->p = cie->augmentation_data;
	e->end = cie->augmentation_data + cie->augmentation_data_size;
	for (a++; *a; a++) {
		switch (*a) {
		case 'R':
			return e->p < e->end ? *e->p : -1;
		case 'L':
			if (e->p >= e->end)
				return -1;
			e->p++;
			break;
		case 'P':
			if (e->p >= e->end)
				return -1;
			uint8_t penc = *e->p++;
			if (!read_encoded(e, penc & 0x7f, &skip))	/* the personality routine's pointer */
				return -1;
			break;
		case 'S':	/* a signal frame */
		case 'B':	/* AArch64 branch target identification */
		case 'G':	/* AArch64 memory tagging */
			break;
		default:
			return -1;
		}
	}
	return DW_EH_PE_absptr;
}

static Elf_Scn *section_named(Elf *elf, const char *name, GElf_Shdr *shdr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *s;

		if (gelf_getshdr(scn, shdr) && shdr->sh_type != SHT_NOBITS &&
		    (s = elf_strptr(elf, shstrndx, shdr->sh_name)) && strcmp(s, name) == 0)
			return scn;
	}
	return NULL;
}

static int range_cmp(const void *a, const void *b)
{
	const struct symbols_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/* The FDE at entry into *r. False when its CIE or encoding cannot be read. */
static bool fde_range(const unsigned char *ident, Elf_Data *data, const Dwarf_FDE *fde, struct encoded *e,
		      struct symbols_range *r)
{
	Dwarf_CFI_Entry cie;
	Dwarf_Off next;
	uint64_t start, length;
	int enc;

	if (dwarf_next_cfi(ident, data, true, fde->CIE_pointer, &next, &cie) != 0 || !dwarf_cfi_cie_p(&cie))
		return false;
	enc = fde_encoding(&cie.cie, e);
	if (enc < 0 || (enc & DW_EH_PE_indirect))
		return false;
	e->p = fde->start;
	e->end = fde->end;
	if (!read_encoded(e, (uint8_t)enc, &start) || !read_encoded(e, (uint8_t)(enc & 0x0f), &length))
		return false;
	if (start == 0 || length == 0 || length > UNWIND_MAX_FUNCTION || start + length < start)
		return false;
	*r = (struct symbols_range){ start, start + length };
	return true;
}

/*
 * Past an entry libdw refused (an FDE naming no CIE, say), by its own length,
 * so that one bad entry does not cost the rest. False at the terminator or
 * where the length runs past the section.
 */
static bool skip_entry(const Elf_Data *data, Dwarf_Off off, Dwarf_Off *next)
{
	struct encoded e = { .p = (const uint8_t *)data->d_buf + off, .end = (const uint8_t *)data->d_buf + data->d_size };
	uint64_t length;

	if (off >= data->d_size || !fixed(&e, 4, false, &length) || length == 0)
		return false;
	if (length == 0xffffffffu && !fixed(&e, 8, false, &length))	/* the 64-bit DWARF format */
		return false;
	if (length > (uint64_t)(e.end - e.p))
		return false;
	*next = (Dwarf_Off)(e.p - (const uint8_t *)data->d_buf) + length;
	return true;
}

int symbols_unwind_ranges(Elf *elf, struct symbols_range **out, size_t *n)
{
	const unsigned char *ident = (const unsigned char *)elf_getident(elf, NULL);
	struct symbols_range *ranges = NULL;
	size_t count = 0, cap = 0, kept = 0;
	GElf_Shdr shdr;
	Elf_Scn *scn = section_named(elf, ".eh_frame", &shdr);
	Elf_Data *data;

	*out = NULL;
	*n = 0;
	if (!ident)
		return -EINVAL;
	if (!scn)
		return -ENOENT;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return -EINVAL;
	struct encoded e = { .base = data->d_buf, .section_addr = shdr.sh_addr,
			     .addr_size = ident[EI_CLASS] == ELFCLASS64 ? 8 : 4 };
	for (Dwarf_Off off = 0, next;; off = next) {
		Dwarf_CFI_Entry entry;
		struct symbols_range r;

		int rc = dwarf_next_cfi(ident, data, true, off, &next, &entry);

		if (rc == 1)
			break;	/* the end, or the zero terminator */
		if (rc != 0 && !skip_entry(data, off, &next))
			break;	/* an entry whose length runs past the section: the rest cannot be found */
		if (next <= off)
			break;
		if (rc != 0 || dwarf_cfi_cie_p(&entry) || !fde_range(ident, data, &entry.fde, &e, &r))
			continue;
		if (!array_grow((void **)&ranges, &cap, count + 1, sizeof(*ranges), 256)) {
			free(ranges);
			return -ENOMEM;
		}
		ranges[count++] = r;
	}
	if (count)
		qsort(ranges, count, sizeof(*ranges), range_cmp);
	for (size_t i = 0; i < count; i++) {
		if (i + 1 < count && ranges[i].end > ranges[i + 1].start)
			ranges[i].end = ranges[i + 1].start;
		if (ranges[i].start < ranges[i].end)
			ranges[kept++] = ranges[i];
	}
	*out = ranges;
	*n = kept;
	if (!kept) {
		free(ranges);
		*out = NULL;
	}
	return 0;
}
