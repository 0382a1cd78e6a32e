/* SPDX-License-Identifier: MIT */
/* Reads who built an ELF file and how: .comment and .GCC.command.line through libelf. */
#include "elfinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
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

/* Section contents as libelf gives them, decompressed first when SHF_COMPRESSED. */
static Elf_Data *section_data(Elf_Scn *scn, const GElf_Shdr *shdr)
{
	if (shdr->sh_type == SHT_NOBITS)
		return NULL;
	if ((shdr->sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
		return NULL;
	return elf_getdata(scn, NULL);
}

int elf_provenance_read(const char *path, struct elf_provenance *out)
{
	struct stat st;
	GElf_Ehdr ehdr;
	size_t shstrndx, shnum;
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
		if (strcmp(name, ".comment") == 0) {
			data = section_data(scn, &shdr);
			if (data && data->d_buf)
				join_strings(data->d_buf, data->d_size, "; ", out->comment, sizeof(out->comment));
		} else if (strcmp(name, ".GCC.command.line") == 0) {
			data = section_data(scn, &shdr);
			if (data && data->d_buf)
				join_strings(data->d_buf, data->d_size, " ", out->command_line,
					     sizeof(out->command_line));
		}
	}
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}
