/* SPDX-License-Identifier: MIT */
/*
 * jemalloc-probe's ELF and DWARF reading (ctp_jep_file_probe_fd): the
 * input is a file of some process's mappings, as the plugin reads it. It
 * parses the ELF, its symbol tables and the DWARF of tsd_s through
 * elfutils; these are files other users own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "jep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct ctp_jep_file out;
	char path[64];

	if (fd < 0) {
		/* Never reach out for debug information. */
		unsetenv("DEBUGINFOD_URLS");
		fd = memfd_create("fuzz-elf", MFD_CLOEXEC);
		if (fd < 0)
			return 0;
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ctp_jep_file_probe_fd(fd, path, NULL, false, &out);
	return 0;
}
