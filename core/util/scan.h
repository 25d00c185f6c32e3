/* SPDX-License-Identifier: MIT */
/* The bounded scanners are the plugin toolkit's: toolkit/scan.c, declared
 * in include/ctprof/plugin-util.h. */
#ifndef CTP_CORE_SCAN_H
#define CTP_CORE_SCAN_H
#include "ctprof/plugin-util.h"
#endif
