/* SPDX-License-Identifier: MIT */
/*
 * The taskstats plugin's exit listener and exited table. While a
 * long-lived recorder runs, a second generic-netlink socket is registered
 * for the kernel's exit notifications on every possible CPU
 * (TASKSTATS_CMD_ATTR_REGISTER_CPUMASK) and a thread of its own parses
 * each into a ring of records allocated once; finish drains the ring into
 * the snapshot's exited table (ctp_api.exited_begin), one row per exited
 * thread, with the fields this module registers (taskstats.exited.*).
 *
 * Bounded: the ring holds `cap` records; a notification it has no room
 * for, and one the socket dropped (ENOBUFS; the exact count from
 * SO_MEMINFO), is counted as lost, never silently dropped. The listener
 * thread never calls the core: it only fills the ring and counts, and the
 * drain reports (from the plugin's finish, on the core's main thread).
 */
#ifndef CTP_TASKSTATS_EXITS_H
#define CTP_TASKSTATS_EXITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctprof/plugin.h"
#include "taskstats_reply.h"

/* Ring records by default, and the most the option allows. */
#define CTP_TS_EXITS_DEFAULT (1u << 16)
#define CTP_TS_EXITS_MAX     (1u << 20)

struct ctp_ts_exits;

/* Bytes of the BPF exit record (plugins/bpf-task/exit_rec.h) and its
 * ring header: exited_buffer records make a ring of this many each. */
#define CTP_TS_EXIT_REC_BYTES 440

/* Where exits come from (option exited_source). */
enum ctp_ts_exits_source {
	CTP_TS_EXITS_AUTO = 0, /* the BPF program, else notifications */
	CTP_TS_EXITS_BPF,      /* the BPF program or nothing */
	CTP_TS_EXITS_NETLINK,  /* taskstats exit notifications */
};

struct ctp_ts_exits_cfg {
	uint16_t family; /* the TASKSTATS family id; 0: none */
	int sys_fd;	 /* the sys root for the possible CPUs; -1: sysconf */
	struct ctp_ts_gates gates;
	size_t cap; /* ring records, 1..CTP_TS_EXITS_MAX */
	/* Appended for the BPF exit program (plugins/bpf-task/bpfexit.h). */
	enum ctp_ts_exits_source source;
	size_t ring_bytes; /* its ring; 0: its default */
	int cgroup_fd;	   /* the cgroup v2 mount for ids' paths; -1: none */
	int proc_fd;	   /* the live proc root (self/ns/pid); -1: none */
};

/*
 * With cfg->source AUTO or BPF, load the BPF exit program first
 * (plugins/bpf-task/bpfexit.h: no socket, no thread; the drain takes its
 * ring and its per-process totals). Else, or when it fails under AUTO,
 * register the socket as a listener, then the exited fields and counters,
 * and start the thread. Returns 0 and *ret; or a negative errno with why
 * (a phrase for the plugin's hint) filled: the kernel's refusal of the
 * registration (-EPERM without CAP_NET_ADMIN, -EINVAL outside the initial
 * pid and user namespaces), a socket or thread failure, -ENOMEM. Nothing
 * is left running on failure (fields already registered stay, without
 * values).
 */
int ctp_ts_exits_start(struct ctp_ctx *ctx, const struct ctp_api *api,
		       const struct ctp_ts_exits_cfg *cfg,
		       struct ctp_ts_exits **ret, char *why, size_t whylen);

/*
 * From finish (or host): every record received so far becomes an exited
 * row, and the losses since the last drain are reported (exited_lost and
 * the exits_lost counter). Returns the rows added.
 */
int ctp_ts_exits_drain(struct ctp_ts_exits *x);

/* Whether exits come from the BPF exit program (exact I/O, no
 * CTP_FIELD_KIB_STEP). */
bool ctp_ts_exits_bpf(const struct ctp_ts_exits *x);

/* Stop and join the thread, drop the registration, free. NULL is fine. */
void ctp_ts_exits_stop(struct ctp_ts_exits *x);

#endif
