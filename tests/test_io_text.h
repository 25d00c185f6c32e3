/* SPDX-License-Identifier: MIT */
/*
 * Literal /proc/<tgid>/task/<tid>/io text for the io tests, copied from the
 * build machine (Linux 6.18): an interactive bash thread, and a fresh `cat`
 * that has read a little and written nothing.
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

#endif
