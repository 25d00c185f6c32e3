/* SPDX-License-Identifier: MIT */
/* The capture service (see capsvc.h). */
#include "capsvc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture_util.h"
#include "cli.h"
#include "clock.h"
#include "ctprof/plugin-util.h"
#include "engine.h"
#include "loader.h"
#include "log.h"
#include "supervise.h"

/* How long a child asked to end (its socket closed, then SIGTERM) has
 * before it is killed. */
#define END_GRACE_NS 500000000ull
/* Between the two looks at a stuck child's slots. */
#define BUSY_GAP_NS 20000000ull

struct ctp_capsvc {
	struct ctp_config *cfg;
	struct ctp_capsvc_opts o;
	const volatile sig_atomic_t *stop;
	struct ctp_sv *sv;
	int memfd;
	pid_t child;
	int sock; /* our end of the child's socket, -1 without a child */
	uint32_t seq;
	unsigned *strikes; /* per plugin: crashes, hangs, breaches */
};

/* ---- The child ----------------------------------------------------------- */

static volatile sig_atomic_t child_stop;

static void child_on_signal(int sig)
{
	child_stop = sig;
}

static int send_msg(int fd, const struct ctp_capsvc_msg *m)
{
	ssize_t n;
	do
		n = send(fd, m, sizeof(*m), MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == sizeof(*m) ? 0 : -EIO;
}

/* The answer to a request (or to nothing: the ready message, seq 0). */
static void answer(int fd, uint32_t seq, int status, uint64_t bytes,
		   const char *why)
{
	struct ctp_capsvc_msg m = {.magic = CTP_CAPSVC_MAGIC,
				   .seq = seq,
				   .status = status,
				   .bytes = bytes};
	/* Cut to the message's room (a longer reason is the log's). */
	size_t n = why ? strnlen(why, sizeof(m.why) - 1) : 0;
	memcpy(m.why, why ? why : "", n);
	m.why[n] = '\0';
	send_msg(fd, &m);
}

/* The child's signals (SIGTERM and SIGINT end it), crash containment and
 * memory ceiling, each failure of the last two logged. */
static void child_arm(struct ctp_capsvc *cs)
{
	struct sigaction sa = {.sa_handler = child_on_signal};
	sigset_t all;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	int r = ctp_sv_child_setup(cs->sv);
	if (r < 0)
		ctp_log(CTP_LOG_WARNING, "crash containment not armed: %s",
			strerror(-r));
	if ((r = ctp_sv_memory_ceiling(cs->cfg->service.memory_limit)) < 0)
		ctp_log(CTP_LOG_WARNING, "memory ceiling not set: %s",
			strerror(-r));
}

/* The plugins loaded into *eng and *cap, confined to --user when asked;
 * on a failure the parent is told why and the child ends. */
static void child_load(struct ctp_capsvc *cs, int fd, struct ctp_engine *eng,
		       struct ctp_capture **cap)
{
	const struct ctp_config *cfg = cs->cfg;
	int r;
	if (cs->o.user && (r = ctp_cli_confine(cs->o.user, cfg)) < 0) {
		/* Every child would fail alike: the service cannot go on. */
		answer(fd, 0, -ENOTRECOVERABLE, 0,
		       "cannot capture as the --user (see the log)");
		_exit(CTP_EXIT_FAILURE);
	}
	if (ctp_capture_new(cfg->workers ? cfg->workers : 1, cap) < 0) {
		answer(fd, 0, -ENOMEM, 0, "cannot start a capture");
		_exit(CTP_EXIT_FAILURE);
	}
	(*cap)->config_path = strdup(cs->o.config_path);
	r = ctp_engine_init(eng, cfg, *cap, &child_stop);
	if (r >= 0) {
		eng->recording = true;
		r = ctp_engine_load(eng);
	}
	if (r >= 0 && cs->o.user && ctp_cli_confine_loaded() < 0) {
		answer(fd, 0, -ENOTRECOVERABLE, 0,
		       "cannot close bpf() after the plugins' init (see the "
		       "log)");
		_exit(CTP_EXIT_FAILURE);
	}
	if (r < 0) {
		answer(fd, 0, r == -ECANCELED ? -ENOTRECOVERABLE : r, 0,
		       r == -ECANCELED ? "a required plugin failed to load"
				       : "loading plugins failed");
		_exit(CTP_EXIT_FAILURE);
	}
}

/* The child's life: load, say so, capture on each request until the
 * socket closes or a signal asks it to end. Never returns. */
static void child_main(struct ctp_capsvc *cs, int fd)
{
	const struct ctp_config *cfg = cs->cfg;
	struct ctp_capture *cap = NULL;
	struct ctp_engine eng;
	char err[512], path[64];
	const char *what;
	int r;

	child_arm(cs);
	child_load(cs, fd, &eng, &cap);
	answer(fd, 0, 0, 0, NULL);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", cs->memfd);
	while (!child_stop) {
		struct ctp_capsvc_msg m;
		ssize_t n = recv(fd, &m, sizeof(m), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* the parent closed our socket */
		if ((size_t)n != sizeof(m) || m.magic != CTP_CAPSVC_MAGIC)
			break;
		uint64_t bytes = 0;
		atomic_store(&cs->sv->oom_plugin, 0);
		ctp_cli_peer = m.asker;
		r = ctp_cli_capture_again(&eng, true, &what);
		if (r < 0) {
			snprintf(err, sizeof(err), "%s: %s", what,
				 strerror(-r));
		} else if (atomic_load(&cs->sv->oom_plugin)) {
			/* The parent names and quarantines it; this child
			 * ends with what the plugin took. */
			answer(fd, m.seq, -ENOMEM, 0,
			       "a plugin ran out of memory");
			_exit(CTP_EXIT_OK);
		} else if (ctp_capture_spoiled(cap, err, sizeof(err))) {
			/* Short of descriptors or memory: the capture is not
			 * the host's, so no answer rather than a wrong one. */
			r = -EAGAIN;
		} else if (ftruncate(cs->memfd, 0) < 0 ||
			   lseek(cs->memfd, 0, SEEK_SET) < 0) {
			r = -errno;
			snprintf(err, sizeof(err), "the memory file: %s",
				 strerror(errno));
		} else {
			r = ctp_cli_write_to(cap, cfg, path, &child_stop,
					     &bytes, false, err, sizeof(err));
		}
		if (r == 0 && ctp_verbosity >= 1) {
			char subject[96];
			snprintf(subject, sizeof(subject), "%s: a capture",
				 cs->o.prog);
			ctp_cli_report(cap, subject, bytes);
		}
		answer(fd, m.seq, r, bytes, r < 0 ? err : NULL);
		if (r == -ENOMEM)
			break; /* a fresh child starts with what it needs */
	}
	/* Asked to end: plugins' fini, nothing else to leave behind. */
	ctp_engine_unload(&eng);
	ctp_engine_done(&eng);
	ctp_capture_free(cap);
	_exit(child_stop ? CTP_EXIT_INTERRUPTED : CTP_EXIT_OK);
}

/* ---- The parent ---------------------------------------------------------- */

int ctp_capsvc_new(struct ctp_config *cfg, const struct ctp_capsvc_opts *o,
		   int memfd, const volatile sig_atomic_t *stop,
		   struct ctp_capsvc **out)
{
	struct ctp_capsvc *cs = calloc(1, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	cs->strikes = calloc(cfg->n_plugins + 1, sizeof(*cs->strikes));
	int r = cs->strikes ? ctp_sv_map(&cs->sv) : -ENOMEM;
	if (r < 0) {
		free(cs->strikes);
		free(cs);
		return r;
	}
	cs->cfg = cfg;
	cs->o = *o;
	cs->stop = stop;
	cs->memfd = memfd;
	cs->sock = -1;
	*out = cs;
	return 0;
}

int ctp_capsvc_child(const struct ctp_capsvc *cs)
{
	return cs ? cs->child : 0;
}

/* Wait for the child until deadline (monotonic ns); its wait status, or
 * -ETIMEDOUT. */
static int reap_until(pid_t pid, uint64_t deadline)
{
	for (;;) {
		int st;
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return st;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (ctp_now_ns() >= deadline)
			return -ETIMEDOUT;
		struct timespec ts = {.tv_nsec = 5000000};
		nanosleep(&ts, NULL);
	}
}

/* The child gone: killed when `kill_now`, else asked (socket closed,
 * SIGTERM) with a grace. Its wait status (or -errno). */
static int end_child(struct ctp_capsvc *cs, bool kill_now)
{
	if (cs->sock >= 0)
		close(cs->sock);
	cs->sock = -1;
	if (!cs->child)
		return 0;
	int st = -ETIMEDOUT;
	if (!kill_now) {
		kill(cs->child, SIGTERM);
		st = reap_until(cs->child, ctp_now_ns() + END_GRACE_NS);
	}
	if (st == -ETIMEDOUT) {
		kill(cs->child, SIGKILL);
		st = reap_until(cs->child, UINT64_MAX);
	}
	cs->child = 0;
	return st;
}

/* Wait for one message on the child's socket until deadline. 0, -EPIPE
 * (the child is gone), -ETIMEDOUT, -ECANCELED. */
static int recv_until(int fd, struct ctp_capsvc_msg *m, uint64_t deadline,
		      const volatile sig_atomic_t *stop)
{
	for (;;) {
		if (stop && *stop)
			return -ECANCELED;
		uint64_t now = ctp_now_ns();
		if (now >= deadline)
			return -ETIMEDOUT;
		uint64_t left_ms = (deadline - now + 999999) / 1000000;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int r = poll(&p, 1, left_ms > 100 ? 100 : (int)left_ms);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		ssize_t n = recv(fd, m, sizeof(*m), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -EPIPE;
		if ((size_t)n != sizeof(*m) || m->magic != CTP_CAPSVC_MAGIC)
			return -EPROTO;
		return 0;
	}
}

/* Count a strike against plugin i; quarantine it (marked failed with
 * `reason` in every later capture) once it has enough. Returns true when
 * it is now quarantined. */
static bool strike(struct ctp_capsvc *cs, int32_t i, const char *reason)
{
	struct ctp_plugin_cfg *pc = &cs->cfg->plugins[i];
	unsigned n = ++cs->strikes[i];
	if (n < cs->cfg->service.quarantine_after) {
		ctp_log(CTP_LOG_WARNING,
			"plugin %s %s (%u of %u before it is left out)",
			pc->name, reason, n, cs->cfg->service.quarantine_after);
		return false;
	}
	free(pc->crashed);
	pc->crashed = strdup(reason);
	ctp_log(CTP_LOG_WARNING,
		"plugin %s %s; left out of every later capture", pc->name,
		reason);
	return true;
}

/* A plugin the service cannot go on without? */
static bool vital(const struct ctp_capsvc *cs, int32_t i)
{
	return cs->cfg->plugins[i].required || cs->o.strict;
}

/* Start a child and wait for it to say it is loaded (within the
 * deadline). 0, or a negative errno with why (a crash or hang while
 * loading strikes the plugin: -EAGAIN to try again). */
static int spawn(struct ctp_capsvc *cs, uint64_t deadline, char *why, size_t n)
{
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		snprintf(why, n, "cannot start the capture process: %s",
			 strerror(errno));
		return -errno;
	}
	ctp_sv_reset(cs->sv);
	pid_t parent = getpid();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(sp[0]);
		close(sp[1]);
		snprintf(why, n, "cannot start the capture process: %s",
			 strerror(e));
		return -e;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(CTP_EXIT_FAILURE);
		close(sp[0]);
		child_main(cs, sp[1]);
	}
	close(sp[1]);
	cs->child = pid;
	cs->sock = sp[0];
	struct ctp_capsvc_msg m;
	int r = recv_until(cs->sock, &m, deadline, cs->stop);
	if (r == 0 && m.status == 0)
		return 0;
	if (r == 0) {
		snprintf(why, n, "%s", m.why);
		end_child(cs, false);
		return m.status;
	}
	return r; /* the caller looks at the child */
}

/* The child did not answer (r: -EPIPE, -ETIMEDOUT, -ECANCELED, -EPROTO):
 * find out why, end it, strike whom it names. Returns -EAGAIN to capture
 * again now, else the capture's error with why. */
static int after_silence(struct ctp_capsvc *cs, int r, char *why, size_t n)
{
	struct ctp_sv_crash c;
	char at[256], reason[320];
	if (r == -ECANCELED) {
		end_child(cs, true);
		snprintf(why, n, "interrupted");
		return r;
	}
	if (r == -ETIMEDOUT) {
		double s = (double)cs->cfg->service.deadline_ns / 1e9;
		int busy = ctp_sv_busy_read(cs->sv, BUSY_GAP_NS, &c);
		end_child(cs, true);
		if (busy < 0 || c.plugin < 0 ||
		    (size_t)c.plugin >= cs->cfg->n_plugins) {
			snprintf(why, n,
				 "the capture ran past its %.3gs deadline "
				 "outside any plugin; it was stopped",
				 s);
			return -ETIMEDOUT;
		}
		ctp_sv_where(&c, false, at, sizeof(at));
		snprintf(reason, sizeof(reason),
			 "hung: in %s past the %.3gs deadline", at, s);
		strike(cs, c.plugin, reason);
		snprintf(why, n, "plugin %s %s",
			 cs->cfg->plugins[c.plugin].name, reason);
		return vital(cs, c.plugin) ? -ENOTRECOVERABLE : -ETIMEDOUT;
	}
	/* Gone, or talking nonsense: how did it end? */
	int st = end_child(cs, r != -EPIPE);
	if (st < 0 || !WIFSIGNALED(st)) {
		snprintf(why, n, "the capture process ended (%s %d)",
			 st >= 0 && WIFEXITED(st) ? "exit status" : "error",
			 st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : st);
		return -EIO;
	}
	ctp_sv_crash_read(cs->sv, WTERMSIG(st), &c);
	if (c.thread_tid == 0 || c.plugin < 0 ||
	    (size_t)c.plugin >= cs->cfg->n_plugins) {
		const char *ab = sigabbrev_np(WTERMSIG(st));
		snprintf(why, n,
			 c.thread_tid
				 ? "the capture crashed with SIG%s outside "
				   "any plugin"
				 : "the capture was killed by SIG%s",
			 ab ? ab : "?");
		return -EIO;
	}
	ctp_sv_where(&c, true, at, sizeof(at));
	snprintf(reason, sizeof(reason), "crashed: %s", at);
	bool out = strike(cs, c.plugin, reason);
	snprintf(why, n, "plugin %s %s", cs->cfg->plugins[c.plugin].name,
		 reason);
	if (vital(cs, c.plugin))
		return -ENOTRECOVERABLE;
	(void)out; /* captured again: with it, or without */
	return -EAGAIN;
}

int ctp_capsvc_capture(struct ctp_capsvc *cs, uint32_t asker, uint64_t *bytes,
		       char *why, size_t n)
{
	uint64_t deadline = ctp_now_ns() + cs->cfg->service.deadline_ns;
	/* Each retry follows a strike; a plugin gets at most
	 * quarantine_after of them before it is out, so this ends. */
	size_t tries =
		(cs->cfg->n_plugins + 1) * cs->cfg->service.quarantine_after;
	int r = -EIO;
	*bytes = 0;
	why[0] = '\0';
	for (size_t t = 0; t <= tries; t++) {
		if (!cs->child) {
			r = spawn(cs, deadline, why, n);
			if (r == -EPIPE || r == -ETIMEDOUT || r == -EPROTO ||
			    r == -ECANCELED)
				r = after_silence(cs, r, why, n);
			if (r == -EAGAIN)
				continue;
			if (r < 0)
				return r;
		}
		struct ctp_capsvc_msg m = {.magic = CTP_CAPSVC_MAGIC,
					   .seq = ++cs->seq,
					   .asker = asker};
		r = send_msg(cs->sock, &m);
		if (r == 0)
			r = recv_until(cs->sock, &m, deadline, cs->stop);
		else
			r = -EPIPE;
		if (r < 0) {
			r = after_silence(cs, r, why, n);
			if (r == -EAGAIN)
				continue;
			return r;
		}
		if (m.seq != cs->seq) {
			end_child(cs, true);
			snprintf(why, n,
				 "the capture process answered out of "
				 "turn");
			return -EPROTO;
		}
		if (m.status == -ENOMEM) {
			uint32_t p = atomic_load(&cs->sv->oom_plugin);
			end_child(cs, false);
			if (!p || p > cs->cfg->n_plugins) {
				snprintf(why, n,
					 "the capture ran out of memory "
					 "(ceiling %" PRIu64 " MiB)",
					 cs->cfg->service.memory_limit >> 20);
				return -ENOMEM;
			}
			char reason[160];
			snprintf(reason, sizeof(reason),
				 "out of memory: over the capture's "
				 "%" PRIu64 " MiB ceiling",
				 cs->cfg->service.memory_limit >> 20);
			/* Not worth a second chance: its memory is gone
			 * with the child, but it would take it again. */
			cs->strikes[p - 1] = cs->cfg->service.quarantine_after;
			strike(cs, (int32_t)(p - 1), reason);
			snprintf(why, n, "plugin %s %s",
				 cs->cfg->plugins[p - 1].name, reason);
			if (vital(cs, (int32_t)(p - 1)))
				return -ENOTRECOVERABLE;
			continue;
		}
		if (m.status < 0) {
			snprintf(why, n, "%s", m.why);
			return m.status;
		}
		*bytes = m.bytes;
		return 0;
	}
	return r < 0 ? r : -EIO;
}

void ctp_capsvc_free(struct ctp_capsvc *cs)
{
	if (!cs)
		return;
	end_child(cs, false);
	ctp_sv_unmap(cs->sv);
	free(cs->strikes);
	free(cs);
}

/* ---- Between a service's processes --------------------------------------- */

int ctp_capsvc_ask(int fd, uint64_t deadline_ns,
		   const volatile sig_atomic_t *stop, uint64_t *bytes,
		   char *why, size_t n)
{
	static _Atomic uint32_t seq;
	struct ctp_capsvc_msg m = {.magic = CTP_CAPSVC_MAGIC,
				   .seq = atomic_fetch_add(&seq, 1) + 1,
				   .asker = (uint32_t)getpid()};
	uint32_t want = m.seq;
	int r = send_msg(fd, &m);
	if (r < 0) {
		snprintf(why, n, "the supervisor is gone: %s", strerror(-r));
		return -EPIPE;
	}
	for (;;) {
		r = recv_until(fd, &m, deadline_ns, stop);
		if (r == -ETIMEDOUT)
			snprintf(why, n, "no capture within the deadline");
		else if (r == -EPIPE)
			snprintf(why, n, "the supervisor is gone");
		else if (r < 0)
			snprintf(why, n, "%s", strerror(-r));
		if (r < 0)
			return r;
		if (m.seq == want)
			break;
		/* An answer to an earlier request we gave up on. */
	}
	if (m.status < 0) {
		snprintf(why, n, "%s", m.why);
		return m.status;
	}
	*bytes = m.bytes;
	return 0;
}

int ctp_capsvc_answer(struct ctp_capsvc *cs, int fd)
{
	struct ctp_capsvc_msg m;
	ssize_t got = recv(fd, &m, sizeof(m), MSG_DONTWAIT);
	if (got < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (got == 0)
		return -EPIPE;
	if ((size_t)got != sizeof(m) || m.magic != CTP_CAPSVC_MAGIC)
		return -EPROTO;
	uint64_t bytes = 0;
	char why[sizeof(m.why)];
	int r = ctp_capsvc_capture(cs, m.asker, &bytes, why, sizeof(why));
	answer(fd, m.seq, r, bytes, r < 0 ? why : NULL);
	return r == -ENOTRECOVERABLE ? r : 0;
}
