/* SPDX-License-Identifier: MIT */
/*
 * The capture's supervisor: the capture runs in a child process; when the
 * child dies of a signal inside a plugin, the plugin is named on stderr and
 * the capture runs again without it, marked failed in the snapshot with
 * the reason ("crashed: SIGSEGV in thread callback (tid 1234)"). The
 * mechanism the child uses to say where it was is core/capture/supervise.h.
 * Private to the core.
 */
#ifndef CTP_CORE_SUPERVISOR_H
#define CTP_CORE_SUPERVISOR_H

#include <signal.h>
#include <stdbool.h>

#include "config.h"

/* The running child's pid while the supervisor waits for it, else 0: the
 * capture's SIGINT/SIGTERM handler forwards to it when it is set. */
extern volatile sig_atomic_t ctp_supervised_child;

/*
 * Run `run(cfg, arg)` in a child process and return the exit status it
 * ends with. When the child dies of a signal in a plugin, and that plugin
 * is neither `required` nor `strict` is set, run again with the plugin
 * marked crashed (cfg->plugins[i].crashed), at most once per plugin.
 * A crash elsewhere (the core), a crash of a required plugin or under
 * --strict, or any signal after *stop was set ends it with a message:
 * CTP_EXIT_FAILURE, CTP_EXIT_REQUIRED or CTP_EXIT_INTERRUPTED.
 */
int ctp_supervise(struct ctp_config *cfg, bool strict,
		  int (*run)(const struct ctp_config *cfg, void *arg),
		  void *arg, const volatile sig_atomic_t *stop);

#endif
