/* SPDX-License-Identifier: MIT */
/* The capture's supervisor (see supervisor.h). */
#include "supervisor.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <sys/prctl.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture_util.h"
#include "cli.h"
#include "clock.h"
#include "ctprof/plugin-util.h"
#include "log.h"
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

/* The child's wait status when the deadline killed it (no real status has
 * all these bits). */
#define ST_DEADLINE (-ETIMEDOUT)

/* Wait for the child; kill it when it has been loading or capturing for
 * longer than the deadline (*hung then says where it was). Its wait
 * status, ST_DEADLINE, or -errno. */
static int wait_child(pid_t pid, const struct ctp_config *cfg,
		      const struct ctp_sv *sv, struct ctp_sv_crash *hung)
{
	for (;;) {
		int st = 0;
		pid_t w = waitpid(pid, &st, WNOHANG);
		if (w == pid)
			return st;
		if (w < 0 && errno != EINTR)
			return -errno;
		uint64_t since = atomic_load(&sv->busy_since_ns);
		if (since && ctp_now_ns() - since > cfg->service.deadline_ns) {
			if (ctp_sv_busy_read(sv, 20000000ull, hung) < 0)
				hung->plugin = -1;
			/* Not done while looking? Then it is stuck. */
			if (atomic_load(&sv->busy_since_ns) == since) {
				kill(pid, SIGKILL);
				while (waitpid(pid, &st, 0) < 0 &&
				       errno == EINTR)
					;
				return ST_DEADLINE;
			}
		}
		struct timespec ts = {.tv_nsec = 20000000};
		nanosleep(&ts, NULL);
	}
}

/* Run one attempt in a child; returns its wait status, ST_DEADLINE with
 * *hung, or -errno. */
static int attempt(struct ctp_config *cfg, struct ctp_sv *sv,
		   int (*run)(const struct ctp_config *, void *), void *arg,
		   const volatile sig_atomic_t *stop, struct ctp_sv_crash *hung)
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
		if ((r = ctp_sv_memory_ceiling(cfg->service.memory_limit)) < 0)
			ctp_log(CTP_LOG_WARNING, "memory ceiling not set: %s",
				strerror(-r));
		exit(run(cfg, arg));
	}
	ctp_supervised_child = pid;
	/* A signal that came before the child was known is passed on. */
	if (*stop)
		kill(pid, (int)*stop);
	int st = wait_child(pid, cfg, sv, hung);
	ctp_supervised_child = 0;
	return st;
}

static int leave_out(struct ctp_config *cfg, int32_t i, const char *reason,
		     bool strict);

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
	ctp_sv_where(&c, true, where, sizeof(where));
	char reason[300];
	snprintf(reason, sizeof(reason), "crashed: %s", where);
	return leave_out(cfg, c.plugin, reason, strict);
}

/* Strikes against each plugin (crashes, hangs, breaches of the memory
 * ceiling) over the supervisor's life: a recording's, across its
 * children. */
static unsigned *strikes;

/* Plugin i struck with `reason`: -1 to run again (without it once it has
 * service.quarantine_after strikes), or the exit status when it may not
 * be left out. */
static int leave_out(struct ctp_config *cfg, int32_t i, const char *reason,
		     bool strict)
{
	struct ctp_plugin_cfg *pc = &cfg->plugins[i];
	unsigned n = strikes ? ++strikes[i] : cfg->service.quarantine_after;
	if (!pc->required && !strict && n < cfg->service.quarantine_after) {
		ctp_log(CTP_LOG_WARNING,
			"plugin %s %s; capturing again with it (%u of %u "
			"before it is left out)",
			pc->name, reason, n, cfg->service.quarantine_after);
		return -1;
	}
	if (pc->required || strict || pc->crashed) {
		ctp_log(CTP_LOG_ERR, "%splugin %s %s: no snapshot written",
			pc->required ? "required "
			: strict     ? "--strict: "
				     : "",
			pc->name, reason);
		return pc->crashed ? CTP_EXIT_FAILURE : CTP_EXIT_REQUIRED;
	}
	free(pc->crashed);
	if (!(pc->crashed = strdup(reason)))
		return CTP_EXIT_FAILURE;
	ctp_log(CTP_LOG_WARNING, "plugin %s %s; capturing again without it",
		pc->name, reason);
	return -1;
}

/* The deadline passed: name the plugin a thread was stuck in. */
static int after_hang(struct ctp_config *cfg, const struct ctp_sv_crash *c,
		      bool strict)
{
	char where[256], reason[320];
	double s = (double)cfg->service.deadline_ns / 1e9;
	if (c->plugin < 0 || (size_t)c->plugin >= cfg->n_plugins) {
		ctp_log(CTP_LOG_ERR,
			"the capture ran past its %.3gs deadline outside any "
			"plugin: no snapshot written",
			s);
		return CTP_EXIT_FAILURE;
	}
	ctp_sv_where(c, false, where, sizeof(where));
	snprintf(reason, sizeof(reason), "hung: in %s past the %.3gs deadline",
		 where, s);
	return leave_out(cfg, c->plugin, reason, strict);
}

/* A plugin's callback ran out of memory under the ceiling. */
static int after_oom(struct ctp_config *cfg, const struct ctp_sv *sv,
		     bool strict)
{
	char reason[160];
	uint32_t p = atomic_load(&sv->oom_plugin);
	if (!p || p > cfg->n_plugins)
		return CTP_EXIT_FAILURE;
	snprintf(reason, sizeof(reason),
		 "out of memory: over the capture's %" PRIu64 " MiB ceiling",
		 cfg->service.memory_limit >> 20);
	/* No second chance: it would take the memory again. */
	if (strikes && cfg->service.quarantine_after)
		strikes[p - 1] = cfg->service.quarantine_after - 1;
	return leave_out(cfg, (int32_t)(p - 1), reason, strict);
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
	if (!strikes)
		strikes = calloc(cfg->n_plugins + 1, sizeof(*strikes));
	/* Each attempt strikes a plugin; quarantine_after strikes leave it
	 * out, so this ends. */
	int rc = -1;
	size_t tries = (cfg->n_plugins + 1) * cfg->service.quarantine_after;
	for (size_t n = 0; rc < 0 && n <= tries; n++) {
		struct ctp_sv_crash hung;
		int st = attempt(cfg, sv, run, arg, stop, &hung);
		if (st == ST_DEADLINE) {
			rc = after_hang(cfg, &hung, strict);
		} else if (st < 0) {
			ctp_log(CTP_LOG_ERR, "cannot run the capture: %s",
				strerror(-st));
			rc = CTP_EXIT_FAILURE;
		} else if (WIFEXITED(st) &&
			   WEXITSTATUS(st) == CTP_EXIT_OOM_PLUGIN) {
			rc = after_oom(cfg, sv, strict);
		} else if (WIFEXITED(st)) {
			rc = WEXITSTATUS(st);
		} else {
			rc = after_crash(cfg, sv, WTERMSIG(st), strict, stop);
		}
	}
	ctp_sv_unmap(sv);
	return rc < 0 ? CTP_EXIT_FAILURE : rc;
}
