/* SPDX-License-Identifier: MIT */
/*
 * Replay inputs through a fuzz harness without libFuzzer: every regular
 * file named on the command line, or found in a directory named there.
 * A crash or a sanitizer report ends the process (the test fails); else
 * it prints how many inputs ran and exits 0. An absent directory is
 * skipped (a harness may have no regression input yet).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Whole file into memory: 0, or -1 with a message. */
static int run_file(const char *path, unsigned *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (len == cap) {
			unsigned char *nb;
			cap = cap ? 2 * cap : 65536;
			nb = realloc(buf, cap);
			if (!nb) {
				fclose(f);
				free(buf);
				return -1;
			}
			buf = nb;
		}
		size_t r = fread(buf + len, 1, cap - len, f);
		if (r == 0)
			break;
		len += r;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	(*n)++;
	return 0;
}

static int run_path(const char *path, unsigned *n)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int ret = 0;

	if (stat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return run_file(path, n);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)) && ret == 0) {
		char sub[4096];
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (stat(sub, &st) == 0 && S_ISREG(st.st_mode))
			ret = run_file(sub, n);
	}
	closedir(d);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned n = 0;

	for (int i = 1; i < argc; i++)
		if (run_path(argv[i], &n) < 0)
			return 1;
	printf("%u inputs replayed\n", n);
	return 0;
}
