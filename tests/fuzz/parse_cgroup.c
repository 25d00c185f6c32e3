/* SPDX-License-Identifier: MIT */
/*
 * cgroup's parsers: single values, cpu.max, keyed files, a thread's cgroup
 * file, mountinfo lines with their escapes and the path/mount arithmetic,
 * and the v1 row keys, all on the same input.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "cgroup_parse.h"
#include "fuzz.h"

static void mountinfo(const char *s, size_t size, const char *path, size_t plen)
{
	const char *p = s, *end = s + size;
	struct ctp_cg_mount m;
	char buf[512];
	int r;

	while ((r = ctp_cg_mountinfo_next(&p, end, &m)) != 0 && p <= end) {
		const char *rel;
		size_t rlen;

		if (r < 0) {
			if (r == -EMSGSIZE)
				break;
			continue;
		}
		ctp_cg_unescape(m.root, m.root_len, buf, sizeof(buf));
		ctp_cg_unescape(m.point, m.point_len, buf, sizeof(buf));
		ctp_cg_mount_holds(&m, "cpu,cpuacct", 11);
		ctp_cg_path_in_mount(path, plen, m.root, m.root_len, &rel,
				     &rlen);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct ctp_cg_keyed *kv = malloc(sizeof(*kv));
	struct ctp_cg_membership *mb = malloc(sizeof(*mb));
	struct ctp_cg_cpu_max cm;
	const char *w;
	size_t wl;
	uint64_t u;
	int64_t i;
	bool max;
	char key[4200];

	ctp_cg_parse_u64(s, size, &u);
	ctp_cg_parse_u64_max(s, size, &u, &max);
	ctp_cg_parse_i64(s, size, &i);
	ctp_cg_parse_cpu_max(s, size, &cm);
	ctp_cg_parse_line(s, size, &w, &wl);

	if (kv)
		ctp_cg_parse_keyed(s, size, kv);
	if (mb && ctp_cg_parse_membership(s, size, mb) >= 0) {
		for (size_t k = 0; k < mb->n; k++) {
			const struct ctp_cg_line *l = &mb->line[k];
			int n = ctp_cg_v1_key(key, sizeof(key), l->ctrl,
					      l->ctrl_len, l->path,
					      l->path_len);
			const char *c, *p;
			size_t cl, pl;
			if (n > 0)
				ctp_cg_v1_key_split(key, (size_t)n, &c, &cl, &p,
						    &pl);
			mountinfo(s, size, l->path, l->path_len);
		}
	}
	ctp_cg_list_has(s, size, "cpu", 3);
	mountinfo(s, size, "/a/b", 4);
	free(kv);
	free(mb);
	return 0;
}
