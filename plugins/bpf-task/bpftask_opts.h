/*
 * bpf-task's options, the same in a build with BPF (bpf_task.c) and in one
 * without (bpf_task_absent.c), so one config validates against both.
 */
#ifndef CTP_BPFTASK_OPTS_H
#define CTP_BPFTASK_OPTS_H

#include "statedir.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_MAX_TASKS 1000000u
#define MAX_MAX_TASKS	  (1u << 22) /* PID_MAX_LIMIT */

/* times_state: "auto", "off" or an absolute directory (README.md "stat's
 * times across captures"). */
static inline int ctp_bpftask_check_times_state(const char *value, char *why,
						size_t whylen)
{
	return ctp_statedir_check("times_state", value, why, whylen);
}

/* pass: how a pass walks the tasks (README.md "The open-coded pass"). */
static const char *const ctp_bpftask_pass_choices[] = {"auto", "iter",
						       "open-coded", NULL};

/* The rows of the options table (struct ctp_option_desc). */
#define CTP_BPFTASK_OPTIONS                                                    \
	{.name = "max_tasks",                                                  \
	 .help = "the most tasks one pass reads (656 bytes each); a "          \
		 "host with more gets no source for that capture",             \
	 .type = CTP_OPT_U64,                                                  \
	 .def = "1000000",                                                     \
	 .min = 1,                                                             \
	 .max = MAX_MAX_TASKS},                                                \
		{.name = "times_state",                                        \
		 .help = "where stat's utime/stime handed out are kept "       \
			 "across "                                             \
			 "runs: "                                              \
			 "auto (/run/ctprof-core, or "                         \
			 "$XDG_RUNTIME_DIR/ctprof-core "                       \
			 "when not root), off, or a directory",                \
		 .type = CTP_OPT_STRING,                                       \
		 .def = "auto",                                                \
		 .check = ctp_bpftask_check_times_state},                      \
	{                                                                      \
		.name = "pass",                                                \
		.help = "how a pass walks the tasks: iter (iter/task), "       \
			"open-coded (the open-coded task iterator by "         \
			"bounded runs where the kernel has it, 6.8+, else "    \
			"iter/task: a larger load, a cheaper pass) or auto "   \
			"(open-coded for a recorder or a server, or at "       \
			"16,384 tasks and more)",                              \
		.type = CTP_OPT_STRING, .def = "auto",                         \
		.choices = ctp_bpftask_pass_choices                            \
	}

#endif /* CTP_BPFTASK_OPTS_H */
