/* SPDX-License-Identifier: MIT */
/*
 * Default locations, resolved from where the running binary is: a build
 * tree uses the build tree's plugins and the source tree's config; an
 * installed binary uses paths relative to itself (so an install under any
 * --prefix works), falling back to the configured install paths.
 */
#ifndef CTP_CORE_PATHS_H
#define CTP_CORE_PATHS_H

#include <stdbool.h>
#include <stddef.h>

/* True when /proc/self/exe lives in the build directory. */
bool ctp_paths_in_build_tree(void);
/* The default plugin directory into buf. */
void ctp_paths_plugin_dir(char *buf, size_t len);
/* The default config file into buf. */
void ctp_paths_config_file(char *buf, size_t len);
/* The shipped views' directory into buf: the source tree's views/ for a
 * build-tree binary, <prefix>/share/ctprof/views once installed. */
void ctp_paths_view_dir(char *buf, size_t len);

#endif
