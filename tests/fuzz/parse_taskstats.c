/* SPDX-License-Identifier: MIT */
/* taskstats's netlink parsers: a TASKSTATS reply and an exit
 * notification (as whatever family id and pid the input starts with), an
 * ack (the pid as its sequence number) and a CTRL_CMD_GETFAMILY answer,
 * each in a buffer aligned as recv() fills one (netlink messages are
 * 4-byte aligned by the protocol; the parsers may rely on it); and the
 * bytes as a cpulist. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "taskstats_reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctp_taskstats ts;
	struct ctp_ts_exit ex;
	uint16_t family = 0x17, id;
	uint32_t pid = 1;

	if (size >= 6) {
		memcpy(&family, data, 2);
		memcpy(&pid, data + 2, 4);
		data += 6;
		size -= 6;
	}
	void *msg = malloc(size ? size : 1);
	if (!msg)
		return 0;
	memcpy(msg, data, size);
	ctp_ts_parse_reply(msg, size, family, pid, &ts);
	ctp_genl_parse_family(msg, size, &id);
	ctp_ts_parse_exit(msg, size, family, &ex);
	ctp_nl_parse_ack(msg, size, pid);
	ctp_ts_cpulist_ok(msg, size);
	free(msg);
	return 0;
}
