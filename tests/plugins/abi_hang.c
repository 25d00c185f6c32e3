/* SPDX-License-Identifier: MIT */
/*
 * abi-hang: a test collector whose thread callback never returns, as a
 * third-party plugin stuck in a system call or a loop would. With option
 * `marker: PATH` it first creates PATH, so a test knows the capture is
 * inside the callback before it signals it (tests/test_hostile_root.c).
 */
#include <fcntl.h>
#include <unistd.h>

#include <ctprof/plugin.h>

static const struct ctp_field_desc fields[] = {
	{.name = "abi-hang.x",
	 .help = "never set: the callback does not return",
	 .scope = CTP_SCOPE_THREAD,
	 .type = CTP_TYPE_U64,
	 .unit = CTP_UNIT_COUNT,
	 .kind = CTP_KIND_COUNTER,
	 .rule = CTP_RULE_SUM},
};

static const char *marker;

static int hang_init(struct ctp_ctx *ctx, const struct ctp_api *api,
		     void **statep)
{
	if (api->opt_str(ctx, "marker", &marker) < 0)
		marker = NULL;
	*statep = &marker;
	return 0;
}

static int hang_thread(void *statep, const struct ctp_task *task,
		       struct ctp_record *rec)
{
	(void)statep;
	(void)task;
	(void)rec;
	if (marker) {
		int fd = open(marker, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
	}
	for (;;)
		pause();
	return 0;
}

CTP_EXPORT const struct ctp_plugin ctp_plugin_v1 = {
	CTP_PLUGIN_HEADER,
	.name = "abi-hang",
	.version = "0",
	.description = "a thread callback that never returns",
	.flags = CTP_PLUGIN_MT_SAFE | CTP_PLUGIN_FD_LOCAL,
	CTP_PLUGIN_FIELDS(fields),
	.init = hang_init,
	.thread = hang_thread,
};
