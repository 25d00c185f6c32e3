/* SPDX-License-Identifier: MIT */
/*
 * The growth helper the core shares with the toolkit and the plugins:
 * ctp_grow() and CTP_GROW() live in <ctprof/plugin-util.h>.
 */
#ifndef CTP_CORE_GROW_H
#define CTP_CORE_GROW_H

#include "ctprof/plugin-util.h"

#endif
