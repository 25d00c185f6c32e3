/* SPDX-License-Identifier: MIT */
/*
 * `top`'s terminal (topscreen.c): ncurses set up and the terminal given
 * back on every way out: `q`, SIGINT, SIGTERM, SIGHUP (a flag the loop
 * ends on) and a crash (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL: the saved
 * termios and precomputed reset sequences, async-signal-safe, then the
 * signal again with its default action). What the process writes on
 * stderr meanwhile is kept (a memfd) and shown after the screen is gone.
 * Private to the core.
 */
#ifndef CTP_CORE_TOPSCREEN_H
#define CTP_CORE_TOPSCREEN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/* The signal that asked top to end (SIGINT, SIGTERM, SIGHUP), or 0. */
extern volatile sig_atomic_t ctp_top_stop;

/* Files a crash removes (the live capture's private directory and its
 * snapshots): up to CTP_TOP_FILES paths and the directory, "" none. */
#define CTP_TOP_FILES 4
void ctp_top_files_set(const char *dir, const char *const files[], size_t n);

/* Take over the terminal: 0, or -1 after a message on stderr (stdin or
 * stdout no terminal, no terminal type). */
int ctp_top_screen_begin(void);
/* Give it back (also what the crash handler does, less safely); the
 * messages kept while the screen was up are written on stderr. */
void ctp_top_screen_end(void);
/* The messages written on stderr since the last call, the last line of
 * them in buf ("" none). */
void ctp_top_screen_news(char *buf, size_t n);

#endif
