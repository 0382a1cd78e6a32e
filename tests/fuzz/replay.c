/* SPDX-License-Identifier: MIT */
/* Without libFuzzer (gcc builds): feed every file named on the command line, or in the directories named, to the target once. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return 1;
	}
	do {
		if (len == cap) {
			uint8_t *t = realloc(buf, cap = cap ? 2 * cap : 4096);
			if (!t) {
				free(buf);
				fclose(f);
				return 1;
			}
			buf = t;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int rc = 0, files = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *e;
			while (d && (e = readdir(d))) {
				char p[4096];
				if (e->d_name[0] == '.')
					continue;
				snprintf(p, sizeof(p), "%s/%s", argv[i], e->d_name);
				rc |= replay_file(p);
				files++;
			}
			if (d)
				closedir(d);
		} else {
			rc |= replay_file(argv[i]);
			files++;
		}
	}
	fprintf(stderr, "replayed %d inputs\n", files);
	return rc;
}
