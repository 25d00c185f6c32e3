/* SPDX-License-Identifier: MIT */
/*
 * The capture service: the services' (serve, record) one way to capture.
 * A long-lived child process holds the loaded engine and captures when
 * asked, writing each snapshot into a memory file it shares with its
 * parent. The parent bounds every capture in time (a deadline), the child
 * in memory (RLIMIT_DATA), and survives whatever the child does:
 *
 * - the child dies of a signal inside a plugin: the plugin is named (the
 *   supervisor's page, core/capture/supervise.h), quarantined once it has
 *   done so `quarantine_after` times, and the capture is taken again by a
 *   new child, without it when quarantined;
 * - the capture runs past the deadline: the child is killed, the plugin
 *   the stuck thread was in named and quarantined likewise, and this
 *   capture fails (the next one runs without it);
 * - a plugin's callback runs out of memory under the ceiling (-ENOMEM):
 *   the plugin is quarantined at once, the child (and all it held) ends,
 *   and the capture is taken again without it;
 * - the core fails or dies: this capture fails with the reason, the next
 *   one starts a new child.
 *
 * A quarantined plugin is marked failed in every later snapshot with the
 * reason ("crashed: SIGSEGV in thread callback (tid 12)", "hung: ...",
 * "out of memory: ..."). The parent is single-threaded where it forks.
 * Private to the core.
 */
#ifndef CTP_CORE_CAPSVC_H
#define CTP_CORE_CAPSVC_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct ctp_capsvc;

struct ctp_capsvc_opts {
	const char *prog;	 /* "ctprof-core serve": messages' prefix */
	const char *config_path; /* recorded in each snapshot */
	bool strict;		 /* a plugin's crash fails the capture */
	const char *user; /* capture as this user (ctp_cli_confine), or NULL */
};

/*
 * A service capturing with `cfg` (which it keeps and marks quarantined
 * plugins in; cfg->service holds the deadline, ceiling and count) into
 * `memfd`. Starts no child yet. *stop (a signal's flag) cancels a capture
 * and the service. Returns 0 or -errno.
 */
int ctp_capsvc_new(struct ctp_config *cfg, const struct ctp_capsvc_opts *o,
		   int memfd, const volatile sig_atomic_t *stop,
		   struct ctp_capsvc **out);

/*
 * One capture into the memory file (its bytes in *bytes); `asker` (0:
 * none) is recorded among the capturing processes. Returns 0; or
 * a negative errno with the reason in why: -ETIMEDOUT (the deadline),
 * -ECANCELED (*stop), -ENOTRECOVERABLE (a required plugin, or any under
 * strict, crashed, hung or ran out of memory: the service cannot go on),
 * else the capture failed and the next one may succeed.
 */
int ctp_capsvc_capture(struct ctp_capsvc *cs, uint32_t asker, uint64_t *bytes,
		       char *why, size_t n);

/* The capture child's pid, 0 when there is none (tests, signals). */
int ctp_capsvc_child(const struct ctp_capsvc *cs);

/* End the child (asked, then killed after a second) and free. */
void ctp_capsvc_free(struct ctp_capsvc *cs);

/*
 * Between a service's processes: a request for a capture and its answer,
 * one SOCK_SEQPACKET message each (the HTTP process asks the supervisor,
 * the supervisor asks the capture child).
 */
struct ctp_capsvc_msg {
	uint32_t magic; /* CTP_CAPSVC_MAGIC */
	uint32_t seq;
	int32_t status; /* answer: 0 or -errno */
	uint32_t asker; /* request: the asking process (a capturing one) */
	uint64_t bytes; /* answer: the snapshot's bytes in the memory file */
	char why[496];	/* answer: the reason when status < 0 */
};
#define CTP_CAPSVC_MAGIC 0x43505356u /* "CPSV" */

/*
 * Ask over `fd` for a capture and wait for the answer, at most until
 * `deadline_ns` (monotonic) or *stop. Returns the answer's status (0 and
 * *bytes, or -errno with why), -ETIMEDOUT, -ECANCELED, or -EPIPE when the
 * other side is gone.
 */
int ctp_capsvc_ask(int fd, uint64_t deadline_ns,
		   const volatile sig_atomic_t *stop, uint64_t *bytes,
		   char *why, size_t n);

/* Answer one request read from `fd` (after poll said it is readable):
 * capture with cs and send the answer. Returns 0, -EPIPE when the asker
 * is gone (EOF), -ENOTRECOVERABLE as ctp_capsvc_capture, or -errno. */
int ctp_capsvc_answer(struct ctp_capsvc *cs, int fd);

#endif
