/*
 * bpf-task's options, the same in a build with BPF (bpf_task.c) and in one
 * without (bpf_task_absent.c), so one config validates against both.
 */
#ifndef CTP_BPFTASK_OPTS_H
#define CTP_BPFTASK_OPTS_H

#define DEFAULT_MAX_TASKS 1000000u
#define MAX_MAX_TASKS	  (1u << 22) /* PID_MAX_LIMIT */

/* The rows of the options table (struct ctp_option_desc). */
#define CTP_BPFTASK_OPTIONS                                                    \
	{                                                                      \
		.name = "max_tasks",                                           \
		.help = "the most tasks one pass reads (656 bytes each); a "   \
			"host "                                                \
			"with more gets no source for that capture",           \
		.type = CTP_OPT_U64, .def = "1000000", .min = 1,               \
		.max = MAX_MAX_TASKS                                           \
	}

#endif /* CTP_BPFTASK_OPTS_H */
