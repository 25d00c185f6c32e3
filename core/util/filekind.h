/* SPDX-License-Identifier: MIT */
/*
 * What a file is, for messages that refuse one: "a directory", "a FIFO",
 * ... ("a regular file" for one). The reader, the output target and the
 * recording's directory say it alike. Private to the core.
 */
#ifndef CTP_CORE_FILEKIND_H
#define CTP_CORE_FILEKIND_H

#include <sys/stat.h>

static inline const char *ctp_file_kind(mode_t m)
{
	return S_ISREG(m)    ? "a regular file"
	       : S_ISDIR(m)  ? "a directory"
	       : S_ISLNK(m)  ? "a symbolic link"
	       : S_ISFIFO(m) ? "a FIFO"
	       : S_ISSOCK(m) ? "a socket"
	       : S_ISCHR(m)  ? "a character device"
	       : S_ISBLK(m)  ? "a block device"
			     : "not a regular file";
}

#endif
