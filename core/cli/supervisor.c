/* SPDX-License-Identifier: MIT */
/* The capture's supervisor (see supervisor.h). */
#include "supervisor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "engine.h"
#include "supervise.h"

volatile sig_atomic_t ctp_supervised_child;

/* "SIGSEGV", or "signal 40" for one without a name. */
static const char *signame(int sig, char *buf, size_t len)
{
	const char *abbrev = sigabbrev_np(sig);
	if (abbrev)
		snprintf(buf, len, "SIG%s", abbrev);
	else
		snprintf(buf, len, "signal %d", sig);
	return buf;
}

/* The part of the reason after "crashed: ", e.g. "SIGSEGV in thread
 * callback (tid 1234)". */
static void crash_where(const struct ctp_sv_crash *c, char *buf, size_t len)
{
	char sn[32];
	int n = snprintf(buf, len, "%s in %s", signame(c->sig, sn, sizeof(sn)),
			 ctp_sv_what_name(c->what));
	if (n < 0 || (size_t)n >= len)
		return;
	if (c->what == CTP_SV_THREAD)
		snprintf(buf + n, len - (size_t)n, " (tid %d)", c->task);
	else if (c->what == CTP_SV_PROCESS)
		snprintf(buf + n, len - (size_t)n, " (pid %d)", c->task);
	else if (c->what == CTP_SV_CGROUP)
		snprintf(buf + n, len - (size_t)n, " (cgroup %s)", c->path);
}

/* Run one attempt in a child; returns its wait status, or -errno. */
static int attempt(struct ctp_config *cfg, struct ctp_sv *sv,
		   int (*run)(const struct ctp_config *, void *), void *arg,
		   const volatile sig_atomic_t *stop)
{
	pid_t parent = getpid();
	ctp_sv_reset(sv);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* Die with the supervisor rather than outlive it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(CTP_EXIT_FAILURE);
		int r = ctp_sv_child_setup(sv);
		if (r < 0)
			ctp_log(CTP_LOG_WARNING,
				"crash containment not armed: %s",
				strerror(-r));
		exit(run(cfg, arg));
	}
	ctp_supervised_child = pid;
	/* A signal that came before the child was known is passed on. */
	if (*stop)
		kill(pid, (int)*stop);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			int e = errno;
			ctp_supervised_child = 0;
			return -e;
		}
	}
	ctp_supervised_child = 0;
	return st;
}

/* A child that died of sig: report it; returns -1 to run again (the
 * crashed plugin marked in cfg), else the exit status to end with. */
static int after_crash(struct ctp_config *cfg, const struct ctp_sv *sv, int sig,
		       bool strict, const volatile sig_atomic_t *stop)
{
	struct ctp_sv_crash c;
	char sn[32], where[256];
	ctp_sv_crash_read(sv, sig, &c);
	if (*stop) {
		ctp_log(CTP_LOG_ERR,
			"interrupted; the capture ended with %s: "
			"no snapshot written",
			signame(sig, sn, sizeof(sn)));
		return CTP_EXIT_INTERRUPTED;
	}
	if (c.thread_tid == 0) {
		/* The handler did not run: SIGKILL (the OOM killer?), or a
		 * thread without a slot. */
		ctp_log(CTP_LOG_ERR,
			"the capture was killed by %s: no snapshot written",
			signame(sig, sn, sizeof(sn)));
		return CTP_EXIT_FAILURE;
	}
	if (c.plugin < 0 || (size_t)c.plugin >= cfg->n_plugins) {
		ctp_log(CTP_LOG_ERR,
			"the capture crashed with %s outside any plugin "
			"(collector thread %d): no snapshot written",
			signame(c.sig, sn, sizeof(sn)), c.thread_tid);
		return CTP_EXIT_FAILURE;
	}
	struct ctp_plugin_cfg *pc = &cfg->plugins[c.plugin];
	crash_where(&c, where, sizeof(where));
	if (pc->required || strict || pc->crashed) {
		ctp_log(CTP_LOG_ERR,
			"%splugin %s crashed: %s: no snapshot written",
			pc->required ? "required "
			: strict     ? "--strict: "
				     : "",
			pc->name, where);
		return pc->crashed ? CTP_EXIT_FAILURE : CTP_EXIT_REQUIRED;
	}
	if (asprintf(&pc->crashed, "crashed: %s", where) < 0) {
		pc->crashed = NULL;
		return CTP_EXIT_FAILURE;
	}
	ctp_log(CTP_LOG_WARNING,
		"plugin %s crashed: %s; capturing again without it", pc->name,
		where);
	return -1;
}

int ctp_supervise(struct ctp_config *cfg, bool strict,
		  int (*run)(const struct ctp_config *cfg, void *arg),
		  void *arg, const volatile sig_atomic_t *stop)
{
	struct ctp_sv *sv = NULL;
	int r = ctp_sv_map(&sv);
	if (r < 0) {
		ctp_log(CTP_LOG_ERR, "cannot map the supervisor's page: %s",
			strerror(-r));
		return CTP_EXIT_FAILURE;
	}
	/* Each attempt leaves one more plugin out, so this ends. */
	int rc = -1;
	for (size_t n = 0; rc < 0 && n <= cfg->n_plugins; n++) {
		int st = attempt(cfg, sv, run, arg, stop);
		if (st < 0) {
			ctp_log(CTP_LOG_ERR, "cannot run the capture: %s",
				strerror(-st));
			rc = CTP_EXIT_FAILURE;
		} else if (WIFEXITED(st)) {
			rc = WEXITSTATUS(st);
		} else {
			rc = after_crash(cfg, sv, WTERMSIG(st), strict, stop);
		}
	}
	ctp_sv_unmap(sv);
	return rc < 0 ? CTP_EXIT_FAILURE : rc;
}
