/* SPDX-License-Identifier: MIT */
/* Picking files of a recording by time (see recdir.h). */
#include "recdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "filekind.h"
#include "reader.h"
#include "term.h"

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

/* `width` decimal digits at *p (no sign, no space) into *v; advances *p. */
static bool digits(const char **p, int width, int *v)
{
	int x = 0;
	for (int i = 0; i < width; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		x = x * 10 + (c - '0');
	}
	*p += width;
	*v = x;
	return true;
}

static bool lit(const char **p, char c)
{
	if (**p != c)
		return false;
	(*p)++;
	return true;
}

/* Did mktime/timegm keep the fields as given (no day 31 of a 30-day month
 * rolled over, no hour of a daylight-saving gap moved)? */
static bool same_tm(const struct tm *a, const struct tm *b)
{
	return a->tm_year == b->tm_year && a->tm_mon == b->tm_mon &&
	       a->tm_mday == b->tm_mday && a->tm_hour == b->tm_hour &&
	       a->tm_min == b->tm_min && a->tm_sec == b->tm_sec;
}

int ctp_recdir_name_time(const char *name, int64_t *ns)
{
	const char *p = name;
	struct tm tm = {0}, want;
	int ms;
	if (strlen(name) != CTP_RECDIR_NAME_LEN ||
	    strncmp(p, PREFIX, strlen(PREFIX)) != 0)
		return -EINVAL;
	p += strlen(PREFIX);
	if (!digits(&p, 4, &tm.tm_year) || !digits(&p, 2, &tm.tm_mon) ||
	    !digits(&p, 2, &tm.tm_mday) || !lit(&p, 'T') ||
	    !digits(&p, 2, &tm.tm_hour) || !digits(&p, 2, &tm.tm_min) ||
	    !digits(&p, 2, &tm.tm_sec) || !lit(&p, '.') ||
	    !digits(&p, 3, &ms) || !lit(&p, 'Z') || strcmp(p, SUFFIX) != 0)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	want = tm;
	time_t t = timegm(&tm);
	if (t == (time_t)-1 || !same_tm(&tm, &want))
		return -EINVAL;
	*ns = (int64_t)t * 1000000000 + (int64_t)ms * 1000000;
	return 0;
}

/* "HH:MM[:SS]" at p into tm, to the end of the text. */
static bool clock_time(const char *p, struct tm *tm)
{
	tm->tm_sec = 0;
	if (!digits(&p, 2, &tm->tm_hour) || !lit(&p, ':') ||
	    !digits(&p, 2, &tm->tm_min))
		return false;
	if (lit(&p, ':') && !digits(&p, 2, &tm->tm_sec))
		return false;
	return *p == '\0';
}

int ctp_recdir_parse_when(const char *when, int64_t now_ns, int64_t *ns)
{
	uint64_t d;
	if (strcmp(when, "latest") == 0) {
		*ns = INT64_MAX;
		return 0;
	}
	if (when[0] == '-') {
		if (ctp_config_parse_duration(when + 1, &d) < 0 ||
		    d > (uint64_t)INT64_MAX / 2)
			return -EINVAL;
		*ns = now_ns - (int64_t)d;
		return 0;
	}
	/* Each form into its own fields: a failed try leaves nothing in the
	 * next (a date's year in a time of today). */
	struct tm tm = {0}, want;
	const char *p = when;
	if (strlen(when) >= 16 && when[4] == '-') {
		if (!digits(&p, 4, &tm.tm_year) || !lit(&p, '-') ||
		    !digits(&p, 2, &tm.tm_mon) || !lit(&p, '-') ||
		    !digits(&p, 2, &tm.tm_mday) ||
		    !(lit(&p, 'T') || lit(&p, ' ')) || !clock_time(p, &tm))
			return -EINVAL;
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
	} else {
		time_t now = (time_t)(now_ns / 1000000000);
		localtime_r(&now, &tm);
		if (!clock_time(p, &tm))
			return -EINVAL;
	}
	if (tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
	    tm.tm_sec > 59)
		return -ERANGE;
	tm.tm_isdst = -1;
	want = tm;
	time_t t = mktime(&tm);
	if (t == (time_t)-1 || !same_tm(&tm, &want))
		return -ERANGE;
	*ns = (int64_t)t * 1000000000;
	return 0;
}

/* What directory entry e of dfd is (its d_type, else an lstat), never
 * through a link; 0 when it is gone. */
static mode_t entry_mode(int dfd, const struct dirent *e)
{
	struct stat st;
	if (e->d_type != DT_UNKNOWN)
		return DTTOIF(e->d_type);
	return fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
		       ? st.st_mode
		       : 0;
}

/* A file the pick may use, by its name's time. */
struct cand {
	int64_t t;
	mode_t mode; /* what it is, when not a regular file */
	char name[CTP_RECDIR_NAME_LEN + 1];
};

/* Entries named like files that are not (links, FIFOs, directories) a
 * pick names in its warning, the newest; more are counted. */
#define ODD_NAMED (4 * CTP_RECDIR_TRIES)

/* Put c among the k best of v[0..*n) (best first: the newest, or with
 * `oldest` the oldest), dropping the worst past k. */
static void keep_best(struct cand *v, size_t *n, size_t k, const struct cand *c,
		      bool oldest)
{
	size_t i = *n;
	while (i > 0 && (oldest ? c->t < v[i - 1].t : c->t > v[i - 1].t))
		i--;
	if (i >= k)
		return;
	size_t last = *n < k ? *n : k - 1;
	memmove(&v[i + 1], &v[i], (last - i) * sizeof(*v));
	v[i] = *c;
	if (*n < k)
		(*n)++;
}

static bool skipped_before(const struct ctp_recdir_skips *s, const char *name)
{
	for (unsigned i = 0; i < s->n_names; i++)
		if (strcmp(s->names[i], name) == 0)
			return true;
	return false;
}

static void add_skip(struct ctp_recdir_skips *s, const char *name,
		     const char *why)
{
	if (!s || skipped_before(s, name))
		return;
	if (!s->n++)
		snprintf(s->first, sizeof(s->first), "%s", why);
	if (s->n_names < sizeof(s->names) / sizeof(s->names[0]))
		snprintf(s->names[s->n_names++], sizeof(s->names[0]), "%s",
			 name);
}

/* Dir's entry `name` as a snapshot (a regular file, not followed through
 * a link, opened without waiting, decoded within cap): 0 and *ret, or a
 * negative errno with "NAME: why" in why. */
static int open_snap(int dfd, const char *name, uint64_t cap,
		     struct ctp_snap **ret, char *why, size_t n)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		int e = errno;
		snprintf(why, n, "%s: %s", name, strerror(e));
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, n, "%s: %s", name, ctp_file_kind(st.st_mode));
		return -EINVAL;
	}
	int fd = openat(dfd, name,
			O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY |
				O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		/* Swapped since the fstatat. */
		int e = fd < 0 ? errno : EINVAL;
		snprintf(why, n, "%s: %s", name,
			 e == ELOOP ? "a symbolic link" : strerror(e));
		if (fd >= 0)
			close(fd);
		return -e;
	}
	int r = ctp_snap_open_fd(fd, name, cap, ret, why, n);
	close(fd);
	return r;
}

/* Is dir's entry `name` a readable snapshot? 0, or a negative errno with
 * "NAME: why" in why. */
static int readable(int dfd, const char *name, uint64_t cap, char *why,
		    size_t n)
{
	struct ctp_snap *s = NULL;
	int r = open_snap(dfd, name, cap, &s, why, n);
	ctp_snap_free(s);
	return r;
}

/* The first readable file of v[0..n) (none skipped before), its name into
 * best; the others added to the skips. */
static bool first_readable(int dfd, const struct cand *v, size_t n,
			   const struct ctp_recdir_pick *p, char *best,
			   size_t bestlen)
{
	char why[512];
	for (size_t i = 0; i < n; i++) {
		if (skipped_before(p->skips, v[i].name))
			continue;
		if (readable(dfd, v[i].name, p->cap, why, sizeof(why)) == 0) {
			snprintf(best, bestlen, "%s", v[i].name);
			return true;
		}
		add_skip(p->skips, v[i].name, why);
	}
	return false;
}

/* A --from/--to time against now into *at: 0, or a negative errno after
 * a message. */
static int when_now(const char *when, int64_t *at, char *err, size_t errlen)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int r = ctp_recdir_parse_when(
		when, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec, at);
	if (r == -ERANGE)
		snprintf(err, errlen, "'%s': no such date or local time", when);
	else if (r < 0)
		snprintf(err, errlen,
			 "'%s' is no time: latest, -DURATION (-10m), "
			 "YYYY-mm-ddTHH:MM[:SS] or HH:MM[:SS]",
			 when);
	return r;
}

/* The time a pick is for into *at: 0, or a negative errno after a
 * message. */
static int pick_time(const struct ctp_recdir_pick *p, int64_t *at, char *err,
		     size_t errlen)
{
	if (p->before) {
		const char *b = strrchr(p->before, '/');
		if (ctp_recdir_name_time(b ? b + 1 : p->before, at) < 0) {
			snprintf(err, errlen, "%s: not a file of a recording",
				 p->before);
			return -EINVAL;
		}
		*at -= 1; /* strictly before */
		return 0;
	}
	return when_now(p->when, at, err, errlen);
}

int ctp_recdir_pick(const struct ctp_recdir_pick *p, char *out, size_t n,
		    char *err, size_t errlen)
{
	struct cand newest[CTP_RECDIR_TRIES], oldest[CTP_RECDIR_TRIES], c;
	struct cand odd[ODD_NAMED];
	size_t n_new = 0, n_old = 0, at_or_before = 0, named = 0;
	size_t n_odd = 0, odd_more = 0;
	int64_t at;
	char best[CTP_RECDIR_NAME_LEN + 1] = "";
	int r;
	if (!ctp_recdir_is(p->dir))
		return -ENOTDIR;
	if ((r = pick_time(p, &at, err, errlen)) < 0)
		return r;
	int dfd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	if (!d) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", p->dir, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return r;
	}
	for (struct dirent *e; (e = readdir(d));) {
		if (ctp_recdir_name_time(e->d_name, &c.t) < 0)
			continue;
		memcpy(c.name, e->d_name, sizeof(c.name));
		named++;
		/* A link, FIFO or directory is no candidate: left out
		 * without being opened, and not counted among the tries
		 * (a directory holding many such must not hide the files). */
		c.mode = entry_mode(dfd, e);
		if (!S_ISREG(c.mode)) {
			if (c.t <= at && n_odd == ODD_NAMED)
				odd_more++;
			if (c.t <= at)
				keep_best(odd, &n_odd, ODD_NAMED, &c, false);
			continue;
		}
		keep_best(oldest, &n_old, CTP_RECDIR_TRIES, &c, true);
		if (c.t > at)
			continue;
		at_or_before++;
		keep_best(newest, &n_new, CTP_RECDIR_TRIES, &c, false);
	}
	bool found = first_readable(dfd, newest, n_new, p, best, sizeof(best));
	/* Nothing readable at or before a time (before the recording began:
	 * the last hour of a recording 20 minutes old is all of it): its
	 * first readable file, when every file before the time was looked
	 * at. */
	if (!found && !p->before && at_or_before <= CTP_RECDIR_TRIES)
		found = first_readable(dfd, oldest, n_old, p, best,
				       sizeof(best));
	closedir(d);
	for (size_t i = 0; i < n_odd; i++) {
		char why[CTP_RECDIR_NAME_LEN + 64];
		snprintf(why, sizeof(why), "%s: %s", odd[i].name,
			 odd[i].mode ? ctp_file_kind(odd[i].mode) : "gone");
		add_skip(p->skips, odd[i].name, why);
	}
	p->skips->n += (unsigned)odd_more;
	if (!found) {
		if (!named)
			snprintf(err, errlen,
				 "%s: no snapshot of a recording (" PREFIX
				 "*" SUFFIX ") in it",
				 p->dir);
		else if (!at_or_before && p->before)
			snprintf(err, errlen,
				 "%s: no snapshot of the recording before %s",
				 p->dir, p->before);
		else
			snprintf(err, errlen,
				 "%s: no readable snapshot of the recording "
				 "%s among the %zu newest files named like one "
				 "(%s)",
				 p->dir,
				 p->before ? "before that file"
					   : "at or before that time",
				 n_new ? n_new : n_old,
				 p->skips->n ? p->skips->first
					     : "none readable");
		return -ENOENT;
	}
	size_t dl = strlen(p->dir);
	int w = snprintf(out, n, "%s%s%s", p->dir,
			 dl && p->dir[dl - 1] == '/' ? "" : "/", best);
	return w > 0 && (size_t)w < n ? 0 : -ENAMETOOLONG;
}

void ctp_recdir_warn_skips(FILE *f, const char *prog, const char *dir,
			   const struct ctp_recdir_skips *s)
{
	char buf[64];
	const char *lab = f == stderr
				  ? ctp_color_label("warning", CTP_SGR_YELLOW,
						    buf, sizeof(buf))
				  : "warning";
	if (!s->n)
		return;
	if (s->n == 1)
		fprintf(f,
			"%s: %s: %s: skipped an entry that is not a "
			"readable snapshot (%s)\n",
			prog, lab, dir, s->first);
	else
		fprintf(f,
			"%s: %s: %s: skipped %u entries that are not "
			"readable snapshots (first: %s)\n",
			prog, lab, dir, s->n, s->first);
}

/* ---- Walking a recording ---- */

static int cmp_file(const void *a, const void *b)
{
	const struct ctp_recdir_file *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Every entry of dfd named as a recording's file into f->v, oldest
 * first; those that are not regular files marked bad (kind in `mode`). */
static int list_named(int dfd, struct ctp_recdir_files *f)
{
	int dup = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup < 0 ? NULL : fdopendir(dup);
	size_t cap = 0;
	int r = 0;
	if (!d) {
		r = -errno;
		if (dup >= 0)
			close(dup);
		return r;
	}
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		struct ctp_recdir_file c = {0};
		if (ctp_recdir_name_time(e->d_name, &c.t) < 0)
			continue;
		memcpy(c.name, e->d_name, sizeof(c.name));
		c.mode = entry_mode(dfd, e);
		c.bad = !S_ISREG(c.mode);
		if (f->n == cap) {
			cap = cap ? cap * 2 : 64;
			struct ctp_recdir_file *nv =
				realloc(f->v, cap * sizeof(*nv));
			if (!nv) {
				r = -ENOMEM;
				break;
			}
			f->v = nv;
		}
		f->v[f->n++] = c;
	}
	closedir(d);
	if (r == 0 && f->n)
		qsort(f->v, f->n, sizeof(*f->v), cmp_file);
	return r;
}

/* The index of the newest regular file at or before at, else of the
 * first regular one; f->n when there is none. */
static size_t file_at(const struct ctp_recdir_files *f, int64_t at)
{
	size_t best = f->n;
	for (size_t i = 0; i < f->n && f->v[i].t <= at; i++)
		if (!f->v[i].bad)
			best = i;
	for (size_t i = 0; best == f->n && i < f->n; i++)
		if (!f->v[i].bad)
			best = i;
	return best;
}

/* Keep f->v[lo..hi] only; the entries in it that are not regular files
 * said in skips. */
static void keep_range(struct ctp_recdir_files *f, size_t lo, size_t hi,
		       struct ctp_recdir_skips *skips)
{
	size_t n = hi < f->n && lo <= hi ? hi - lo + 1 : 0;
	if (n)
		memmove(f->v, f->v + lo, n * sizeof(*f->v));
	f->n = n;
	for (size_t i = 0; i < n; i++) {
		char why[CTP_RECDIR_NAME_LEN + 64];
		if (!f->v[i].bad)
			continue;
		snprintf(why, sizeof(why), "%s: %s", f->v[i].name,
			 f->v[i].mode ? ctp_file_kind(f->v[i].mode) : "gone");
		add_skip(skips, f->v[i].name, why);
	}
}

int ctp_recdir_files_open(const char *dir, const char *from, const char *to,
			  struct ctp_recdir_skips *skips,
			  struct ctp_recdir_files *f, char *err, size_t errlen)
{
	int64_t tf = INT64_MIN, tt = INT64_MAX;
	int r;
	*f = (struct ctp_recdir_files){.dfd = -1};
	if (!ctp_recdir_is(dir)) {
		snprintf(err, errlen, "%s: not a directory", dir);
		return -ENOTDIR;
	}
	if ((from && (r = when_now(from, &tf, err, errlen)) < 0) ||
	    (to && (r = when_now(to, &tt, err, errlen)) < 0))
		return r;
	f->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = f->dfd < 0 ? -errno : list_named(f->dfd, f);
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(-r));
		ctp_recdir_files_done(f);
		return r;
	}
	size_t lo = from ? file_at(f, tf) : file_at(f, INT64_MIN);
	size_t hi = file_at(f, tt);
	if (lo < f->n && lo > hi) {
		snprintf(err, errlen,
			 "--from %s picks a file after the one --to %s picks",
			 from, to ? to : "latest");
		ctp_recdir_files_done(f);
		return -ERANGE;
	}
	keep_range(f, lo, hi, skips);
	return 0;
}

void ctp_recdir_files_done(struct ctp_recdir_files *f)
{
	if (f->dfd >= 0)
		close(f->dfd);
	free(f->v);
	*f = (struct ctp_recdir_files){.dfd = -1};
}

/* The walk of both kinds: each borrows the snapshot, take owns it. */
static int walk(struct ctp_recdir_files *f, uint64_t cap,
		struct ctp_recdir_skips *skips, ctp_recdir_each_fn each,
		ctp_recdir_take_fn take, void *arg)
{
	int n = 0;
	for (size_t i = 0; i < f->n; i++) {
		struct ctp_snap *s = NULL;
		char why[512];
		if (f->v[i].bad)
			continue;
		if (open_snap(f->dfd, f->v[i].name, cap, &s, why, sizeof(why)) <
		    0) {
			f->v[i].bad = true;
			add_skip(skips, f->v[i].name, why);
			continue;
		}
		int r = take ? take(s, &f->v[i], arg) : each(s, &f->v[i], arg);
		if (!take)
			ctp_snap_free(s);
		if (r < 0)
			return r;
		n++;
	}
	return n;
}

int ctp_recdir_walk(struct ctp_recdir_files *f, uint64_t cap,
		    struct ctp_recdir_skips *skips, ctp_recdir_each_fn each,
		    void *arg)
{
	return walk(f, cap, skips, each, NULL, arg);
}

int ctp_recdir_walk_take(struct ctp_recdir_files *f, uint64_t cap,
			 struct ctp_recdir_skips *skips,
			 ctp_recdir_take_fn take, void *arg)
{
	return walk(f, cap, skips, NULL, take, arg);
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
	if (strcmp(db, dc) != 0 || ctp_recdir_name_time(nb, &tb) < 0 ||
	    ctp_recdir_name_time(nc, &tc) < 0 || tc <= tb)
		return 0;
	int dfd = open(db, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	char **v = NULL;
	size_t n = 0, cap = 0;
	int r = 0;
	for (struct dirent *e; r == 0 && (e = readdir(d));) {
		struct stat st;
		if (ctp_recdir_name_time(e->d_name, &t) < 0 || t <= tb ||
		    t >= tc ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
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

int ctp_recdir_latest_of(const char **path, uint64_t cap, const char *prog,
			 char *out, size_t n)
{
	char err[512];
	struct ctp_recdir_skips skips = {0};
	const struct ctp_recdir_pick p = {
		.dir = *path, .when = "latest", .cap = cap, .skips = &skips};
	if (!ctp_recdir_is(*path))
		return 0;
	int r = ctp_recdir_pick(&p, out, n, err, sizeof(err));
	ctp_recdir_warn_skips(stderr, prog, *path, &skips);
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return -1;
	}
	*path = out;
	return 0;
}
