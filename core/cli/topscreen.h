/* SPDX-License-Identifier: MIT */
/*
 * `top`'s terminal (topscreen.c): ncurses set up and the terminal given
 * back on every way out: `q`, SIGINT, SIGTERM, SIGHUP (a flag the loop
 * ends on) and a crash (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL: the saved
 * termios and precomputed reset sequences, async-signal-safe, then the
 * signal again with its default action; the recording child killed and
 * the private directory removed first). What the process (and its
 * recording child) writes on stderr meanwhile is kept (a memfd) and shown after
 * the screen is gone. Private to the core.
 */
#ifndef CTP_CORE_TOPSCREEN_H
#define CTP_CORE_TOPSCREEN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The signal that asked top to end (SIGINT, SIGTERM, SIGHUP), or 0. */
extern volatile sig_atomic_t ctp_top_stop;

/* The live screen's private directory and the process recording into it
 * (top.c): what a crash kills (the child's process group) and removes
 * (every file of the directory, then the directory). dir NULL: none;
 * child 0: none. */
void ctp_top_private_set(const char *dir, pid_t child);
/* Remove every entry of dir (not recursively) and dir itself: only
 * async-signal-safe calls, what the crash handler does too. */
void ctp_top_dir_remove(const char *dir);
/* SIGKILL to the child's process group, the child waited for, then until
 * no process of the group is left (2 s at most): async-signal-safe. */
void ctp_top_child_kill(pid_t pid);

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
