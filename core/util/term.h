/* SPDX-License-Identifier: MIT */
/*
 * Text for a terminal: the one rule by which bytes from a snapshot, a view
 * file, a kernel or a plugin are shown, so that none a terminal acts on
 * (escape sequences, C0 and C1 controls, bytes that are no UTF-8, which a
 * terminal not in UTF-8 may take for C1) reaches it. Used by the log
 * lines, the cells of tables (core/analysis/render.h) and the human-
 * readable output of the reader commands as a whole. Private to the core.
 */
#ifndef CTP_CORE_TERM_H
#define CTP_CORE_TERM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Length (1-4) of the well-formed UTF-8 sequence at p (n bytes available),
 * or 0 when p does not start one (overlong forms, surrogates and code
 * points past U+10FFFF are not well-formed). For printing strings. */
size_t ctp_utf8_len(const unsigned char *p, size_t n);

/* The most bytes ctp_term_char writes. */
#define CTP_TERM_CHAR_MAX 8

/*
 * The character at p (n > 0 bytes available) as a terminal is shown it,
 * into out (CTP_TERM_CHAR_MAX bytes, not NUL-terminated), its length in
 * *outlen: well-formed UTF-8 other than a control character (U+0000-001F,
 * U+007F-009F) as itself; a control character as "\xNN" of each of its
 * bytes; a byte that starts no well-formed sequence as "\xNN". Returns the
 * bytes of p it took (1-4).
 */
size_t ctp_term_char(const unsigned char *p, size_t n, char *out,
		     size_t *outlen);

/*
 * n bytes at s by that rule into out (outlen > 4 bytes, NUL-terminated),
 * '\\' doubled so that an escape reads as one; cut after `max` characters,
 * or where out is full, with "...". Returns out.
 */
char *ctp_term_escape(const char *s, size_t n, size_t max, char *out,
		      size_t outlen);

/*
 * A stream that writes what it is given to `to` by that rule, except '\n',
 * which passes (the human-readable output of show, compare and views: a
 * table's cells are escaped already, this catches every other line). A
 * UTF-8 sequence split across writes is joined. fclose() flushes it into
 * `to` and leaves `to` open. NULL when out of memory.
 */
FILE *ctp_term_stream(FILE *to);

/* The program's own escape sequence (compare's colors) to f: past the rule
 * when f is a ctp_term_stream (after what was written to it before), as it
 * is otherwise. Nothing from a snapshot may go this way. */
void ctp_term_raw(FILE *f, const char *seq);

/* ---- Colour ---- */

/* --color: auto (the default), always, never. */
enum ctp_color {
	CTP_COLOR_AUTO = 0,
	CTP_COLOR_ALWAYS = 1,
	CTP_COLOR_NEVER = 2,
};

/* s ("auto", "always", "never") into *out. 0, or -EINVAL. */
int ctp_color_parse(const char *s, enum ctp_color *out);

/* The process's --color (the reader verbs set it from their command
 * line; auto until then). */
void ctp_color_set(enum ctp_color mode);

/*
 * Whether what goes to file descriptor fd is coloured: never, no; always,
 * yes for stdout, and for stderr only when it is a terminal (messages in
 * a log file stay plain); auto, when fd is a terminal, TERM is set and not
 * "dumb", and NO_COLOR is unset or empty (https://no-color.org). Plain
 * ECMA-48 SGR sequences, no terminfo.
 */
bool ctp_color_for(int fd);

/* SGR sequences the program writes (ctp_term_raw when through a
 * ctp_term_stream). */
#define CTP_SGR_RESET  "\033[0m"
#define CTP_SGR_BOLD   "\033[1m"
#define CTP_SGR_RED    "\033[31m"
#define CTP_SGR_GREEN  "\033[32m"
#define CTP_SGR_YELLOW "\033[33m"
#define CTP_SGR_CYAN   "\033[36m"

/* label ("warning", "error") in its colour on stderr when ctp_color_for
 * says so, for a message's "PROG: warning: ..." line: into buf (at least
 * 32 bytes more than label), returned. */
const char *ctp_color_label(const char *label, const char *sgr, char *buf,
			    size_t len);

#endif
