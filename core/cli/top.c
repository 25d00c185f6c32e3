/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core top` (docs/TOP.md): compare's first screen
 * (compare_view.c) over the interval between the last two captures, live
 * or over a recording, redrawn with ncurses and driven by keys. Live, a
 * child process runs `record` (its supervisor and its taskstats listener:
 * a plugin that crashes or hangs is left out, the exited tasks of each
 * interval are in the files) into a private temporary directory that top
 * follows, removing the files before the interval shown; `--replay DIR`
 * (or `replay DIR`) steps through a recording's files instead. The
 * terminal is topscreen.c's.
 */
#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture_util.h"
#include "cli.h"
#include "clock.h"
#include "compare_view.h"
#include "config.h"
#include "recdir.h"
#include "recordcfg.h"
#include "readcli.h"
#include "render.h"
#include "topscreen.h"
#include "view.h"

#define PROG		    "ctprof-core top"
#define DEFAULT_INTERVAL_NS 2000000000ull
#define FILTER_MAX	    64

/* `g`: the view's own sections, then one grouping for all of them. */
static const char *const groupings[][2] = {
	{"view", NULL},	  {"process", "pid"},	{"thread", "tid"},
	{"name", "comm"}, {"cgroup", "cgroup"},
};
#define N_GROUPINGS (sizeof(groupings) / sizeof(groupings[0]))

struct top {
	const char *config_path, *view_arg, *group_arg, *replay, *from, *to;
	uint64_t interval_ns, cap;
	/* The views that render over an interval (not `full:` ones). */
	char **views;
	size_t n_views, view_i;
	struct ctp_view *v; /* views[view_i], for its columns */
	int sort;	    /* index into v->cols, -1: the view's */
	int asc;	    /* -1 the view's order, 0 desc, 1 asc */
	size_t group_i;
	const char *group_custom; /* --group-by not among groupings */
	char filter[FILTER_MAX];
	bool paused, help;
	/* The interval shown: BASE and CAND files. */
	char base[PATH_MAX], cand[PATH_MAX];
	bool have;
	/* Live: the recording process, its private directory, the files
	 * seen (a newer one is the next CAND). */
	pid_t child;
	bool ended;
	char dir[PATH_MAX];
	/* Its stderr: the part of a line read, the newest capture's failed
	 * plugins. */
	int err_fd;
	char err[4096], failed[256];
	size_t err_len;
	uint64_t captures;
	/* Replay: the recording's readable files, the shown CAND, and how
	 * many captures back BASE is. */
	struct ctp_recdir_files files;
	size_t *good, n_good, ci, back;
	/* The last rendering. */
	char *text;
	size_t len;
	struct ctp_compare_view_info info;
	int rc;
	char msg[1280];
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: " PROG " [--interval D] [--view V] [--group-by AXES] "
		"[--config FILE]\n"
		"       " PROG " --replay DIR [--from T] [--to T] [--view V] "
		"[--group-by AXES]\n"
		"       ctprof-core replay DIR [...]   (the same as top "
		"--replay DIR)\n"
		"\n"
		"A live full-screen view of the interval between the last two "
		"captures,\n"
		"the tasks that exited in it included (as compare shows it), "
		"refreshed every\n"
		"interval; or the same screen over a recording's files "
		"(docs/TOP.md).\n"
		"\n"
		"  -i, --interval D     between captures: 500ms, 2s, 1m ... "
		"(default 2s)\n"
		"      --view V         the view shown first (default top; "
		"`ctprof-core views`)\n"
		"      --group-by AXES  one grouping for every section "
		"(docs/GROUPING.md)\n"
		"  -c, --config FILE    configuration (default: %s)\n"
		"      --replay DIR     a recording instead of live captures\n"
		"      --from T         replay: the first capture shown (as "
		"compare --from takes it)\n"
		"      --to T           replay: the last capture listed\n"
		"  -h, --help           this help\n"
		"\n"
		"Keys:\n"
		"  q, F10               quit\n"
		"  h, ?, F1             help\n"
		"  v / V                next view / choose a view; 1-9 the "
		"Nth view\n"
		"  < >                  sort by the column left / right of "
		"the sort column\n"
		"  s                    choose the sort column; r (or I) "
		"reverses the order\n"
		"  / or \\               filter rows by name (Enter applies, "
		"Esc clears)\n"
		"  Esc                  clear the filter\n"
		"  g                    grouping: view's, process, thread, "
		"name, cgroup\n"
		"  p, space             pause (live)\n"
		"  Left [ / Right ]     replay: one capture back / forward\n"
		"  Home / End           replay: the first / last capture\n"
		"  + / -                replay: BASE one capture further back "
		"/ nearer\n"
		"  t                    replay: jump to a time (-10m, 14:05, "
		"2026-11-27T14:05)\n"
		"\n"
		"Exit status: 0 ok (q, SIGINT, SIGTERM, SIGHUP); 1 failure; "
		"2 usage; a crash\n"
		"ends with its signal after the terminal is restored.\n",
		ctp_cli_default_config());
}

enum { O_VIEW = 256, O_GROUP_BY, O_REPLAY, O_FROM, O_TO };

static int parse_args(int argc, char **argv, struct top *t, bool replay)
{
	static const struct option opts[] = {
		{"interval", required_argument, NULL, 'i'},
		{"view", required_argument, NULL, O_VIEW},
		{"group-by", required_argument, NULL, O_GROUP_BY},
		{"config", required_argument, NULL, 'c'},
		{"replay", required_argument, NULL, O_REPLAY},
		{"from", required_argument, NULL, O_FROM},
		{"to", required_argument, NULL, O_TO},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int c;
	optind = 1;
	t->interval_ns = DEFAULT_INTERVAL_NS;
	while ((c = getopt_long(argc, argv, "i:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			if (ctp_config_parse_duration(optarg, &t->interval_ns) <
				    0 ||
			    t->interval_ns < CTP_RECORD_MIN_INTERVAL_NS ||
			    t->interval_ns > CTP_RECORD_MAX_INTERVAL_NS) {
				fprintf(stderr,
					PROG ": --interval wants a duration "
					     "from 100ms to 1d (2s, 500ms), "
					     "not '%s'\n",
					optarg);
				return CTP_EXIT_USAGE;
			}
			break;
		case 'c':
			t->config_path = optarg;
			break;
		case O_VIEW:
			t->view_arg = optarg;
			break;
		case O_GROUP_BY:
			t->group_arg = optarg;
			break;
		case O_REPLAY:
			t->replay = optarg;
			break;
		case O_FROM:
			t->from = optarg;
			break;
		case O_TO:
			t->to = optarg;
			break;
		case 'h':
			usage(stdout);
			return CTP_EXIT_OK;
		default:
			fprintf(stderr, "Try '" PROG " --help'.\n");
			return CTP_EXIT_USAGE;
		}
	}
	if (replay && !t->replay && optind < argc)
		t->replay = argv[optind++];
	if (optind != argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n",
			argv[optind]);
		return CTP_EXIT_USAGE;
	}
	if (replay && !t->replay) {
		fprintf(stderr, "ctprof-core replay: which recording? (replay "
				"DIR)\n");
		return CTP_EXIT_USAGE;
	}
	if ((t->from || t->to) && !t->replay) {
		fprintf(stderr, PROG ": --from and --to are --replay's\n");
		return CTP_EXIT_USAGE;
	}
	return -1;
}

/* ---- views and columns ---------------------------------------------- */

static int load_views(struct top *t)
{
	char **names, **paths, err[1024];
	size_t n;
	if (ctp_view_names(&names, &paths, &n) < 0)
		return -ENOMEM;
	t->views = calloc(n ? n : 1, sizeof(*t->views));
	for (size_t i = 0; i < n; i++) {
		struct ctp_view *v = NULL;
		if (t->views &&
		    ctp_view_load(paths[i], &v, err, sizeof(err)) == 0 &&
		    !v->full)
			t->views[t->n_views++] = names[i];
		else
			free(names[i]);
		ctp_view_free(v);
		free(paths[i]);
	}
	free(names);
	free(paths);
	if (!t->views)
		return -ENOMEM;
	const char *want = t->view_arg ? t->view_arg : "top";
	for (size_t i = 0; i < t->n_views; i++)
		if (strcmp(t->views[i], want) == 0)
			t->view_i = i;
	if (t->view_arg &&
	    (!t->n_views || strcmp(t->views[t->view_i], want) != 0)) {
		fprintf(stderr,
			PROG ": --view %s: no such view over an interval "
			     "(`ctprof-core views` lists them)\n",
			want);
		return -EINVAL;
	}
	if (!t->n_views) {
		fprintf(stderr,
			PROG ": no views found (`ctprof-core views`)\n");
		return -ENOENT;
	}
	return 0;
}

/* views[view_i] loaded, the sort back to the view's. */
static int pick_view(struct top *t, size_t i)
{
	char err[1024];
	struct ctp_view *v = NULL;
	if (ctp_view_find(t->views[i], &v, err, sizeof(err)) < 0) {
		snprintf(t->msg, sizeof(t->msg), "%s", err);
		return -EINVAL;
	}
	ctp_view_free(t->v);
	t->v = v;
	t->view_i = i;
	t->sort = -1;
	t->asc = -1;
	return 0;
}

static bool sortable(const struct ctp_view *v, size_t c)
{
	return v->cols[c].src != CTP_VSRC_IDENT;
}

/* The sort column one step left (-1) or right (+1) of the current one. */
static void move_sort(struct top *t, int dir)
{
	int n = (int)t->v->n_cols, c = t->sort >= 0 ? t->sort : (int)t->v->sort;
	for (int k = 0; k < n; k++) {
		c = (c + dir + n) % n;
		if (sortable(t->v, (size_t)c)) {
			t->sort = c;
			return;
		}
	}
}

/* ---- the interval: live ------------------------------------------- */

/* `record -o DIR --interval D --config FILE` run by this very binary: the
 * captures under record's supervisor (a plugin that crashes, hangs or runs
 * out of memory is left out, the recording goes on). In its own process
 * group (the terminal's signals are top's, which ends it), killed with top
 * (PR_SET_PDEATHSIG), stdin and stdout away from the terminal, stderr the
 * pipe `err` (live_line). Returns its pid, or -errno. */
static pid_t spawn_record(const struct top *t, const int err[2])
{
	char ival[32], exe[PATH_MAX];
	snprintf(ival, sizeof(ival), "%lluus",
		 (unsigned long long)(t->interval_ns / 1000));
	/* Its own name (ps shows `ctprof-core`, not `exe`), or the running
	 * binary when that path is gone. */
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[l > 0 ? l : 0] = '\0';
	if (l <= 0 || access(exe, X_OK) < 0)
		snprintf(exe, sizeof(exe), "/proc/self/exe");
	pid_t parent = getpid();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		setpgid(pid, pid); /* also the child's: no race either way */
		return pid;
	}
	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(CTP_EXIT_FAILURE);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul >= 0) {
		dup2(nul, STDIN_FILENO);
		dup2(nul, STDOUT_FILENO);
	}
	dup2(err[1], STDERR_FILENO);
	execl(exe, "ctprof-core", "record", "-o", t->dir, "--interval", ival,
	      "--config", t->config_path, (char *)NULL);
	dprintf(STDERR_FILENO, PROG ": cannot run record: %s\n",
		strerror(errno));
	_exit(CTP_EXIT_FAILURE);
}

/* One line the recording wrote on stderr. Its line for each capture
 * written ("ctprof-core: DIR/FILE: N threads, ...; plugins failed: A, B",
 * capture_util.c ctp_cli_write) says which plugins failed in the newest capture
 * (the header's "failed"), and is not repeated; any other (a plugin left out,
 * a warning, why it ended) goes on top's stderr: the status line, and
 * printed after the screen. Returns true when the screen should show it. */
static bool live_line(struct top *t, const char *line)
{
	static const char head[] = "ctprof-core: ";
	size_t hl = sizeof(head) - 1, dl = strlen(t->dir);
	if (strncmp(line, head, hl) != 0 ||
	    strncmp(line + hl, t->dir, dl) != 0 || line[hl + dl] != '/') {
		fprintf(stderr, "%s\n", line);
		return true;
	}
	const char *f = strstr(line, "; plugins failed: ");
	char was[sizeof(t->failed)];
	memcpy(was, t->failed, sizeof(was));
	t->failed[0] = '\0';
	if (f && strncmp(f += 18, "none", 4) != 0)
		snprintf(t->failed, sizeof(t->failed), "%.*s",
			 (int)strcspn(f, ";"), f);
	return strcmp(was, t->failed) != 0;
}

/* What the recording wrote since the last call, line by line. Returns
 * true when the screen should change. */
static bool live_drain(struct top *t)
{
	bool dirty = false;
	while (t->err_fd >= 0) {
		ssize_t r = read(t->err_fd, t->err + t->err_len,
				 sizeof(t->err) - 1 - t->err_len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0 || errno != EAGAIN) {
				close(t->err_fd);
				t->err_fd = -1;
			}
			break;
		}
		t->err_len += (size_t)r;
		t->err[t->err_len] = '\0';
		char *p = t->err, *nl;
		while ((nl = strchr(p, '\n'))) {
			*nl = '\0';
			dirty |= live_line(t, p);
			p = nl + 1;
		}
		t->err_len -= (size_t)(p - t->err);
		memmove(t->err, p, t->err_len);
		/* A line longer than the buffer: shown cut. */
		if (t->err_len == sizeof(t->err) - 1) {
			t->err[t->err_len] = '\0';
			dirty |= live_line(t, t->err);
			t->err_len = 0;
		}
	}
	return dirty;
}

static int live_start(struct top *t)
{
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(t->dir, sizeof(t->dir), "%s/ctprof-top-XXXXXX",
			     tmp) >= sizeof(t->dir) ||
	    !mkdtemp(t->dir)) {
		fprintf(stderr, PROG ": a private directory in %s: %s\n", tmp,
			strerror(errno));
		t->dir[0] = '\0';
		return -1;
	}
	ctp_top_private_set(t->dir, 0);
	int err[2];
	if (pipe2(err, O_CLOEXEC) < 0) {
		fprintf(stderr, PROG ": a pipe: %s\n", strerror(errno));
		return -1;
	}
	/* Room for its lines while a prompt keeps top from reading. */
	fcntl(err[0], F_SETPIPE_SZ, 1 << 20);
	pid_t pid = spawn_record(t, err);
	close(err[1]);
	if (pid < 0) {
		close(err[0]);
		fprintf(stderr, PROG ": cannot start the recording: %s\n",
			strerror((int)-pid));
		return -1;
	}
	t->err_fd = err[0];
	fcntl(t->err_fd, F_SETFL, O_NONBLOCK);
	t->child = pid;
	ctp_top_private_set(t->dir, pid);
	return 0;
}

/* The recording process ended by itself (it says why on stderr): top
 * goes on with what it has. */
static bool live_child(struct top *t)
{
	int st;
	if (t->child <= 0 || waitpid(t->child, &st, WNOHANG) != t->child)
		return false;
	live_drain(t);
	t->child = 0;
	ctp_top_private_set(t->dir, 0);
	t->ended = true;
	snprintf(t->msg, sizeof(t->msg),
		 "the recording process ended (%s %d): no more captures",
		 WIFEXITED(st) ? "status" : "signal",
		 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return true;
}

/* Follow the recording: a newer file than CAND makes it CAND, the old
 * CAND BASE (after a pause: the interval from the last capture shown;
 * the files between give its exits), and the files before BASE are
 * removed. Returns true when the interval changed. */
static bool live_follow(struct top *t)
{
	char newest[CTP_RECDIR_NAME_LEN + 1] = "";
	int64_t ns;
	DIR *d = opendir(t->dir);
	if (!d)
		return false;
	for (struct dirent *e; (e = readdir(d));)
		if (ctp_recdir_name_time(e->d_name, &ns) == 0 &&
		    strcmp(e->d_name, newest) > 0)
			/* The grammar's length exactly: it fits. */
			memcpy(newest, e->d_name, sizeof(newest));
	const char *cand = strrchr(t->cand, '/');
	if (!newest[0] || (cand && strcmp(newest, cand + 1) <= 0)) {
		closedir(d);
		return false;
	}
	memcpy(t->base, t->cand, sizeof(t->base));
	snprintf(t->cand, sizeof(t->cand), "%s/%s", t->dir, newest);
	t->captures++;
	t->have = t->base[0] != '\0';
	const char *base = t->have ? strrchr(t->base, '/') + 1 : NULL;
	rewinddir(d);
	for (struct dirent *e; base && (e = readdir(d));)
		if (ctp_recdir_name_time(e->d_name, &ns) == 0 &&
		    strcmp(e->d_name, base) < 0)
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	return true;
}

/* The recording process asked to end (SIGTERM: the capture in progress
 * discarded) and waited for, 5 s at most before SIGKILL. */
static void live_stop(struct top *t)
{
	struct timespec ts = {.tv_nsec = 10000000};
	if (t->child > 0)
		kill(t->child, SIGTERM);
	for (int i = 0; t->child > 0 && i < 500; i++) {
		pid_t w = waitpid(t->child, NULL, WNOHANG);
		if (w == t->child || (w < 0 && errno != EINTR)) {
			t->child = 0;
			break;
		}
		nanosleep(&ts, NULL);
	}
	if (t->child > 0)
		ctp_top_child_kill(t->child);
	t->child = 0;
	ctp_top_private_set(t->dir, 0);
	/* Its last words: in the pipe, as it is gone (not read to the
	 * pipe's end, which a process it started might hold). */
	live_drain(t);
	if (t->err_fd >= 0)
		close(t->err_fd);
	t->err_fd = -1;
}

static void live_done(struct top *t)
{
	live_stop(t);
	if (t->dir[0])
		ctp_top_dir_remove(t->dir);
	ctp_top_private_set(NULL, 0);
}

/* ---- the interval: a recording --------------------------------------- */

static void replay_paths(struct top *t)
{
	size_t bi = t->ci > t->back ? t->ci - t->back : 0;
	const struct ctp_recdir_file *b = &t->files.v[t->good[bi]],
				     *c = &t->files.v[t->good[t->ci]];
	snprintf(t->base, sizeof(t->base), "%s/%s", t->replay, b->name);
	snprintf(t->cand, sizeof(t->cand), "%s/%s", t->replay, c->name);
	t->have = bi != t->ci;
}

static int replay_start(struct top *t)
{
	struct ctp_recdir_skips skips = {0};
	char err[1024];
	if (ctp_readcli_cap("top", t->config_path, NULL, &t->cap) != 0)
		return -1;
	int r = ctp_recdir_files_open(t->replay, t->from, t->to, &skips,
				      &t->files, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		return -1;
	}
	t->good = calloc(t->files.n ? t->files.n : 1, sizeof(*t->good));
	if (!t->good)
		return -1;
	for (size_t i = 0; i < t->files.n; i++)
		if (!t->files.v[i].bad)
			t->good[t->n_good++] = i;
	if (t->n_good < 2) {
		fprintf(stderr,
			PROG ": %s: %zu capture(s) there%s; an interval takes "
			     "two\n",
			t->replay, t->n_good,
			t->from || t->to ? " from --from to --to" : "");
		return -1;
	}
	ctp_recdir_warn_skips(stderr, PROG, t->replay, &skips);
	t->ci = 1;
	t->back = 1;
	replay_paths(t);
	return 0;
}

/* CAND at the newest capture at or before the time `when` takes. */
static void replay_jump(struct top *t, const char *when)
{
	int64_t ns;
	if (ctp_recdir_parse_when(when, (int64_t)ctp_cli_realtime_ns(), &ns) <
	    0) {
		snprintf(t->msg, sizeof(t->msg),
			 "t: '%s' is no time (latest, -10m, 14:05, "
			 "2026-11-27T14:05)",
			 when);
		return;
	}
	size_t i = 0;
	while (i + 1 < t->n_good && t->files.v[t->good[i + 1]].t <= ns)
		i++;
	t->ci = i ? i : 1;
}

/* ---- rendering --------------------------------------------------------- */

static const char *group_by(const struct top *t)
{
	return t->group_custom ? t->group_custom : groupings[t->group_i][1];
}

static void render(struct top *t)
{
	free(t->text);
	t->text = NULL;
	t->len = 0;
	memset(&t->info, 0, sizeof(t->info));
	if (!t->have)
		return;
	FILE *m = open_memstream(&t->text, &t->len);
	if (!m)
		return;
	const char *sort = t->sort >= 0 ? t->v->cols[t->sort].id : NULL;
	struct ctp_compare_view_args a = {
		.paths = {t->base, t->cand},
		.cap = t->cap,
		.view = t->views[t->view_i],
		.sort = sort,
		.asc = t->asc,
		.group_by = group_by(t),
		.out = m,
		.log = stderr,
		.width = (size_t)(COLS > 0 ? COLS : 80),
		/* The header's two lines and the key line are top's. */
		.height = (size_t)(LINES > 4 ? LINES - 3 : 1),
		.filter = t->filter[0] ? t->filter : NULL,
		.brief = true,
		.info = &t->info,
	};
	t->rc = ctp_compare_view(&a);
	fclose(m);
}

/* ---- drawing ------------------------------------------------------------ */

static void clock_text(uint64_t ns, char *buf, size_t n, bool date)
{
	time_t s = (time_t)(ns / 1000000000ull);
	struct tm tm;
	if (!ns || !localtime_r(&s, &tm))
		snprintf(buf, n, "-");
	else
		strftime(buf, n, date ? "%Y-%m-%d %H:%M:%S" : "%H:%M:%S", &tm);
}

/* printf at buf + *o, *o kept inside buf whatever was cut. */
static void __attribute__((format(printf, 4, 5)))
add(char *buf, size_t n, size_t *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = *o < n ? vsnprintf(buf + *o, n - *o, fmt, ap) : 0;
	va_end(ap);
	*o = w < 0 ? *o : *o + (size_t)w < n ? *o + (size_t)w : n - 1;
}

static void header(const struct top *t)
{
	char when[64], line[512], host[64];
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	clock_text(t->info.cand_ns ? t->info.cand_ns : ctp_cli_realtime_ns(),
		   when, sizeof(when), t->replay != NULL);
	size_t o = 0;
	if (t->replay)
		add(line, sizeof(line), &o,
		    "ctprof-core replay  %s  %s  capture %zu/%zu, "
		    "%zu back",
		    t->info.host[0] ? t->info.host : host, when, t->ci + 1,
		    t->n_good, t->back);
	else
		add(line, sizeof(line), &o,
		    "ctprof-core top  %s  %s  every %.3gs%s%s",
		    t->info.host[0] ? t->info.host : host, when,
		    (double)t->interval_ns / 1e9, t->paused ? "  PAUSED" : "",
		    t->ended ? "  ENDED" : "");
	if (t->have)
		add(line, sizeof(line), &o, "  over %.2fs", t->info.seconds);
	attron(A_BOLD);
	mvaddnstr(0, 0, line, COLS);
	attroff(A_BOLD);
	clrtoeol();
	o = 0;
	add(line, sizeof(line), &o, "view %s  group %s  sort %s%s",
	    t->views[t->view_i],
	    t->group_custom ? t->group_custom : groupings[t->group_i][0],
	    t->info.sort[0] ? t->info.sort : "-",
	    (t->asc >= 0 ? t->asc : t->v->asc) ? " (asc)" : "");
	if (t->filter[0])
		add(line, sizeof(line), &o, "  filter '%s'", t->filter);
	bool short_of = false;
	if (t->have && !t->info.exits) {
		add(line, sizeof(line), &o, "  no exits");
		short_of = true;
	} else if (t->have && t->info.exited != SIZE_MAX) {
		add(line, sizeof(line), &o, "  exited %zu", t->info.exited);
	}
	if (t->failed[0] && !t->replay)
		add(line, sizeof(line), &o, "  failed %s", t->failed);
	if (t->info.denied) {
		add(line, sizeof(line), &o, "  %llu reads denied",
		    (unsigned long long)t->info.denied);
		short_of = true;
	}
	/* Said once: what is missing is what a user may not read. */
	if (short_of && !t->replay && geteuid() != 0)
		add(line, sizeof(line), &o, " (not root)");
	mvaddnstr(1, 0, line, COLS);
	clrtoeol();
}

/* The label of the sort column in the column line under a section's
 * title ("... by LABEL"), shown reversed. */
static void mark_sort(const struct top *t, int y, const char *title,
		      const char *cols)
{
	char by[96];
	if (!t->info.sort[0])
		return;
	snprintf(by, sizeof(by), " by %s", t->info.sort);
	if (!strstr(title, by))
		return;
	size_t l = strlen(t->info.sort);
	for (const char *p = cols; (p = strstr(p, t->info.sort)); p += l) {
		bool start = p == cols || p[-1] == ' ',
		     end = p[l] == ' ' || p[l] == '\0' || p[l] == '\n';
		if (start && end && (int)(p - cols) < COLS) {
			mvchgat(y, (int)(p - cols), (int)l, A_REVERSE, 0, NULL);
			return;
		}
	}
}

static void body(const struct top *t)
{
	int y = 2, last = LINES - 1;
	const char *p = t->text, *end = t->text ? t->text + t->len : NULL;
	char prev[4096] = "";
	if (!t->have) {
		mvaddnstr(y, 0,
			  t->replay ? "no interval"
			  : t->captures
				  ? "first capture taken; the interval ends "
				    "at the next one"
				  : "capturing...",
			  COLS);
		return;
	}
	while (p && p < end && y < last) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[4096];
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = '\0';
		move(y, 0);
		addnstr(line, (int)n);
		clrtoeol();
		if (prev[0])
			mark_sort(t, y, prev, line);
		memcpy(prev, line, n + 1);
		y++;
		p = nl ? nl + 1 : end;
	}
	for (; y < last; y++) {
		move(y, 0);
		clrtoeol();
	}
}

static void footer(const struct top *t)
{
	const char *keys =
		t->replay ? "h help  q quit  [ ] step  + - widen  t time  v "
			    "view  < > sort  / filter  g group"
			  : "h help  q quit  p pause  v view  < > sort  s "
			    "sort by  / filter  g group";
	move(LINES - 1, 0);
	clrtoeol();
	if (t->msg[0]) {
		attron(A_REVERSE);
		mvaddnstr(LINES - 1, 0, t->msg, COLS);
		attroff(A_REVERSE);
	} else {
		mvaddnstr(LINES - 1, 0, keys, COLS);
	}
}

static void help_screen(const struct top *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return;
	usage(m);
	fclose(m);
	erase();
	const char *p = buf ? strstr(buf, "Keys:") : NULL;
	int y = 0;
	mvaddnstr(y++, 0,
		  t->replay ? "ctprof-core replay: keys (any key "
			      "returns)"
			    : "ctprof-core top: keys (any key returns)",
		  COLS);
	y++;
	while (p && *p && y < LINES) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);
		if (strncmp(p, "Exit status", 11) == 0)
			break;
		mvaddnstr(y++, 0, p, n < COLS ? n : COLS);
		p = nl ? nl + 1 : NULL;
	}
	free(buf);
	refresh();
}

static void draw(const struct top *t)
{
	if (t->help) {
		help_screen(t);
		return;
	}
	header(t);
	body(t);
	footer(t);
	refresh();
}

/* ---- keys ----------------------------------------------------------- */

/* A line typed on the last row; true with Enter, false with Esc. */
static bool prompt(const char *label, char *buf, size_t n)
{
	size_t len = strlen(buf);
	curs_set(1);
	timeout(250); /* a signal to end is seen within this */
	for (;;) {
		move(LINES - 1, 0);
		clrtoeol();
		mvprintw(LINES - 1, 0, "%s%s", label, buf);
		refresh();
		int ch = getch();
		if (ctp_top_stop) {
			curs_set(0);
			return false;
		}
		if (ch == ERR)
			continue;
		if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
			curs_set(0);
			return true;
		}
		if (ch == 27) {
			curs_set(0);
			return false;
		}
		if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && len)
			buf[--len] = '\0';
		else if (ch >= 32 && ch < 127 && len + 1 < n) {
			buf[len++] = (char)ch;
			buf[len] = '\0';
		}
	}
}

/* A list to pick from: arrows and Enter, or the item's number; -1 Esc. */
static int chooser(const char *title, const char *const *items, size_t n,
		   size_t at)
{
	timeout(250); /* a signal to end is seen within this */
	for (;;) {
		erase();
		mvaddnstr(0, 0, title, COLS);
		size_t first =
			at + 3 > (size_t)LINES ? at + 3 - (size_t)LINES : 0;
		for (size_t i = first; i < n && (int)(i - first) + 2 < LINES;
		     i++) {
			if (i == at)
				attron(A_REVERSE);
			mvprintw((int)(i - first) + 2, 0, "%2zu %s", i + 1,
				 items[i]);
			if (i == at)
				attroff(A_REVERSE);
		}
		refresh();
		int ch = getch();
		if (ctp_top_stop || ch == 27 || ch == 'q')
			return -1;
		if (ch == ERR)
			continue;
		if (ch == KEY_UP && at)
			at--;
		else if (ch == KEY_DOWN && at + 1 < n)
			at++;
		else if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
			return (int)at;
		else if (ch >= '1' && ch <= '9' && (size_t)(ch - '1') < n)
			return ch - '1';
	}
}

static void choose_sort(struct top *t)
{
	const char *items[64];
	int idx[64];
	size_t n = 0, at = 0;
	int cur = t->sort >= 0 ? t->sort : (int)t->v->sort;
	for (size_t c = 0; c < t->v->n_cols && n < 64; c++)
		if (sortable(t->v, c)) {
			if ((int)c == cur)
				at = n;
			idx[n] = (int)c;
			items[n++] = t->v->cols[c].label;
		}
	int k = n ? chooser("sort by (Enter picks, Esc leaves)", items, n, at)
		  : -1;
	if (k >= 0)
		t->sort = idx[k];
}

/* The keys replay adds (step, widen, jump): false for any other key. */
static bool replay_key(struct top *t, int ch)
{
	switch (ch) {
	case KEY_LEFT:
	case '[':
		if (t->ci > 1)
			t->ci--;
		break;
	case KEY_RIGHT:
	case ']':
		if (t->ci + 1 < t->n_good)
			t->ci++;
		break;
	case KEY_HOME:
		t->ci = 1;
		break;
	case KEY_END:
		t->ci = t->n_good - 1;
		break;
	case '+':
	case '=':
		if (t->back < t->n_good - 1)
			t->back++;
		break;
	case '-':
		if (t->back > 1)
			t->back--;
		break;
	case 't':
	case 'T': {
		char buf[64] = "";
		if (prompt("time (latest, -10m, 14:05, YYYY-mm-ddTHH:MM): ",
			   buf, sizeof(buf)))
			replay_jump(t, buf);
		break;
	}
	default:
		return false;
	}
	return true;
}

/* Returns false to quit. */
static bool key(struct top *t, int ch)
{
	t->msg[0] = '\0';
	if (t->help) {
		t->help = false;
		return true;
	}
	if (t->replay && replay_key(t, ch)) {
		replay_paths(t);
		return true;
	}
	switch (ch) {
	case 'q':
	case 'Q':
	case KEY_F(10):
		return false;
	case 'h':
	case '?':
	case KEY_F(1):
		t->help = true;
		break;
	case 'v':
	case 'V':
		if (ch == 'v') {
			pick_view(t, (t->view_i + 1) % t->n_views);
		} else {
			int k = chooser("view (Enter picks, Esc leaves)",
					(const char *const *)t->views,
					t->n_views, t->view_i);
			if (k >= 0)
				pick_view(t, (size_t)k);
		}
		break;
	case '<':
	case ',':
		move_sort(t, -1);
		break;
	case '>':
	case '.':
		move_sort(t, 1);
		break;
	case 's':
	case KEY_F(6):
		choose_sort(t);
		break;
	case 'r':
	case 'I': {
		/* The other order than the one shown; the view's is -1. */
		int now = t->asc >= 0 ? t->asc : t->v->asc;
		t->asc = !now == t->v->asc ? -1 : !now;
	} break;
	case '/':
	case '\\': {
		char buf[FILTER_MAX];
		snprintf(buf, sizeof(buf), "%s", t->filter);
		if (prompt("filter: ", buf, sizeof(buf)))
			snprintf(t->filter, sizeof(t->filter), "%s", buf);
		else
			t->filter[0] = '\0';
		break;
	}
	case 27:
		t->filter[0] = '\0';
		break;
	case 'g':
		t->group_custom = NULL;
		t->group_i = (t->group_i + 1) % N_GROUPINGS;
		break;
	case 'p':
	case ' ':
		if (!t->replay)
			t->paused = !t->paused;
		break;
	default:
		if (ch >= '1' && ch <= '9' && (size_t)(ch - '1') < t->n_views)
			pick_view(t, (size_t)(ch - '1'));
		break;
	}
	if (t->replay)
		replay_paths(t);
	return true;
}

/* ---- the loop ---------------------------------------------------------- */

static void run(struct top *t)
{
	bool dirty = true;
	for (;;) {
		if (ctp_top_stop)
			return;
		if (!t->replay) {
			dirty |= live_drain(t);
			dirty |= live_child(t);
			if (!t->paused)
				dirty |= live_follow(t);
		}
		if (dirty) {
			char news[256];
			if (!t->help)
				render(t);
			ctp_top_screen_news(news, sizeof(news));
			if (news[0] && !t->msg[0])
				snprintf(t->msg, sizeof(t->msg), "%s", news);
			draw(t);
			dirty = false;
		}
		/* A new file is seen within a tick (or an interval, if
		 * shorter). */
		uint64_t tick_ms = t->interval_ns / 1000000;
		timeout(t->replay || tick_ms > 250 ? 250 : (int)tick_ms);
		int ch = getch();
		if (ch == ERR)
			continue;
		if (ch == KEY_RESIZE) {
			dirty = true;
			continue;
		}
		if (!key(t, ch))
			return;
		dirty = true;
	}
}

static int top_main(int argc, char **argv, bool replay)
{
	struct top t = {
		.sort = -1, .asc = -1, .files = {.dfd = -1}, .err_fd = -1};
	int rc = parse_args(argc, argv, &t, replay);
	if (rc >= 0)
		return rc;
	if (!t.config_path)
		t.config_path = ctp_cli_default_config();
	if (load_views(&t) < 0 || pick_view(&t, t.view_i) < 0) {
		if (t.msg[0])
			fprintf(stderr, PROG ": %s\n", t.msg);
		rc = CTP_EXIT_USAGE;
		goto out;
	}
	if (t.group_arg) {
		t.group_custom = t.group_arg;
		for (size_t i = 1; i < N_GROUPINGS; i++)
			if (strcmp(t.group_arg, groupings[i][1]) == 0) {
				t.group_i = i;
				t.group_custom = NULL;
			}
	}
	/* Live: the config checked here (FILE:LINE:COL, status 2), as the
	 * recording process will load it. */
	if (!t.replay &&
	    (rc = ctp_readcli_cap("top", t.config_path, NULL, &t.cap)) != 0)
		goto out;
	rc = CTP_EXIT_FAILURE;
	if (t.replay && replay_start(&t) < 0)
		goto out;
	if (ctp_top_screen_begin() < 0) {
		rc = CTP_EXIT_USAGE;
		goto out;
	}
	/* The recording's stderr is the screen's kept one (topscreen.c). */
	if (!t.replay && live_start(&t) < 0) {
		live_stop(&t);
		ctp_top_screen_end();
		goto out;
	}
	run(&t);
	/* Its last words kept too, shown after the screen. */
	live_stop(&t);
	ctp_top_screen_end();
	rc = CTP_EXIT_OK;
out:
	if (!t.replay)
		live_done(&t);
	ctp_recdir_files_done(&t.files);
	free(t.good);
	free(t.text);
	for (size_t i = 0; i < t.n_views; i++)
		free(t.views[i]);
	free(t.views);
	ctp_view_free(t.v);
	return rc;
}

int ctp_cmd_top(int argc, char **argv)
{
	return top_main(argc, argv, false);
}

int ctp_cmd_replay(int argc, char **argv)
{
	return top_main(argc, argv, true);
}
