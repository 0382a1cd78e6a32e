/* SPDX-License-Identifier: MIT */
/* Reads who built an ELF file and how (.comment, .GCC.command.line, DWARF producers) and its shape, through libelf. */
#include "pmu/elfinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Distinct strings remembered per section for de-duplication; more are still joined, only unchecked. */
#define ELFINFO_MAX_DISTINCT 256

/*
 * Append the NUL-separated strings of data to out (size out_size), joined by
 * sep, skipping empty strings and repeats. A linked program carries one
 * .comment string (and, with -frecord-gcc-switches, one set of switches) per
 * object file, so the same text appears many times. Only whole strings are
 * appended: one that does not fit ends the list rather than leaving half a
 * switch behind.
 */
static void join_strings(const char *data, size_t size, const char *sep, char *out, size_t out_size)
{
	const char *seen[ELFINFO_MAX_DISTINCT];
	size_t n_seen = 0, len = strlen(out), sep_len = strlen(sep);

	for (size_t off = 0; off < size;) {
		const char *s = data + off;
		const char *nul = memchr(s, '\0', size - off);
		size_t n = nul ? (size_t)(nul - s) : size - off;
		bool repeat = false;

		off += n + 1;
		if (n == 0)
			continue;
		for (size_t i = 0; i < n_seen && !repeat; i++)
			repeat = strlen(seen[i]) == n && memcmp(seen[i], s, n) == 0;
		if (repeat)
			continue;
		/* The last string may lack its NUL; it is then compared by length only. */
		if (n_seen < ELFINFO_MAX_DISTINCT && nul)
			seen[n_seen++] = s;
		if (len + (len ? sep_len : 0) + n + 1 > out_size)
			return;
		if (len) {
			memcpy(out + len, sep, sep_len);
			len += sep_len;
		}
		memcpy(out + len, s, n);
		len += n;
		out[len] = '\0';
	}
}

/*
 * Section contents as libelf gives them, decompressed first: SHF_COMPRESSED
 * (gcc -gz, the ELF gABI format) or a .zdebug_* name (the older GNU format).
 */
static Elf_Data *section_data(Elf_Scn *scn, const GElf_Shdr *shdr, const char *name)
{
	if (shdr->sh_type == SHT_NOBITS)
		return NULL;
	if ((shdr->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return NULL;
	if (strncmp(name, ".zdebug", 7) == 0 && elf_compress_gnu(scn, 0, 0) < 0)
		return NULL;
	return elf_getdata(scn, NULL);
}

/* ---- optimisation level ----------------------------------------------- */

const char *elf_opt_source_name(enum elf_opt_source source)
{
	static const char *const names[] = {
		[ELF_OPT_SOURCE_NONE] = "none",
		[ELF_OPT_SOURCE_COMMAND_LINE] = "gcc-command-line",
		[ELF_OPT_SOURCE_DWARF_PRODUCER] = "dwarf-producer",
	};

	if ((unsigned)source >= sizeof(names) / sizeof(names[0]))
		return NULL;
	return names[source];
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The canonical level of one token t[0..n) when it is a -O switch, else NULL. */
static const char *opt_token(const char *t, size_t n)
{
	static const char *const numbered[] = { "-O0", "-O1", "-O2", "-O3" };
	static const struct {
		const char *suffix;
		const char *level;
	} named[] = {
		{ "s", "-Os" }, { "z", "-Oz" }, { "fast", "-Ofast" }, { "g", "-Og" },
	};
	const char *rest = t + 2;
	size_t rest_n, digits = 0;
	bool nonzero = false;

	if (n < 2 || t[0] != '-' || t[1] != 'O')
		return NULL;
	rest_n = n - 2;
	if (rest_n == 0)
		return "-O1";	/* plain -O */
	while (digits < rest_n && rest[digits] >= '0' && rest[digits] <= '9') {
		nonzero |= rest[digits] != '0';
		digits++;
	}
	if (digits == rest_n) {
		/* gcc and clang read -O<n> above 3 as -O3; leading zeros are still a number. */
		unsigned v = 0;

		for (size_t i = 0; i < digits && v <= 3; i++)
			v = v * 10 + (unsigned)(rest[i] - '0');
		return numbered[!nonzero ? 0 : v > 3 ? 3 : v];
	}
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (strlen(named[i].suffix) == rest_n && memcmp(named[i].suffix, rest, rest_n) == 0)
			return named[i].level;
	return NULL;
}

/* What one unit's switches say: how many switches, the last -O, whether it is the toolchain's runtime. */
struct unit_scan {
	unsigned switches;
	const char *level;
	bool libgcc;
};

/* Scan the white-space separated tokens of s[0..n) into u. */
static void scan_switches(const char *s, size_t n, struct unit_scan *u)
{
	static const char building_libgcc[] = "-fbuilding-libgcc";

	for (size_t i = 0; i < n;) {
		size_t start;
		const char *level;

		while (i < n && is_space(s[i]))
			i++;
		start = i;
		while (i < n && !is_space(s[i]) && s[i] != '\0')
			i++;
		if (i == start) {
			i++;	/* a NUL inside the range */
			continue;
		}
		if (s[start] != '-' || i - start < 2)
			continue;	/* "GNU", "C17", "12.2.0", a file name */
		u->switches++;
		level = opt_token(s + start, i - start);
		if (level)
			u->level = level;
		if (i - start == sizeof(building_libgcc) - 1 && memcmp(s + start, building_libgcc, i - start) == 0)
			u->libgcc = true;
	}
}

const char *elf_opt_level_parse(const char *switches)
{
	struct unit_scan u = { 0 };

	if (!switches)
		return NULL;
	scan_switches(switches, strlen(switches), &u);
	return u.level;
}

/* The levels of every unit read from one source. */
struct opt_acc {
	unsigned units;
	bool defaulted;
	const char *levels[8];	/* distinct, in order of appearance */
	size_t n_levels;
};

/*
 * Count one unit. A unit without any switch recorded nothing (clang's bare
 * producer, gcc -gno-record-gcc-switches) and tells nothing; one with
 * switches but no -O was built at the compilers' default, -O0.
 */
static void opt_acc_add(struct opt_acc *acc, const struct unit_scan *u)
{
	const char *level = u->level;

	if (u->switches == 0 || u->libgcc)
		return;
	if (!level) {
		level = "-O0";
		acc->defaulted = true;
	}
	acc->units++;
	for (size_t i = 0; i < acc->n_levels; i++)
		if (acc->levels[i] == level)	/* canonical static strings */
			return;
	if (acc->n_levels < sizeof(acc->levels) / sizeof(acc->levels[0]))
		acc->levels[acc->n_levels++] = level;
}

/* Call fn(s, n, ctx) for every non-empty NUL-separated string of data (the last may lack its NUL). */
static void for_each_string(const char *data, size_t size, void (*fn)(const char *s, size_t n, void *ctx),
			    void *ctx)
{
	for (size_t off = 0; off < size;) {
		const char *s = data + off;
		const char *nul = memchr(s, '\0', size - off);
		size_t n = nul ? (size_t)(nul - s) : size - off;

		off += n + 1;
		if (n)
			fn(s, n, ctx);
	}
}

/*
 * .GCC.command.line: gcc 11 and later and clang write one string per object
 * (the whole command line); older gcc wrote one switch per string, so a run
 * of single-token strings is one unit (the objects' boundaries are lost
 * there; the last -O of the run wins).
 */
struct command_line_scan {
	struct opt_acc *acc;
	struct unit_scan run;
	bool in_run;
};

static void command_line_string(const char *s, size_t n, void *ctx)
{
	struct command_line_scan *c = ctx;
	bool single = true;
	struct unit_scan u = { 0 };

	for (size_t i = 0; i < n && single; i++)
		single = !is_space(s[i]);
	if (single) {
		scan_switches(s, n, &c->run);
		c->in_run = true;
		return;
	}
	if (c->in_run) {
		opt_acc_add(c->acc, &c->run);
		memset(&c->run, 0, sizeof(c->run));
		c->in_run = false;
	}
	scan_switches(s, n, &u);
	opt_acc_add(c->acc, &u);
}

static bool starts_with_n(const char *s, size_t n, const char *prefix)
{
	size_t len = strlen(prefix);

	return n >= len && memcmp(s, prefix, len) == 0;
}

/*
 * Whether s[0..n) is a DW_AT_producer as gcc or clang write it: "GNU <lang>
 * <version> [switches]" ("GNU AS 2.40" for assembler units: *switches_meaningful
 * false), or one naming clang ("Debian clang version 14.0.6 [command line]").
 * The linker's .debug_str holds names and producers; only producers have
 * these shapes (an identifier holds no space).
 */
static bool is_producer(const char *s, size_t n, bool *switches_meaningful)
{
	*switches_meaningful = true;
	if (starts_with_n(s, n, "GNU ")) {
		size_t i = 4;

		if (i >= n || is_space(s[i]))
			return false;
		while (i < n && !is_space(s[i]))
			i++;
		if (i + 1 >= n || s[i] != ' ' || s[i + 1] < '0' || s[i + 1] > '9')
			return false;
		*switches_meaningful = !starts_with_n(s, n, "GNU AS ");
		return true;
	}
	return memmem(s, n, "clang version ", 14) != NULL || starts_with_n(s, n, "clang LLVM ");
}

struct producer_scan {
	struct opt_acc *acc;
	char *out;
	size_t out_size;
	bool full;
};

static void producer_string(const char *s, size_t n, void *ctx)
{
	struct producer_scan *p = ctx;
	bool meaningful;
	struct unit_scan u = { 0 };

	if (!is_producer(s, n, &meaningful))
		return;
	if (meaningful) {
		scan_switches(s, n, &u);
		opt_acc_add(p->acc, &u);
	}
	/* The linker merged equal strings already; listing stops at the first that does not fit. */
	if (!p->full) {
		size_t len = strlen(p->out), sep = len ? 2 : 0;

		if (len + sep + n + 1 > p->out_size) {
			p->full = true;
			return;
		}
		memcpy(p->out + len, "; ", sep);
		memcpy(p->out + len + sep, s, n);
		p->out[len + sep + n] = '\0';
	}
}

/* Fill opt_level, opt_levels, opt_units and opt_level_defaulted from acc. */
static void opt_acc_store(const struct opt_acc *acc, enum elf_opt_source source, struct elf_provenance *out)
{
	size_t len = 0;

	out->opt_source = source;
	out->opt_units = acc->units;
	out->opt_level_defaulted = acc->defaulted;
	snprintf(out->opt_level, sizeof(out->opt_level), "%s", acc->n_levels == 1 ? acc->levels[0] : "mixed");
	for (size_t i = 0; i < acc->n_levels; i++) {
		int w = snprintf(out->opt_levels + len, sizeof(out->opt_levels) - len, "%s%s", i ? " " : "",
				 acc->levels[i]);

		if (w < 0 || (size_t)w >= sizeof(out->opt_levels) - len)
			break;	/* cannot happen: 8 levels of at most 6 characters */
		len += (size_t)w;
	}
}

/* ---- PIE, build-id ---------------------------------------------------- */

/* Store an NT_GNU_BUILD_ID note of data as hex; returns true when one was found. */
static bool read_build_id(Elf_Data *data, struct elf_provenance *out)
{
	GElf_Nhdr nhdr;
	size_t off = 0, next, name_off, desc_off;

	while (data && data->d_buf && (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		const unsigned char *base = data->d_buf;

		if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 && memcmp(base + name_off, "GNU", 4) == 0 &&
		    nhdr.n_descsz > 0) {
			size_t n = nhdr.n_descsz;

			if (n > (sizeof(out->build_id) - 1) / 2)
				n = (sizeof(out->build_id) - 1) / 2;
			for (size_t i = 0; i < n; i++)
				snprintf(out->build_id + 2 * i, 3, "%02x", base[desc_off + i]);
			return true;
		}
		off = next;
	}
	return false;
}

/*
 * From the program headers: PT_INTERP, DF_1_PIE and DT_SONAME in the dynamic
 * section (static-pie has no interpreter), and the build-id note. A file whose
 * program headers lie beyond its end simply has none of these.
 */
static void read_segments(Elf *elf, struct elf_provenance *out)
{
	bool interp = false, df1_pie = false, soname = false;
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr phdr;
		Elf_Data *data;

		if (!gelf_getphdr(elf, (int)i, &phdr))
			continue;
		switch (phdr.p_type) {
		case PT_INTERP:
			interp = true;
			break;
		case PT_DYNAMIC:
			data = elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset, phdr.p_filesz, ELF_T_DYN);
			for (int j = 0; data && j < (int)(phdr.p_filesz / gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT));
			     j++) {
				GElf_Dyn dyn;

				if (!gelf_getdyn(data, j, &dyn) || dyn.d_tag == DT_NULL)
					break;
				if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
					df1_pie = true;
				else if (dyn.d_tag == DT_SONAME)
					soname = true;
			}
			break;
		case PT_NOTE:
			if (!out->build_id[0]) {
				data = elf_getdata_rawchunk(elf, (int64_t)phdr.p_offset, phdr.p_filesz,
							    phdr.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
				read_build_id(data, out);
			}
			break;
		default:
			break;
		}
	}
	/*
	 * A shared object that can also be run (glibc's libc.so.6) has an
	 * interpreter too, but a soname: that is a library, not a PIE.
	 */
	out->pie = out->elf_type == ET_DYN && (df1_pie || (interp && !soname));
}

int elf_provenance_read(const char *path, struct elf_provenance *out)
{
	struct stat st;
	GElf_Ehdr ehdr;
	size_t shstrndx, shnum;
	struct opt_acc from_command_line = { 0 }, from_producers = { 0 };
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd, err = 0;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;	/* libelf older than the ELF version it was built for */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) != 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	/*
	 * elf_begin accepts any readable file and reports ELF_K_NONE for one that
	 * is not ELF. A header that points at a section table beyond the end of
	 * the file (a truncated copy) reads as zero sections: that is no ELF file
	 * either, unlike one that has no section table at all (e_shoff = 0).
	 */
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) || elf_getshdrnum(elf, &shnum) != 0 ||
	    (ehdr.e_shoff != 0 && shnum == 0)) {
		err = -EINVAL;
		goto out;
	}
	out->elf_type = (uint16_t)ehdr.e_type;
	read_segments(elf, out);
	if (shnum == 0)
		goto out;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0) {
		err = -EINVAL;
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr shdr;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (!name)
			continue;
		if (shdr.sh_type == SHT_SYMTAB && shdr.sh_entsize && shdr.sh_size / shdr.sh_entsize > 1)
			out->has_symtab = true;	/* entry 0 is the null symbol */
		else if (shdr.sh_type == SHT_NOTE && !out->build_id[0])
			read_build_id(section_data(scn, &shdr, name), out);
		if (strcmp(name, ".comment") == 0) {
			data = section_data(scn, &shdr, name);
			if (data && data->d_buf)
				join_strings(data->d_buf, data->d_size, "; ", out->comment, sizeof(out->comment));
		} else if (strcmp(name, ".GCC.command.line") == 0) {
			data = section_data(scn, &shdr, name);
			if (data && data->d_buf) {
				struct command_line_scan c = { .acc = &from_command_line };

				join_strings(data->d_buf, data->d_size, " ", out->command_line,
					     sizeof(out->command_line));
				for_each_string(data->d_buf, data->d_size, command_line_string, &c);
				if (c.in_run)
					opt_acc_add(&from_command_line, &c.run);
			}
		} else if (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0) {
			out->has_debug_info = true;
		} else if (strcmp(name, ".debug_str") == 0 || strcmp(name, ".zdebug_str") == 0) {
			/*
			 * Producers are DW_FORM_strp (gcc) or DW_FORM_strx (clang)
			 * strings, both in .debug_str; .debug_line_str holds only
			 * the line table's file and directory names.
			 */
			data = section_data(scn, &shdr, name);
			if (data && data->d_buf) {
				struct producer_scan p = { .acc = &from_producers, .out = out->producers,
							   .out_size = sizeof(out->producers) };

				for_each_string(data->d_buf, data->d_size, producer_string, &p);
			}
		}
	}
	/* The command line names every switch; producers are the fallback (gcc -g without -frecord-gcc-switches). */
	if (from_command_line.units)
		opt_acc_store(&from_command_line, ELF_OPT_SOURCE_COMMAND_LINE, out);
	else if (from_producers.units)
		opt_acc_store(&from_producers, ELF_OPT_SOURCE_DWARF_PRODUCER, out);
out:
	if (err)
		memset(out, 0, sizeof(*out));	/* nothing half-read from a file that is not ELF */
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int elf_vaddr_offset(Elf *elf, uint64_t vaddr, uint64_t len, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr + len <= ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ERANGE;
}
