/* SPDX-License-Identifier: MIT */
/* Picking files of a recording by time (see recdir.h). */
#include "recdir.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "config.h"

#define PREFIX "ctprof-"
#define SUFFIX ".ctprof.zst"

int ctp_recdir_is(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int ctp_recdir_name(const char *dir, uint64_t ns, char *out, size_t n)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char stamp[32];
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%S", &tm);
	int w = snprintf(out, n, "%s/" PREFIX "%s.%03uZ" SUFFIX, dir, stamp,
			 (unsigned)(ns % 1000000000ull / 1000000ull));
	return w > 0 && (size_t)w < n ? 0 : -ENAMETOOLONG;
}

bool ctp_recdir_is_file(const char *name)
{
	size_t n = strlen(name), p = strlen(PREFIX), s = strlen(SUFFIX);
	return n > p + s && strncmp(name, PREFIX, p) == 0 &&
	       strcmp(name + n - s, SUFFIX) == 0;
}

/* The capture time (ns since the epoch) of a recording's file name. */
static int name_time(const char *name, int64_t *ns)
{
	struct tm tm = {0};
	unsigned ms;
	char z;
	if (!ctp_recdir_is_file(name))
		return -EINVAL;
	if (sscanf(name + strlen(PREFIX), "%4d%2d%2dT%2d%2d%2d.%3u%c",
		   &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
		   &tm.tm_min, &tm.tm_sec, &ms, &z) != 8 ||
	    z != 'Z')
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	*ns = (int64_t)t * 1000000000 + (int64_t)ms * 1000000;
	return 0;
}

/* `when` as ns since the epoch; INT64_MAX for "latest". */
static int parse_when(const char *when, int64_t *ns)
{
	struct timespec now;
	uint64_t d;
	clock_gettime(CLOCK_REALTIME, &now);
	if (strcmp(when, "latest") == 0) {
		*ns = INT64_MAX;
		return 0;
	}
	if (when[0] == '-') {
		if (ctp_config_parse_duration(when + 1, &d) < 0 ||
		    d > (uint64_t)INT64_MAX / 2)
			return -EINVAL;
		*ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec -
		      (int64_t)d;
		return 0;
	}
	struct tm tm;
	time_t t = now.tv_sec;
	localtime_r(&t, &tm);
	tm.tm_sec = 0;
	const char *end = strptime(when, "%Y-%m-%dT%H:%M", &tm);
	if (!end)
		end = strptime(when, "%Y-%m-%d %H:%M", &tm);
	if (!end)
		end = strptime(when, "%H:%M", &tm);
	if (end && *end == ':')
		end = strptime(end, ":%S", &tm);
	if (!end || *end)
		return -EINVAL;
	tm.tm_isdst = -1;
	*ns = (int64_t)mktime(&tm) * 1000000000;
	return 0;
}

int ctp_recdir_pick(const char *dir, const char *when, const char *before,
		    char *out, size_t n, char *err, size_t errlen)
{
	int64_t at, t, best_t = INT64_MIN;
	const char *bname = before ? strrchr(before, '/') : NULL;
	bname = bname ? bname + 1 : before;
	if (!ctp_recdir_is(dir))
		return -ENOTDIR;
	if (!before && parse_when(when, &at) < 0) {
		snprintf(err, errlen,
			 "'%s' is no time: latest, -DURATION (-10m), "
			 "YYYY-mm-ddTHH:MM[:SS] or HH:MM[:SS]",
			 when);
		return -EINVAL;
	}
	if (before && name_time(bname, &at) == 0)
		at -= 1; /* strictly before */
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	char best[256] = "", earliest[256] = "";
	int64_t first = INT64_MAX;
	for (struct dirent *e; (e = readdir(d));) {
		if (name_time(e->d_name, &t) < 0)
			continue;
		if (t < first && strlen(e->d_name) < sizeof(earliest)) {
			first = t;
			snprintf(earliest, sizeof(earliest), "%s", e->d_name);
		}
		if (t <= at && t > best_t && strlen(e->d_name) < sizeof(best)) {
			best_t = t;
			snprintf(best, sizeof(best), "%s", e->d_name);
		}
	}
	closedir(d);
	/* A time before the recording began: its first file (the last hour
	 * of a recording 20 minutes old is all of it). */
	if (!best[0] && !before && earliest[0])
		snprintf(best, sizeof(best), "%s", earliest);
	if (!best[0]) {
		snprintf(err, errlen,
			 first == INT64_MAX
				 ? "%s: no snapshot of a recording (ctprof-"
				   "*.ctprof.zst) in it"
				 : "%s: no snapshot of the recording at or "
				   "before "
				   "that time",
			 dir);
		return -ENOENT;
	}
	size_t dl = strlen(dir);
	int w = snprintf(out, n, "%s%s%s", dir,
			 dl && dir[dl - 1] == '/' ? "" : "/", best);
	return w > 0 && (size_t)w < n ? 0 : -ENAMETOOLONG;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directory part of path ("." when none) into buf; the name in *name. */
static void split(const char *path, char *buf, size_t n, const char **name)
{
	const char *slash = strrchr(path, '/');
	*name = slash ? slash + 1 : path;
	snprintf(buf, n, "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
}

void ctp_recdir_list_free(char **list, int n)
{
	for (int i = 0; i < n; i++)
		free(list[i]);
	free(list);
}

int ctp_recdir_between(const char *base, const char *cand, char ***out)
{
	char db[4096], dc[4096];
	const char *nb, *nc;
	int64_t tb, tc, t;
	*out = NULL;
	split(base, db, sizeof(db), &nb);
	split(cand, dc, sizeof(dc), &nc);
	if (strcmp(db, dc) != 0 || name_time(nb, &tb) < 0 ||
	    name_time(nc, &tc) < 0 || tc <= tb)
		return 0;
	DIR *d = opendir(db);
	if (!d)
		return 0;
	char **v = NULL;
	size_t n = 0, cap = 0;
	int r = 0;
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		if (name_time(e->d_name, &t) < 0 || t <= tb || t >= tc)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			char **nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				r = -ENOMEM;
				break;
			}
			v = nv;
		}
		if (asprintf(&v[n], "%s/%s", db, e->d_name) < 0)
			r = -ENOMEM;
		else
			n++;
	}
	closedir(d);
	if (r < 0) {
		for (size_t i = 0; i < n; i++)
			free(v[i]);
		free(v);
		return r;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*out = v;
	return (int)n;
}
