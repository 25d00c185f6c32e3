/* SPDX-License-Identifier: MIT */
/* The clocks the core reads, in nanoseconds. Private to the core. */
#ifndef CTP_CORE_CLOCK_H
#define CTP_CORE_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in ns: durations and deadlines. */
uint64_t ctp_now_ns(void);

/* CLOCK_BOOTTIME in ns (the clock of tasks' start times), 0 when it
 * cannot be read. */
uint64_t ctp_boottime_ns(void);

#endif
