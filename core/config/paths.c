/* SPDX-License-Identifier: MIT */
#include "paths.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build_config.h"

static bool exe_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

bool ctp_paths_in_build_tree(void)
{
	char dir[PATH_MAX];
	return exe_dir(dir, sizeof(dir)) && strcmp(dir, CTP_BUILD_BIN_DIR) == 0;
}

/* <exe dir>/<rel> when it exists (without its "bin/.." detour, so messages
 * name the file as a person would), else the absolute fallback. */
static void resolve(const char *rel, const char *leaf, const char *fallback,
		    char *buf, size_t len)
{
	char dir[PATH_MAX], path[PATH_MAX + 256], real[PATH_MAX];
	if (exe_dir(dir, sizeof(dir))) {
		snprintf(path, sizeof(path), "%s/%s%s", dir, rel, leaf);
		if (access(path, F_OK) == 0) {
			snprintf(buf, len, "%s",
				 realpath(path, real) ? real : path);
			return;
		}
	}
	snprintf(buf, len, "%s%s", fallback, leaf);
}

void ctp_paths_plugin_dir(char *buf, size_t len)
{
	if (ctp_paths_in_build_tree())
		snprintf(buf, len, "%s", CTP_PLUGIN_BUILD_DIR);
	else
		resolve(CTP_PLUGIN_DIR_FROM_BIN, "", CTP_PLUGIN_INSTALL_DIR,
			buf, len);
}

void ctp_paths_view_dir(char *buf, size_t len)
{
	if (ctp_paths_in_build_tree())
		snprintf(buf, len, "%s/views", CTP_SOURCE_DIR);
	else
		resolve(CTP_VIEW_DIR_FROM_BIN, "", CTP_VIEW_INSTALL_DIR, buf,
			len);
}

void ctp_paths_config_file(char *buf, size_t len)
{
	if (ctp_paths_in_build_tree())
		snprintf(buf, len, "%s/config/collectors.yaml", CTP_SOURCE_DIR);
	else
		resolve(CTP_CONFIG_DIR_FROM_BIN, "/collectors.yaml",
			CTP_CONFIG_INSTALL_DIR, buf, len);
}
