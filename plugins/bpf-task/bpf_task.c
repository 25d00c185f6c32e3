/*
 * bpf-task: every task's per-thread counters in one pass of a BPF task
 * iterator (README.md). This first increment declares no field and
 * registers no source yet: the capture is unchanged. What it ships is the
 * program, its loader and the `bpf-task-dump` command, which runs one pass
 * and prints it.
 */
#include "bpftask.h"

#include <ctprof/plugin.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DUMP_MAX_BYTES (512u << 20) /* 3 million tasks of 168 bytes */

static void dump_rec(const struct ctp_bpftask_rec *r)
{
	printf("%d\t%d\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t", r->tgid, r->pid,
	       (unsigned long long)r->start_boottime,
	       (unsigned long long)r->minflt, (unsigned long long)r->majflt,
	       (unsigned long long)r->nvcsw, (unsigned long long)r->nivcsw,
	       (unsigned long long)r->sum_exec_runtime);
	if (r->present & CTP_BPFTASK_HAS_SCHED_INFO)
		printf("%llu\t%llu\t", (unsigned long long)r->run_delay,
		       (unsigned long long)r->pcount);
	else
		printf("-\t-\t");
	if (r->present & CTP_BPFTASK_HAS_IO_XACCT)
		printf("%llu\t%llu\t%llu\t%llu\t", (unsigned long long)r->rchar,
		       (unsigned long long)r->wchar,
		       (unsigned long long)r->syscr,
		       (unsigned long long)r->syscw);
	else
		printf("-\t-\t-\t-\t");
	if (r->present & CTP_BPFTASK_HAS_IO_BYTES)
		printf("%llu\t%llu\t%llu\t", (unsigned long long)r->read_bytes,
		       (unsigned long long)r->write_bytes,
		       (unsigned long long)r->cancelled_write_bytes);
	else
		printf("-\t-\t-\t");
	printf("%llu\t%llu\t%.16s\n", (unsigned long long)r->utime,
	       (unsigned long long)r->stime, r->comm);
}

/* ctprof-core bpf-task-dump [--tid TID]: one pass, one line per task. */
static int cmd_dump(int argc, char **argv)
{
	static const char usage[] =
		"Usage: ctprof-core bpf-task-dump [--tid TID]\n";
	const struct ctp_bpftask_rec *recs;
	struct ctp_bpftask *b = NULL;
	char why[256] = "";
	long tid = 0;
	char *end;
	int n;

	if (argc == 2 && !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--tid")) {
		errno = 0;
		tid = strtol(argv[2], &end, 10);
		if (errno || *end || end == argv[2] || tid <= 0 ||
		    tid > 0x7fffffff) {
			fprintf(stderr,
				"ctprof-core: bpf-task-dump: bad tid "
				"'%s'\n",
				argv[2]);
			return 2;
		}
	} else if (argc != 1) {
		fputs(usage, stderr);
		return 2;
	}
	n = ctp_bpftask_open(&b, why, sizeof(why));
	if (n < 0) {
		fprintf(stderr, "ctprof-core: bpf-task-dump: %s\n", why);
		return 1;
	}
	n = ctp_bpftask_pass(b, DUMP_MAX_BYTES, &recs);
	if (n < 0) {
		fprintf(stderr, "ctprof-core: bpf-task-dump: pass: %s\n",
			strerror(-n));
		ctp_bpftask_free(b);
		return 1;
	}
	printf("tgid\ttid\tstart_boottime_ns\tminflt\tmajflt\tnvcsw\tnivcsw\t"
	       "sum_exec_runtime_ns\trun_delay_ns\tpcount\trchar\twchar\t"
	       "syscr\tsyscw\tread_bytes\twrite_bytes\tcancelled_write_"
	       "bytes\tutime_raw_ns\tstime_raw_ns\tcomm\n");
	for (int i = 0; i < n; i++)
		if (!tid || recs[i].pid == tid)
			dump_rec(&recs[i]);
	ctp_bpftask_free(b);
	return 0;
}

static const struct ctp_command commands[] = {
	{.name = "bpf-task-dump",
	 .usage = "[--tid TID]  one BPF task-iterator pass, a line per task",
	 .run = cmd_dump},
};

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "bpf-task",
	.version = BPF_TASK_VERSION,
	.description = "per-thread counters from a BPF task iterator "
		       "(no fields yet: bpf-task-dump)",
	/* CTP_PLUGIN_OPTIONS with no table: it takes no option, and the core
	 * refuses any configured one. */
	.flags = CTP_PLUGIN_OPTIONS,
	CTP_PLUGIN_COMMAND_TABLE(commands),
};
