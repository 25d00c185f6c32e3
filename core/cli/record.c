/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core record`: one engine kept alive (plugins loaded and
 * initialized once, their caches kept), a complete snapshot written into a
 * directory every interval, the oldest removed past the retention limits
 * (docs/RECORD.md). Under the supervisor (supervisor.h) the whole recording
 * runs in a child: a plugin that crashes is left out for the rest of the
 * recording, which goes on in a new child from where it was.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture_util.h"
#include "cli.h"
#include "clock.h"
#include "loader.h"
#include "log.h"
#include "priv.h"
#include "recdir.h"
#include "compare_view.h"
#include "ctprof/plugin-util.h"
#include "engine.h"
#include "export.h"
#include "supervise.h"
#include "supervisor.h"

#define PROG		    "ctprof-core record"
#define DEFAULT_INTERVAL_NS 10000000000ull
/* Captures in a row that could not be written before the recording ends
 * (exit 1; docs/RECORD.md). */
#define MAX_FAILED_IN_ROW 10
/* Files removed to make room for one capture on a full disk. */
#define ROOM_TRIES 3
/* Files of a recording: ctprof-YYYYmmddTHHMMSS.mmmZ.ctprof.zst (UTC), so
 * names sort in time order. */

static volatile sig_atomic_t rec_stop, rec_hup;
/* --print's reader went away (EPIPE): the recording ends, status 0. */
static bool rec_stdout_gone;

/* Where the recording is, shared between the supervisor and every child
 * it runs (MAP_SHARED): a child started after a crash goes on from here. */
struct rec_progress {
	uint64_t written;     /* snapshots written */
	uint64_t attempts;    /* captures tried, written or not (--count) */
	uint64_t failed;      /* of them, not written for an error */
	uint64_t in_row;      /* failures since the last snapshot written */
	uint64_t deadline_ns; /* CLOCK_MONOTONIC end (--duration), or 0 */
	int finished;	      /* the loop ended: nothing more to do */
	int gave_up;	      /* MAX_FAILED_IN_ROW reached */
	int last_errno;	      /* of the last failure, 0 after a success */
	int warned_future;    /* files named after a new capture were seen */
	uint64_t spoiled;     /* captures in a row short of resources */
	char cause[512];      /* the last failure's message */
	char last[PATH_MAX];  /* the last file written ("" before) */
};

struct rec_args {
	const char *config_path, *dir, *textfile, *user;
	uint64_t interval_ns, count, duration_ns, keep, max_bytes;
	unsigned workers;
	bool strict, no_supervise, print, supervised;
	bool interval_set, keep_set, max_bytes_set;
	struct rec_progress *prog;
};

enum {
	O_DURATION = 256,
	O_KEEP,
	O_MAX_BYTES,
	O_PRINT,
	O_STRICT,
	O_NO_SUPERVISE,
	O_TEXTFILE,
	O_USER,
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: " PROG " [DIR | -o DIR] [--config FILE] [--interval "
		"D]\n"
		"         [--count N | --duration D] [--keep N] [--max-bytes "
		"SIZE] [--print]\n"
		"Keep the plugins loaded and write a snapshot into DIR every "
		"interval, named\n"
		"ctprof-YYYYmmddTHHMMSS.mmmZ.ctprof.zst (UTC). Every other "
		"verb reads them.\n"
		"  [-o, --output] DIR   the directory (made if missing); "
		"default: the config's record.dir\n"
		"  -i, --interval D     between captures: 500ms, 10s, 1m ... "
		"(default: record.interval, else 10s)\n"
		"  -n, --count N        stop after N captures (written or "
		"not)\n"
		"      --duration D     stop after D\n"
		"      --keep N         keep the newest N files of DIR "
		"(record.keep)\n"
		"      --max-bytes SIZE keep at most SIZE bytes of files, "
		"e.g. 1GiB (record.max_bytes)\n"
		"                       (oldest removed first; never the file "
		"just written)\n"
		"      --print          print the top view of each interval "
		"as it ends\n"
		"      --textfile DIR   after each, DIR/ctprof.prom for "
		"node_exporter (docs/EXPORT.md)\n"
		"  -c, --config FILE    configuration (default: %s)\n"
		"  -j, --workers N      walker threads\n"
		"      --strict         a plugin failure skips that "
		"interval's snapshot\n"
		"      --user NAME      capture and write as NAME, with only "
		"the "
		"capabilities\n"
		"                       the enabled plugins declare "
		"(docs/RELIABILITY.md)\n"
		"      --no-supervise   run in this process (a plugin crash "
		"ends the recording)\n"
		"  -q, --quiet          only errors   -v, --verbose  more\n"
		"SIGINT/SIGTERM: the capture in progress is discarded, exit "
		"130; SIGHUP: reload the config.\n"
		"Exit status: 0 done; 1 failure (a capture not written; 10 in "
		"a row end it);\n"
		"2 usage or configuration error; 3 a required plugin "
		"failed.\n",
		ctp_cli_default_config());
}

/* A duration option; false after a message. */
static bool duration_arg(const char *opt, const char *s, uint64_t *ns)
{
	if (ctp_config_parse_duration(s, ns) == 0)
		return true;
	fprintf(stderr,
		PROG ": %s wants a duration (500ms, 10s, 1m, 2h, 1d), not "
		     "'%s'\n",
		opt, s);
	return false;
}

/* One option into *a; -1 to go on, else the exit status. */
static int record_option(struct rec_args *a, int c, const char *arg)
{
	unsigned long long n;
	char *end;
	switch (c) {
	case 'c':
		a->config_path = arg;
		return -1;
	case 'o':
		a->dir = arg;
		return -1;
	case 'i':
		a->interval_set = true;
		if (!duration_arg("--interval", arg, &a->interval_ns))
			return CTP_EXIT_USAGE;
		if (a->interval_ns < CTP_RECORD_MIN_INTERVAL_NS ||
		    a->interval_ns > CTP_RECORD_MAX_INTERVAL_NS) {
			fprintf(stderr,
				PROG ": --interval must be from 100ms to 1d\n");
			return CTP_EXIT_USAGE;
		}
		return -1;
	case O_DURATION:
		return duration_arg("--duration", arg, &a->duration_ns)
			       ? -1
			       : CTP_EXIT_USAGE;
	case O_MAX_BYTES:
		a->max_bytes_set = true;
		if (ctp_config_parse_bytes(arg, &a->max_bytes) == 0)
			return -1;
		fprintf(stderr,
			PROG ": --max-bytes wants a byte count (e.g. 500M, "
			     "1GiB), not '%s'\n",
			arg);
		return CTP_EXIT_USAGE;
	case 'n':
	case O_KEEP:
	case 'j':
		errno = 0;
		n = strtoull(arg, &end, 10);
		if (errno || *end || !*arg || n == 0 || (c == 'j' && n > 256) ||
		    arg[0] == '-') {
			fprintf(stderr,
				PROG ": %s wants a number from 1%s, not '%s'\n",
				c == 'n'   ? "--count"
				: c == 'j' ? "--workers"
					   : "--keep",
				c == 'j' ? " to 256" : "", arg);
			return CTP_EXIT_USAGE;
		}
		if (c == 'n')
			a->count = n;
		else if (c == 'j')
			a->workers = (unsigned)n;
		else
			a->keep = n, a->keep_set = true;
		return -1;
	case O_PRINT:
		a->print = true;
		return -1;
	case O_TEXTFILE:
		a->textfile = arg;
		return -1;
	case O_STRICT:
		a->strict = true;
		return -1;
	case O_NO_SUPERVISE:
		a->no_supervise = true;
		return -1;
	case O_USER:
		a->user = arg;
		return -1;
	case 'q':
		ctp_verbosity = -1;
		return -1;
	case 'v':
		ctp_verbosity++;
		return -1;
	case 'h':
		usage(stdout);
		return CTP_EXIT_OK;
	}
	fprintf(stderr, "Try '" PROG " --help'.\n");
	return CTP_EXIT_USAGE;
}

static int parse_args(int argc, char **argv, struct rec_args *a)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"output", required_argument, NULL, 'o'},
		{"interval", required_argument, NULL, 'i'},
		{"count", required_argument, NULL, 'n'},
		{"duration", required_argument, NULL, O_DURATION},
		{"keep", required_argument, NULL, O_KEEP},
		{"max-bytes", required_argument, NULL, O_MAX_BYTES},
		{"print", no_argument, NULL, O_PRINT},
		{"textfile", required_argument, NULL, O_TEXTFILE},
		{"user", required_argument, NULL, O_USER},
		{"workers", required_argument, NULL, 'j'},
		{"strict", no_argument, NULL, O_STRICT},
		{"no-supervise", no_argument, NULL, O_NO_SUPERVISE},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c, rc;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:o:i:n:j:qvh", opts, NULL)) != -1)
		if ((rc = record_option(a, c, optarg)) >= 0)
			return rc;
	/* `record DIR`, as the readers take DIR: the same as -o DIR. */
	if (optind + 1 == argc && !a->dir)
		a->dir = argv[optind++];
	if (optind != argc) {
		fprintf(stderr,
			PROG ": unexpected argument '%s' (the directory is "
			     "given once: DIR or -o DIR)\n",
			argv[optind]);
		return CTP_EXIT_USAGE;
	}
	if (a->count && a->duration_ns) {
		fprintf(stderr, PROG ": --count and --duration: give one\n");
		return CTP_EXIT_USAGE;
	}
	if (!a->config_path)
		a->config_path = ctp_cli_default_config();
	return -1;
}

/* The command line over the config's record: settings, over defaults.
 * Returns -1 to go on, else the exit status after a message. */
static int settle(struct rec_args *a, const struct ctp_config *cfg)
{
	const struct ctp_record_cfg *rc = &cfg->record;
	if (!a->interval_set)
		a->interval_ns =
			rc->interval_ns ? rc->interval_ns : DEFAULT_INTERVAL_NS;
	if (!a->keep_set)
		a->keep = rc->keep;
	if (!a->max_bytes_set)
		a->max_bytes = rc->max_bytes;
	if (!a->dir)
		a->dir = rc->dir_ref;
	if (!a->dir) {
		fprintf(stderr,
			PROG ": no directory: give -o DIR or set record.dir "
			     "in %s\n",
			a->config_path);
		return CTP_EXIT_USAGE;
	}
	uid_t uid;
	gid_t gid;
	if (a->user && ctp_priv_lookup_user(a->user, &uid, &gid) < 0) {
		fprintf(stderr, PROG ": --user %s: no such user\n", a->user);
		return CTP_EXIT_USAGE;
	}
	if (mkdir(a->dir, 0750) == 0) {
		/* Made here for a recording as --user: theirs to write. */
		if (a->user && chown(a->dir, uid, gid) < 0)
			fprintf(stderr, PROG ": %s: %s\n", a->dir,
				strerror(errno));
	} else if (errno != EEXIST) {
		fprintf(stderr, PROG ": %s: %s\n", a->dir, strerror(errno));
		return CTP_EXIT_FAILURE;
	}
	struct stat st;
	if (stat(a->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, PROG ": %s: not a directory\n", a->dir);
		return CTP_EXIT_USAGE;
	}
	return -1;
}

/* Sleep until CLOCK_MONOTONIC `when`; false when a signal asked to stop
 * or reload first. */
static bool sleep_until(uint64_t when)
{
	struct timespec ts = {.tv_sec = (time_t)(when / 1000000000ull),
			      .tv_nsec = (long)(when % 1000000000ull)};
	while (!rec_stop && !rec_hup) {
		int r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
					NULL);
		if (r == 0)
			return true;
		if (r != EINTR)
			return false;
	}
	return false;
}

/* A file retention may remove. */
struct own_file {
	int64_t t;
	uint64_t size;
	char name[CTP_RECDIR_NAME_LEN + 1];
};

/* Oldest first: files named after the capture just written (now_t) first,
 * then the rest, each by name. A file named in the future was written
 * before the wall clock stepped back (or is not a capture's): older than
 * anything written since. */
static int own_cmp(const void *pa, const void *pb, void *arg)
{
	const struct own_file *a = pa, *b = pb;
	int64_t now_t = *(const int64_t *)arg;
	bool fa = a->t > now_t, fb = b->t > now_t;
	if (fa != fb)
		return fa ? -1 : 1;
	return a->t < b->t ? -1 : a->t > b->t ? 1 : strcmp(a->name, b->name);
}

/* The files of the recording in dfd that this recorder may remove: named
 * exactly as it names them, regular (not a link), owned by this user. In
 * removal order (own_cmp); *future counts those named after now_t. Returns
 * how many, or a negative errno. */
static int own_files(int dfd, int64_t now_t, struct own_file **out,
		     size_t *future)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct own_file *v = NULL;
	size_t n = 0, cap = 0;
	int r = 0;
	if (!d) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	*future = 0;
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		int64_t t;
		if (ctp_recdir_name_time(e->d_name, &t) < 0 ||
		    fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid())
			continue;
		if (n == cap && (r = CTP_GROW(v, cap, n + 1, 64)) < 0)
			break;
		v[n].t = t;
		v[n].size = (uint64_t)st.st_size;
		memcpy(v[n].name, e->d_name, sizeof(v[n].name));
		*future += t > now_t;
		n++;
	}
	closedir(d);
	if (r < 0) {
		free(v);
		return r;
	}
	if (n)
		qsort_r(v, n, sizeof(*v), own_cmp, &now_t);
	*out = v;
	return (int)n;
}

/*
 * Remove the oldest files of the recording (own_files) past --keep and
 * --max-bytes, and at least `room` more (a full disk), never `spare` (the
 * newest file written, "" none). now_t: the time of the capture being
 * written. Returns how many were removed.
 */
static int retention(const struct rec_args *a, const char *spare, int64_t now_t,
		     int room)
{
	if (!a->keep && !a->max_bytes)
		return 0;
	struct own_file *v = NULL;
	size_t future = 0;
	int dfd = open(a->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int n = dfd < 0 ? -errno : own_files(dfd, now_t, &v, &future);
	if (n < 0) {
		ctp_log(CTP_LOG_WARNING, "%s: retention: %s", a->dir,
			strerror(-n));
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	if (future && !a->prog->warned_future) {
		a->prog->warned_future = 1;
		ctp_log(CTP_LOG_WARNING,
			"%s: %zu file(s) named after the capture just taken "
			"(the wall clock stepped back?): they are removed "
			"before the newer captures",
			a->dir, future);
	}
	const char *sp = strrchr(spare, '/');
	sp = sp ? sp + 1 : spare;
	uint64_t total = 0, left = (uint64_t)n;
	int removed = 0;
	for (int i = 0; i < n; i++)
		total += v[i].size;
	for (int i = 0; i < n; i++) {
		if (removed >= room && (!a->keep || left <= a->keep) &&
		    (!a->max_bytes || total <= a->max_bytes))
			break;
		if (strcmp(v[i].name, sp) == 0)
			continue;
		if (unlinkat(dfd, v[i].name, 0) == 0 || errno == ENOENT) {
			left--;
			total -= v[i].size;
			removed++;
			ctp_log(room ? CTP_LOG_WARNING : CTP_LOG_DEBUG,
				"removed %s/%s%s", a->dir, v[i].name,
				room ? " to make room" : "");
		} else {
			ctp_log(CTP_LOG_WARNING, "cannot remove %s/%s: %s",
				a->dir, v[i].name, strerror(errno));
		}
	}
	free(v);
	close(dfd);
	return removed;
}

/* --print: the top view from the previous file to this one. */
static void print_interval(const struct rec_args *a,
			   const struct ctp_config *cfg, const char *path)
{
	if (!a->prog->last[0]) {
		printf("recording into %s every %.3g s; the first interval "
		       "ends at the next capture\n\n",
		       a->dir, (double)a->interval_ns / 1e9);
		fflush(stdout);
		return;
	}
	struct ctp_compare_view_args v = {
		.paths = {a->prog->last, path},
		.cap = cfg->max_decompressed_bytes,
		.asc = -1,
	};
	ctp_compare_view(&v);
	putchar('\n');
	if (fflush(stdout) == EOF && errno == EPIPE)
		rec_stdout_gone = true;
}

/* An interval left without a snapshot by an error `err` (errno), msg the
 * line that says why. Said when the cause changes, not again while the
 * same one lasts; MAX_FAILED_IN_ROW in a row end the recording. Returns 0
 * to go on, else the exit status. */
static int failure(const struct rec_args *a, int err, const char *msg)
{
	struct rec_progress *p = a->prog;
	p->failed++;
	p->in_row++;
	if (err != p->last_errno)
		ctp_log(CTP_LOG_ERR,
			"%s; no snapshot this interval (not said again while "
			"it lasts)",
			msg);
	p->last_errno = err;
	snprintf(p->cause, sizeof(p->cause), "%s", msg);
	if (p->in_row < MAX_FAILED_IN_ROW)
		return 0;
	p->gave_up = 1;
	ctp_log(CTP_LOG_ERR,
		"giving up: %" PRIu64 " captures in a row could not be "
		"written (%s)",
		p->in_row, p->cause);
	return CTP_EXIT_FAILURE;
}

/* A snapshot written: failures before it are over (said with how many). */
static void count_written(const struct rec_args *a)
{
	struct rec_progress *p = a->prog;
	if (p->in_row)
		ctp_log(CTP_LOG_WARNING,
			"writing again after %" PRIu64 " capture(s) not "
			"written (%s)",
			p->in_row, p->cause);
	p->in_row = 0;
	p->last_errno = 0;
	p->written++;
}

/* A capture short of resources (ctp_capture_spoiled) is written all the
 * same, its counters saying what it could not read; the log says why at
 * the first written of a run of them, and when a complete one ends the
 * run. */
static void note_spoiled(const struct rec_args *a,
			 const struct ctp_capture *cap)
{
	struct rec_progress *p = a->prog;
	char why[256];
	if (ctp_capture_spoiled(cap, why, sizeof(why))) {
		if (!p->spoiled++)
			ctp_log(CTP_LOG_WARNING,
				"capture short of resources: %s; its snapshot "
				"counts what it could not read (not said again "
				"while it lasts)",
				why);
		return;
	}
	if (p->spoiled)
		ctp_log(CTP_LOG_WARNING,
			"captures complete again after %" PRIu64
			" short of resources",
			p->spoiled);
	p->spoiled = 0;
}

/* Write the capture to path; on a full disk (ENOSPC, EDQUOT) with
 * retention set, remove the oldest file of the recording and try again,
 * ROOM_TRIES times at most. Returns 0 or a negative errno (-ECANCELED),
 * the failure's line in err. */
static int write_capture(struct ctp_capture *cap, const struct ctp_config *cfg,
			 const struct rec_args *a, const char *path, char *err,
			 size_t errlen)
{
	int64_t now_t = (int64_t)cap->start_realtime_ns;
	for (int room = 0;; room++) {
		int r = ctp_cli_write_to(cap, cfg, path, &rec_stop, NULL, true,
					 err, errlen);
		if ((r != -ENOSPC && r != -EDQUOT) || room == ROOM_TRIES ||
		    retention(a, a->prog->last, now_t, 1) == 0)
			return r;
	}
}

/* One capture by the loaded engine into the recording. Returns 0 (also
 * when this interval's snapshot was skipped or failed, with a message), or
 * the exit status to end with (CTP_EXIT_INTERRUPTED, or too many failures
 * in a row). */
/* --textfile's counters over time (series.h): this process's, kept
 * across SIGHUP's reloads; a new recording child starts them at zero. */
static struct ctp_series *rec_series;

static int capture_once(struct ctp_engine *eng, const struct ctp_config *cfg,
			const struct rec_args *a)
{
	struct ctp_capture *cap = eng->cap;
	char path[PATH_MAX], err[1024];
	const char *what;
	int r = ctp_cli_capture_again(eng, a->supervised, &what);
	if (r == -EINTR || rec_stop)
		return CTP_EXIT_INTERRUPTED;
	ctp_cli_oom_exit();
	a->prog->attempts++; /* --count counts it, written or not */
	if (r < 0) {
		snprintf(err, sizeof(err), "%s: %s", what, strerror(-r));
		return failure(a, -r, err);
	}
	if (a->strict && ctp_cli_plugin_gave_up(cap))
		return 0;
	if (ctp_recdir_name(a->dir, cap->start_realtime_ns, path,
			    sizeof(path)) < 0) {
		snprintf(err, sizeof(err), "%s: too long a directory name",
			 a->dir);
		return failure(a, ENAMETOOLONG, err);
	}
	r = write_capture(cap, cfg, a, path, err, sizeof(err));
	if (r == -ECANCELED)
		return CTP_EXIT_INTERRUPTED;
	if (r < 0)
		return failure(a, -r, err);
	count_written(a);
	note_spoiled(a, cap);
	retention(a, path, (int64_t)cap->start_realtime_ns, 0);
	if (a->print)
		print_interval(a, cfg, path);
	if (a->textfile &&
	    ctp_export_textfile(path, a->textfile, cfg->max_decompressed_bytes,
				cfg->service.series_ttl_ns,
				&rec_series) != CTP_EXIT_OK)
		ctp_log(CTP_LOG_WARNING, "%s/ctprof.prom not updated",
			a->textfile);
	snprintf(a->prog->last, sizeof(a->prog->last), "%s", path);
	return 0;
}

/* Has the recording done what it was asked (--count, --duration)? */
static bool done(const struct rec_args *a)
{
	return rec_stdout_gone || (a->count && a->prog->attempts >= a->count) ||
	       (a->prog->deadline_ns && ctp_now_ns() >= a->prog->deadline_ns);
}

enum { SESSION_DONE = -1, SESSION_RELOAD = -2 };

/* Captures with one loaded engine until done, a signal, or SIGHUP
 * (SESSION_RELOAD). Returns SESSION_DONE, SESSION_RELOAD or an exit
 * status. */
static int session(const struct ctp_config *cfg, const struct rec_args *a)
{
	struct ctp_capture *cap = NULL;
	struct ctp_engine eng;
	int rc = SESSION_DONE;
	if (a->user && ctp_cli_confine(a->user, cfg) < 0)
		return CTP_EXIT_FAILURE;
	if (ctp_capture_new(cfg->workers ? cfg->workers : 1, &cap) < 0)
		return CTP_EXIT_FAILURE;
	cap->config_path = strdup(a->config_path);
	int r = ctp_engine_init(&eng, cfg, cap, &rec_stop);
	if (r >= 0) {
		eng.strict = a->strict;
		eng.recording = true; /* plugins may watch between captures */
		ctp_sv_busy(true);
		r = ctp_engine_load(&eng);
		ctp_sv_busy(false);
	}
	if (r >= 0 && a->user && ctp_cli_confine_loaded() < 0)
		r = -EPERM;

	if (r < 0) {
		rc = r == -ECANCELED ? CTP_EXIT_REQUIRED : CTP_EXIT_FAILURE;
		if (r != -ECANCELED)
			fprintf(stderr, PROG ": loading plugins: %s\n",
				strerror(-r));
		goto out;
	}
	for (uint64_t next = ctp_now_ns(); !done(a);) {
		if (!sleep_until(next)) {
			rc = rec_stop ? CTP_EXIT_INTERRUPTED : SESSION_RELOAD;
			break;
		}
		if ((r = capture_once(&eng, cfg, a)) != 0) {
			rc = r;
			break;
		}
		uint64_t now = ctp_now_ns(), missed = 0;
		for (next += a->interval_ns; next <= now;
		     next += a->interval_ns)
			missed++;
		if (missed)
			ctp_log(CTP_LOG_WARNING,
				"the capture took longer than the interval: "
				"%" PRIu64 " interval(s) skipped",
				missed);
	}
out:
	ctp_engine_unload(&eng);
	ctp_engine_done(&eng);
	ctp_capture_free(cap);
	return rc;
}

/* The config again from its file (SIGHUP), with the supervisor's crashed
 * plugins still left out; NULL (and the old one kept) when it is bad. */
static struct ctp_config *reload(const struct ctp_config *old,
				 const struct rec_args *a)
{
	struct ctp_config *cfg = NULL;
	if (ctp_cli_load_config(a->config_path, NULL, &cfg) != 0) {
		ctp_log(CTP_LOG_ERR,
			"SIGHUP: %s not reloaded; recording on "
			"with the previous config",
			a->config_path);
		return NULL;
	}
	for (size_t i = 0; i < cfg->n_plugins; i++) {
		const struct ctp_plugin_cfg *o =
			ctp_config_plugin(old, cfg->plugins[i].name);
		if (o && o->crashed)
			cfg->plugins[i].crashed = strdup(o->crashed);
	}
	ctp_log(CTP_LOG_INFO, "SIGHUP: reloaded %s", a->config_path);
	return cfg;
}

/* The recording (in the supervisor's child, or in this process). */
static int record_run(const struct ctp_config *cfg, void *arg)
{
	struct rec_args *a = arg;
	struct ctp_config *own = NULL;
	int rc = SESSION_RELOAD;
	a->supervised = !a->no_supervise;
	if (a->prog->finished)
		return CTP_EXIT_OK;
	while (rc == SESSION_RELOAD) {
		rec_hup = 0;
		rc = session(own ? own : cfg, a);
		if (rc == SESSION_RELOAD) {
			struct ctp_config *n = reload(own ? own : cfg, a);
			if (n) {
				ctp_config_free(own);
				own = n;
			}
		}
	}
	ctp_config_free(own);
	ctp_series_free(rec_series);
	rec_series = NULL;
	if (rc == SESSION_DONE) {
		a->prog->finished = 1;
		rc = CTP_EXIT_OK;
	}
	return rc;
}

/* SIGINT/SIGTERM stop, SIGHUP reloads; the supervisor passes them on to
 * the recording's process. */
static void on_signal(int sig)
{
	if (ctp_supervised_child > 0) {
		kill((pid_t)ctp_supervised_child, sig);
		if (sig != SIGHUP)
			rec_stop = sig;
		return;
	}
	if (sig == SIGHUP) {
		rec_hup = 1;
		return;
	}
	if (!rec_stop)
		alarm(2);
	rec_stop = sig;
}

/* A capture still running two seconds after SIGINT/SIGTERM ends here;
 * the snapshot in progress is an unnamed temporary file. */
static void on_alarm(int sig)
{
	static const char msg[] = PROG ": interrupted; the capture in "
				       "progress was discarded\n";
	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
		/* nothing more to do */
	}
	_exit(CTP_EXIT_INTERRUPTED);
}

static void signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	struct sigaction al = {.sa_handler = on_alarm};
	sigemptyset(&al.sa_mask);
	sigaction(SIGALRM, &al, NULL);
}

int ctp_cmd_record(int argc, char **argv)
{
	struct rec_args a = {0};
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	struct ctp_config *cfg = NULL;
	if ((rc = ctp_cli_load_config(a.config_path, NULL, &cfg)) != 0)
		return rc;
	if (a.workers)
		cfg->workers = a.workers;
	if ((rc = settle(&a, cfg)) >= 0) {
		ctp_config_free(cfg);
		return rc;
	}
	a.prog = mmap(NULL, sizeof(*a.prog), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a.prog == MAP_FAILED) {
		fprintf(stderr, PROG ": %s\n", strerror(errno));
		ctp_config_free(cfg);
		return CTP_EXIT_FAILURE;
	}
	if (a.duration_ns)
		a.prog->deadline_ns = ctp_now_ns() + a.duration_ns;
	signals();
	if (a.print)
		signal(SIGPIPE, SIG_IGN); /* EPIPE ends the recording */
	if (a.no_supervise)
		rc = record_run(cfg, &a);
	else
		rc = ctp_supervise(cfg, a.strict, record_run, &a, &rec_stop);
	if (a.prog->failed && (rc == CTP_EXIT_OK || a.prog->gave_up)) {
		fprintf(stderr,
			PROG ": %" PRIu64 " snapshot(s) in %s; %" PRIu64
			     " capture(s) not written (last: %s)\n",
			a.prog->written, a.dir, a.prog->failed, a.prog->cause);
		rc = CTP_EXIT_FAILURE;
	} else if (rc == CTP_EXIT_OK && ctp_verbosity >= 0) {
		fprintf(stderr, PROG ": %" PRIu64 " snapshot(s) in %s\n",
			a.prog->written, a.dir);
	}
	munmap(a.prog, sizeof(*a.prog));
	ctp_config_free(cfg);
	return rc;
}
