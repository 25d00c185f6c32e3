/* SPDX-License-Identifier: MIT */
/*
 * Literal /proc/<tgid>/task/<tid>/io text for the io tests, copied from the
 * build machine (Linux 6.18): an interactive bash thread, and a fresh `cat`
 * that has read a little and written nothing; then process-level
 * /proc/<tgid>/io text.
 */
#ifndef CTP_TEST_IO_TEXT_H
#define CTP_TEST_IO_TEXT_H

/* cat /proc/$$/task/$$/io */
static const char IO_BASH[] = "rchar: 273215\n"
			      "wchar: 12132\n"
			      "syscr: 67210\n"
			      "syscw: 490\n"
			      "read_bytes: 0\n"
			      "write_bytes: 286720\n"
			      "cancelled_write_bytes: 0\n";

/* cat /proc/self/io */
static const char IO_CAT[] = "rchar: 6976\n"
			     "wchar: 0\n"
			     "syscr: 10\n"
			     "syscw: 0\n"
			     "read_bytes: 0\n"
			     "write_bytes: 0\n"
			     "cancelled_write_bytes: 0\n";

/*
 * /proc/<tgid>/io of a shell (a bash named "sh (x) y)") that ran and waited
 * for four python3 children, each writing 1 MiB with fsync: the children's
 * bytes are in the shell's process file, not in any live thread's.
 */
static const char IO_TGID_REAPED[] = "rchar: 6751468\n"
				     "wchar: 4201400\n"
				     "syscr: 2680\n"
				     "syscw: 121\n"
				     "read_bytes: 0\n"
				     "write_bytes: 4202496\n"
				     "cancelled_write_bytes: 0\n";

/*
 * A python3 process (808) whose first thread was joined, and its two live
 * threads' files: 808's own, and 874's, which has done nothing. The
 * process reads 1686778 bytes, its live threads 1412948 + 0.
 */
static const char IO_TGID_DEAD_THREAD[] = "rchar: 1686778\n"
					  "wchar: 2645\n"
					  "syscr: 674\n"
					  "syscw: 39\n"
					  "read_bytes: 0\n"
					  "write_bytes: 4096\n"
					  "cancelled_write_bytes: 0\n";
static const char IO_TID_808[] = "rchar: 1412948\n"
				 "wchar: 1294\n"
				 "syscr: 236\n"
				 "syscw: 13\n"
				 "read_bytes: 0\n"
				 "write_bytes: 4096\n"
				 "cancelled_write_bytes: 0\n";

#endif
