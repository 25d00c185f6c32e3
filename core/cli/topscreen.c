/* SPDX-License-Identifier: MIT */
/*
 * `top`'s terminal (topscreen.h): ncurses, and the terminal restored on
 * every way out, a crash included, with only async-signal-safe calls in
 * the handler.
 */
#include <curses.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <term.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "topscreen.h"

volatile sig_atomic_t ctp_top_stop;

static struct termios saved_tio;
static bool have_tio;
/* Leave the alternate screen, keypad mode off, cursor shown, attributes
 * reset: the terminal's own sequences, found before anything can crash. */
static char reset_seq[256];
static size_t reset_len;
static int saved_err = -1, log_fd = -1;
static off_t log_read;
static volatile sig_atomic_t screen_up;
static SCREEN *scr;
static char crash_dir[PATH_MAX];
static volatile sig_atomic_t crash_child;

void ctp_top_private_set(const char *dir, pid_t child)
{
	crash_child = 0;
	snprintf(crash_dir, sizeof(crash_dir), "%s", dir ? dir : "");
	crash_child = child;
}

/* Remove dir's entries and dir; passes again (from the start) while one
 * removes something, as getdents may skip entries removed under it. */
void ctp_top_dir_remove(const char *dir)
{
	char buf[4096] __attribute__((aligned(8)));
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	for (int pass = 0, gone = 1; gone && pass < 8; pass++) {
		gone = 0;
		if (lseek(fd, 0, SEEK_SET) < 0)
			break;
		for (ssize_t n; (n = getdents64(fd, buf, sizeof(buf))) > 0;)
			for (ssize_t o = 0; o < n;) {
				const struct dirent64 *d =
					(const void *)(buf + o);
				o += d->d_reclen;
				if (strcmp(d->d_name, ".") != 0 &&
				    strcmp(d->d_name, "..") != 0 &&
				    unlinkat(fd, d->d_name, 0) == 0)
					gone = 1;
			}
	}
	close(fd);
	rmdir(dir);
}

void ctp_top_child_kill(pid_t pid)
{
	struct timespec ts = {.tv_nsec = 10000000};
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	/* Its own children, reparented, are gone when none answers. */
	for (int i = 0; i < 200 && kill(-pid, 0) == 0; i++)
		nanosleep(&ts, NULL);
}

static void add_seq(const char *cap, const char *fallback)
{
	char *s = tigetstr(cap);
	const char *p = s && s != (char *)-1 && !strstr(s, "$<") ? s : fallback;
	size_t l = strlen(p);
	if (reset_len + l < sizeof(reset_seq)) {
		memcpy(reset_seq + reset_len, p, l);
		reset_len += l;
	}
}

static void put(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
}

/* The last `max` bytes of the kept messages onto the real stderr. */
static void flush_log(size_t max)
{
	struct stat st;
	char buf[4096];
	if (log_fd < 0 || saved_err < 0 || fstat(log_fd, &st) < 0)
		return;
	off_t at = st.st_size > (off_t)max ? st.st_size - (off_t)max : 0;
	for (ssize_t r; (r = pread(log_fd, buf, sizeof(buf), at)) > 0; at += r)
		put(saved_err, buf, (size_t)r);
}

/* What the crash handler does: async-signal-safe only. */
static void restore_raw(void)
{
	if (!screen_up)
		return;
	screen_up = 0;
	if (have_tio)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	put(STDOUT_FILENO, reset_seq, reset_len);
	flush_log(4096);
	if (saved_err >= 0)
		dup2(saved_err, STDERR_FILENO);
}

static void on_crash(int sig)
{
	int e = errno;
	restore_raw();
	if (crash_child > 0)
		ctp_top_child_kill((pid_t)crash_child);
	if (crash_dir[0])
		ctp_top_dir_remove(crash_dir);
	errno = e;
	/* SA_RESETHAND: the default action again, at once (SA_NODEFER). */
	raise(sig);
}

static void on_stop(int sig)
{
	ctp_top_stop = sig;
}

static void handlers(void)
{
	static const int stop[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
	static const int crash[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(stop) / sizeof(stop[0]); i++)
		sigaction(stop[i], &sa, NULL);
	struct sigaction ca = {.sa_handler = on_crash,
			       .sa_flags = SA_RESETHAND | SA_NODEFER};
	sigemptyset(&ca.sa_mask);
	for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
		sigaction(crash[i], &ca, NULL);
}

int ctp_top_screen_begin(void)
{
	const char *term = getenv("TERM");
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "ctprof-core top: needs a terminal (stdin and "
				"stdout)\n");
		return -1;
	}
	if (!term || !*term || strcmp(term, "dumb") == 0) {
		fprintf(stderr, "ctprof-core top: no terminal type (TERM)\n");
		return -1;
	}
	have_tio = tcgetattr(STDIN_FILENO, &saved_tio) == 0;
	/* Before ncurses starts: it leaves SIGINT and SIGTERM to us. */
	handlers();
	setlocale(LC_CTYPE, "");
	scr = newterm(NULL, stdout, stdin);
	if (!scr) {
		fprintf(stderr,
			"ctprof-core top: terminal type '%s' unknown to "
			"ncurses\n",
			term);
		return -1;
	}
	reset_len = 0;
	add_seq("rmcup", "\033[?1049l");
	add_seq("rmkx", "\033[?1l\033>");
	add_seq("cnorm", "\033[?25h");
	add_seq("sgr0", "\033[0m");
	log_fd = memfd_create("ctprof-top-log", MFD_CLOEXEC);
	saved_err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (log_fd >= 0 && saved_err >= 0)
		dup2(log_fd, STDERR_FILENO);
	log_read = 0;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	screen_up = 1;
	return 0;
}

void ctp_top_screen_end(void)
{
	if (!screen_up)
		return;
	endwin();
	screen_up = 0;
	if (have_tio)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	fflush(stderr);
	flush_log(16384);
	if (saved_err >= 0) {
		dup2(saved_err, STDERR_FILENO);
		close(saved_err);
		saved_err = -1;
	}
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
	delscreen(scr);
	scr = NULL;
}

void ctp_top_screen_news(char *buf, size_t n)
{
	char tail[1024];
	struct stat st;
	buf[0] = '\0';
	fflush(stderr);
	if (log_fd < 0 || fstat(log_fd, &st) < 0 || st.st_size <= log_read)
		return;
	off_t at = st.st_size - log_read > (off_t)sizeof(tail) - 1
			   ? st.st_size - (off_t)sizeof(tail) + 1
			   : log_read;
	ssize_t r = pread(log_fd, tail, sizeof(tail) - 1, at);
	log_read = st.st_size;
	if (r <= 0)
		return;
	tail[r] = '\0';
	while (r > 0 && tail[r - 1] == '\n')
		tail[--r] = '\0';
	char *last = strrchr(tail, '\n');
	last = last ? last + 1 : tail;
	/* Only what prints: the line is drawn on the screen. */
	size_t o = 0;
	for (const char *p = last; *p && o + 1 < n; p++)
		buf[o++] = (*p >= 32 && *p < 127) ? *p : '?';
	buf[o] = '\0';
}
