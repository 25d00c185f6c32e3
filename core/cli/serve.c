/* SPDX-License-Identifier: MIT */
/*
 * `ctprof-core serve`: the exporter mode (docs/EXPORT.md "serve"). One
 * loaded engine answers `GET /metrics` with the export (core/analysis/
 * openmetrics.h) of a fresh capture: OpenMetrics when the scraper asks for
 * it, else the Prometheus text format 0.0.4. Captures are rate-limited
 * (--min-interval: a scrape inside it gets the last one) and never run two
 * at once. HTTP is libmicrohttpd's, a thread per connection, each request
 * bounded in time, connections limited overall and per client (503 with
 * Retry-After past a limit).
 *
 * Three processes (docs/RELIABILITY.md "serve"): this one supervises; a
 * child speaks HTTP and encodes (http_main); the capture service's child
 * (capsvc.h) holds the plugins and captures when the HTTP process asks
 * through this one. Whatever a plugin does (crash, hang, leak) costs a
 * capture, never the listener; the HTTP process is started again if it
 * dies. With --no-supervise everything runs in this process.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "capsvc.h"
#include "capture_util.h"
#include "cli.h"
#include "clock.h"
#include "ctprof/plugin-util.h"
#include "engine.h"
#include "export.h"
#include "httplib.h"
#include "loader.h"
#include "log.h"
#include "openmetrics.h"
#include "priv.h"
#include "readcli.h"
#include "supervisor.h"
#include "view.h"
#include "webconfig.h"

#define PROG	       "ctprof-core serve"
#define DEFAULT_LISTEN "127.0.0.1:9864"
#define DEFAULT_MIN_S  5
#define CONN_TIMEOUT_S 10
/* Connections at once, overall and from one address. Past the overall
 * limit a new connection takes the place of the one that has waited
 * longest without a whole request (slow clients lose, not new ones);
 * with none such, or past its own address's limit, its request is
 * answered 503 with Retry-After and the connection closed. */
#define CONN_MAX	256
#define CONN_MAX_CLIENT 128
/* Past CONN_MAX, up to this many connections are taken only to be told
 * 503; beyond it libmicrohttpd closes new ones unanswered. Two
 * descriptors each (the socket and the reaper's dup). */
#define CONN_HARD (CONN_MAX + 1024)
/* A request must have arrived whole this long after its connection
 * opened (or its last answer went out), whatever its pace. */
#define REQUEST_DEADLINE_NS (10 * 1000000000ull)
#define CT_OPENMETRICS                                                         \
	"application/openmetrics-text; version=1.0.0; charset=utf-8"
#define CT_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"

static volatile sig_atomic_t srv_stop;
static const struct ctp_webcfg *srv_web; /* --web-config, for reply() */

/*
 * One rendered exposition of the last capture, in one format. Every
 * response that sends it shares it: libmicrohttpd holds a reference until
 * the last byte went out or the connection closed, and the cache in
 * struct srv holds one until the next capture. So any number of clients,
 * slow readers included, cost one copy per format and capture, not one
 * each (docs/EXPORT.md "serve": memory).
 */
struct expo {
	unsigned refs; /* __atomic: released on libmicrohttpd's threads */
	size_t len;
	char *body;
};

static struct expo *expo_ref(struct expo *e)
{
	__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
	return e;
}

static void expo_unref(void *cls)
{
	struct expo *e = cls;
	if (e && __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		free(e->body);
		free(e);
	}
}

/* One connection, as the limits and the request deadline see it. */
struct conn {
	bool used, over, handling;
	/* Shut down to make room for a newer connection: on its way out,
	 * it counts against no limit. */
	bool cut;
	struct sockaddr_storage addr;
	int fd; /* a dup of the socket, to shut it down */
	/* When the request must have arrived whole: a time, not the start
	 * of its clock, so that a reaper's older reading of the clock can
	 * never take a connection opened since for an old one. */
	uint64_t due_ns;
};

struct srv {
	struct ctp_readopts r; /* --group-by, --fields, --config... */
	const char *config_path, *listen, *view_name;
	const char *user;	/* --user */
	const char *web_path;	/* --web-config */
	struct ctp_webcfg *web; /* its TLS and users, NULL without */
	uint64_t min_ns, top, ttl_ns;
	bool no_supervise;
	int sock;
	/* In the child: the engine, the last capture and its time. */
	const struct ctp_config *cfg;
	struct ctp_engine *eng;
	struct ctp_view *view;
	pthread_mutex_t lock;
	int memfd;
	/* The counters over time (series.h), which holds the last capture:
	 * this process's, so a new HTTP process starts them at zero. */
	struct ctp_series *series;
	const struct ctp_snap *snap;
	bool said_exits;
	uint64_t taken_ns;
	/* The last capture's exposition by format (0: text 0.0.4, 1:
	 * OpenMetrics), rendered at its first request; under lock. */
	struct expo *expo[2];
	char why[600]; /* the last capture's failure, "" when none */
	int ask_fd;    /* to the supervisor, -1 with --no-supervise */
	/* The connections (CONN_HARD) and the reaper of late requests. */
	pthread_mutex_t conns_lock;
	struct conn *conns;
	unsigned n_conns, n_cut; /* used; of them cut (struct conn) */
	pthread_t reaper;
	bool reaper_on;
};

static void usage(FILE *f)
{
	fputs("Usage: ctprof-core serve [--config FILE] [--listen ADDR:PORT] "
	      "[--min-interval D]\n"
	      "                         [--group-by AXES] [--view NAME | "
	      "--fields GLOBS] [--top N]\n"
	      "                         [--web-config FILE]\n"
	      "\n"
	      "  --user NAME         serve as NAME with no capability, the "
	      "capture keeping\n"
	      "                      only what its plugins declare "
	      "(docs/RELIABILITY.md)\n"
	      "  --listen ADDR:PORT  where to answer (default " DEFAULT_LISTEN
	      "; port 0: any free one)\n"
	      "  --web-config FILE   TLS and basic auth, in exporter-toolkit's "
	      "web config\n"
	      "                      YAML (docs/EXPORT.md)\n"
	      "  --min-interval D    a scrape sooner than this after a "
	      "capture gets that capture\n"
	      "                      (default 5s)\n"
	      "  --series-ttl D      a group once exported keeps its series "
	      "while it had\n"
	      "                      an increase within D (default "
	      "service.series_ttl, 10m)\n"
	      "  --group-by, --view, --fields, --top: as export's "
	      "(docs/EXPORT.md)\n"
	      "  -v, --verbose       a line per capture; -q, --quiet: "
	      "errors only\n"
	      "GET /metrics answers OpenMetrics when asked for it (Accept), "
	      "else the\nPrometheus text format 0.0.4. SIGTERM or SIGINT "
	      "stops it.\n",
	      f);
}

static int own_option(void *ctx, int c, const char *arg)
{
	struct srv *s = ctx;
	uint64_t ns;
	switch (c) {
	case 'l':
		s->listen = arg;
		return -1;
	case 'm':
		if (ctp_config_parse_duration(arg, &ns) < 0) {
			fprintf(stderr,
				PROG ": --min-interval %s: expected a "
				     "duration (5s, 500ms, 1m)\n",
				arg);
			return CTP_EXIT_USAGE;
		}
		s->min_ns = ns;
		return -1;
	case 'w':
		s->view_name = arg;
		return -1;
	case 'S':
		if (ctp_config_parse_duration(arg, &ns) < 0 || !ns) {
			fprintf(stderr,
				PROG ": --series-ttl %s: expected a "
				     "duration (10m, 1h, 90s)\n",
				arg);
			return CTP_EXIT_USAGE;
		}
		s->ttl_ns = ns;
		return -1;
	case 'q':
		ctp_verbosity = -1;
		return -1;
	case 'v':
		ctp_verbosity++;
		return -1;
	case 't':
		if (ctp_parse_u64_str(arg, &s->top) < 0) {
			fprintf(stderr, PROG ": --top %s: expected a count\n",
				arg);
			return CTP_EXIT_USAGE;
		}
		return -1;
	case 'N':
		s->no_supervise = true;
		return -1;
	case 'U':
		s->user = arg;
		return -1;
	case 'W':
		s->web_path = arg;
		return -1;
	case 'h':
		usage(stdout);
		return CTP_EXIT_OK;
	}
	return ctp_readcli_try_help("serve");
}

static int parse_args(int argc, char **argv, struct srv *s)
{
	static const struct option lopts[] = {
		CTP_READOPT_LONGOPTS,
		{"listen", required_argument, NULL, 'l'},
		{"min-interval", required_argument, NULL, 'm'},
		{"view", required_argument, NULL, 'w'},
		{"series-ttl", required_argument, NULL, 'S'},
		{"quiet", no_argument, NULL, 'q'},
		{"verbose", no_argument, NULL, 'v'},
		{"top", required_argument, NULL, 't'},
		{"no-supervise", no_argument, NULL, 'N'},
		{"user", required_argument, NULL, 'U'},
		{"web-config", required_argument, NULL, 'W'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	int rc = ctp_readopts_parse("serve", &s->r, argc, argv, "hc:qv", lopts,
				    own_option, s);
	if (rc >= 0)
		return rc;
	if (!s->r.group_by)
		s->r.group_by = "pcomm";
	rc = ctp_readopts_finish("serve", &s->r, argc, argv, 0, NULL);
	if (rc >= 0)
		return rc;
	if (s->user && s->no_supervise) {
		fprintf(stderr, PROG ": --user needs the supervisor: the "
				     "capture and HTTP run in processes of "
				     "their own\n");
		return ctp_readcli_try_help("serve");
	}
	if (s->view_name && s->r.n_globs) {
		fprintf(stderr, PROG ": --view and --fields: one selection\n");
		return ctp_readcli_try_help("serve");
	}
	s->config_path = s->r.config ? s->r.config : ctp_cli_default_config();
	return -1;
}

/* The listening socket of ADDR:PORT ([v6]:PORT), bound and listening. */
static int listen_on(const char *spec, char *said, size_t n)
{
	char host[256];
	const char *colon = strrchr(spec, ':');
	if (!colon || colon == spec || !colon[1]) {
		fprintf(stderr, PROG ": --listen %s: expected ADDR:PORT\n",
			spec);
		return -EINVAL;
	}
	size_t hl = (size_t)(colon - spec);
	if (spec[0] == '[' && hl >= 2 && spec[hl - 1] == ']')
		snprintf(host, sizeof(host), "%.*s", (int)(hl - 2), spec + 1);
	else
		snprintf(host, sizeof(host), "%.*s", (int)hl, spec);
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
			*ai = NULL;
	int e = getaddrinfo(host, colon + 1, &hints, &ai);
	if (e) {
		fprintf(stderr, PROG ": --listen %s: %s\n", spec,
			gai_strerror(e));
		return -EINVAL;
	}
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, 0),
	    one = 1;
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
		e = errno;
		fprintf(stderr, PROG ": --listen %s: %s\n", spec, strerror(e));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return -e;
	}
	freeaddrinfo(ai);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
			inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
			port = ntohs(s6->sin6_port);
		} else {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
			inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
			port = ntohs(s4->sin_port);
		}
	}
	snprintf(said, n, ss.ss_family == AF_INET6 ? "[%s]:%u" : "%s:%u", a,
		 port);
	return fd;
}

/* A capture into the memfd: in this process (--no-supervise), or by the
 * supervisor's capture service. 0 and its bytes, or -errno with s->why. */
static int capture_into(struct srv *s, uint64_t *bytes)
{
	if (s->ask_fd >= 0) {
		/* The service bounds the capture; this bounds the service. */
		uint64_t limit = ctp_now_ns() + s->cfg->service.deadline_ns +
				 2000000000ull;
		return ctp_capsvc_ask(s->ask_fd, limit, &srv_stop, bytes,
				      s->why, sizeof(s->why));
	}
	char path[64];
	const char *what;
	int r = ctp_cli_capture_again(s->eng, false, &what);
	if (r < 0) {
		snprintf(s->why, sizeof(s->why), "%s: %s", what, strerror(-r));
		return r;
	}
	if (ctp_capture_spoiled(s->eng->cap, s->why, sizeof(s->why)))
		return -EAGAIN; /* short of resources: no answer, not a wrong
				   one */
	/* The memory file is the snapshot's way to the reader, no file of the
	 * user's: -v's line per capture names none. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s->memfd);
	if (ftruncate(s->memfd, 0) < 0 || lseek(s->memfd, 0, SEEK_SET) < 0 ||
	    ctp_cli_write(s->eng->cap, s->cfg, path, &srv_stop, bytes, false) !=
		    CTP_EXIT_OK) {
		snprintf(s->why, sizeof(s->why),
			 "the capture could not be written (see the log)");
		return -EIO;
	}
	if (ctp_verbosity >= 1)
		ctp_cli_report(s->eng->cap, PROG ": a capture", *bytes);
	return 0;
}

/* A capture, decoded as s->snap. Under s->lock. */
static int capture(struct srv *s)
{
	char path[64];
	uint64_t bytes = 0;
	int r = capture_into(s, &bytes);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s->memfd);
	struct ctp_snap *snap;
	char err[512];
	if (ctp_snap_open(path, s->r.cap, &snap, err, sizeof(err)) < 0) {
		snprintf(s->why, sizeof(s->why), "%s", err);
		return -EIO;
	}
	if (ctp_series_feed(s->series, snap, err, sizeof(err)) < 0) {
		snprintf(s->why, sizeof(s->why), "%s", err);
		return -EIO;
	}
	s->snap = ctp_series_snap(s->series);
	s->why[0] = '\0';
	struct ctp_series_stats st;
	ctp_series_stats(s->series, &st);
	if (st.feeds == 2 && !st.exits && !s->said_exits) {
		s->said_exits = true;
		ctp_log(CTP_LOG_WARNING,
			"no exited table in the captures: the work of tasks "
			"that exit between scrapes is not counted (the "
			"taskstats plugin records it)");
	}
	if (ctp_verbosity >= 1)
		fprintf(stderr,
			PROG ": %zu group series (group=\"other\" included), "
			     "%zu groups remembered, %zu expired, %zu capped; "
			     "%llu exited tasks counted\n",
			st.series, st.tracked, st.expired, st.capped,
			(unsigned long long)st.exited);
	return 0;
}

/* The series as metrics in a new struct expo (one reference), or -errno
 * with s->why. */
static int render(struct srv *s, bool om, struct expo **ret)
{
	struct expo *e = calloc(1, sizeof(*e));
	FILE *f = e ? open_memstream(&e->body, &e->len) : NULL;
	int r = f ? 0 : -ENOMEM;
	struct ctp_om_stats st;
	if (r == 0)
		r = ctp_export_series(f, s->series, &s->r, s->view,
				      s->view_name != NULL, om, &st);
	if (f && fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r < 0) {
		snprintf(s->why, sizeof(s->why), "export: %s", strerror(-r));
		if (e)
			free(e->body);
		free(e);
		return r;
	}
	e->refs = 1;
	*ret = e;
	return 0;
}

/* The last capture (a fresh one when it is older than --min-interval)
 * as metrics: a reference to its exposition in *ret, rendered once per
 * capture and format. Returns 0, or -errno with the reason in why
 * (-EBUSY: another request's capture outlasted this one's wait). */
static int metrics(struct srv *s, bool om, struct expo **ret, char *why,
		   size_t whylen)
{
	/* A request waits for another's capture no longer than a capture
	 * may take. */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	uint64_t wait = s->cfg->service.deadline_ns + 2000000000ull;
	until.tv_sec += (time_t)(wait / 1000000000u);
	until.tv_nsec += (long)(wait % 1000000000u);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	if (pthread_mutex_timedlock(&s->lock, &until) != 0) {
		snprintf(why, whylen, "a capture is still in progress");
		return -EBUSY;
	}
	uint64_t now = ctp_now_ns();
	int r = 0;
	if (!s->snap || now - s->taken_ns >= s->min_ns) {
		r = capture(s);
		if (r == 0) {
			s->taken_ns = ctp_now_ns();
			/* Responses still sending the old ones keep them. */
			for (int k = 0; k < 2; k++) {
				expo_unref(s->expo[k]);
				s->expo[k] = NULL;
			}
		}
	}
	if (r == 0 && !s->expo[om])
		r = render(s, om, &s->expo[om]);
	if (r == 0)
		*ret = expo_ref(s->expo[om]);
	if (r < 0)
		snprintf(why, whylen, "%s", s->why);
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* Queue resp (its headers added here) and drop this reference to it. */
static enum MHD_Result send_response(struct MHD_Connection *c, unsigned status,
				     const char *type,
				     struct MHD_Response *resp, bool allow)
{
	bool busy = status == MHD_HTTP_SERVICE_UNAVAILABLE;
	sym_MHD_add_response_header(resp, "Content-Type", type);
	ctp_web_add_headers(srv_web, resp); /* --web-config */
	if (allow)
		sym_MHD_add_response_header(resp, "Allow", "GET, HEAD");
	if (busy) /* the scraper may come back soon */
		sym_MHD_add_response_header(resp, "Retry-After", "1");
	enum MHD_Result r = sym_MHD_queue_response(c, status, resp);
	sym_MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status,
			     const char *type, const char *body, size_t len,
			     bool allow)
{
	struct MHD_Response *resp = sym_MHD_create_response_from_buffer(
		len, (void *)body, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	return send_response(c, status, type, resp, allow);
}

static const char index_html[] =
	"<!DOCTYPE html>\n<html><head><title>ctprof-core</title></head>"
	"<body><h1>ctprof-core</h1><p>Per-thread resource profile of this "
	"host: <a href=\"metrics\">metrics</a> (OpenMetrics or the "
	"Prometheus text format; docs/EXPORT.md).</p></body></html>\n";

/* Framing and Host headers seen in a request. */
struct framing {
	unsigned hosts, lengths, encodings;
	const char *length; /* the first Content-Length */
	bool conflict;	    /* a Content-Length unlike the first */
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind,
				    const char *key, const char *value)
{
	struct framing *fr = cls;
	(void)kind;
	if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0)
		fr->hosts++;
	else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0)
		fr->encodings++;
	else if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		if (fr->lengths++ == 0)
			fr->length = value;
		else if (strcmp(value ? value : "",
				fr->length ? fr->length : "") != 0)
			fr->conflict = true;
	}
	return MHD_YES;
}

/*
 * What RFC 9112 (§3.2, §6.1, §6.3) has a server refuse with 400 and
 * libmicrohttpd before 1.0 lets through (its strict mode refuses an
 * HTTP/1.1 request without Host): more than one Host, Content-Length
 * values that differ, Content-Length beside Transfer-Encoding. The
 * reason, or NULL when the request is well framed.
 */
static const char *misframed(struct MHD_Connection *c)
{
	struct framing fr = {0};
	sym_MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &fr);
	if (fr.hosts > 1)
		return "more than one Host";
	if (fr.conflict)
		return "Content-Length values that differ";
	if (fr.lengths && fr.encodings)
		return "Content-Length with Transfer-Encoding";
	return NULL;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_len, void **req)
{
	struct srv *s = cls;
	(void)version;
	(void)upload;
	const union MHD_ConnectionInfo *ci = sym_MHD_get_connection_info(
		c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *cn = ci ? ci->socket_context : NULL;
	if (cn && cn->over) {
		static const char m[] =
			"503 too many connections: try again later\n";
		struct MHD_Response *resp = sym_MHD_create_response_from_buffer(
			sizeof(m) - 1, (void *)m, MHD_RESPMEM_PERSISTENT);
		if (!resp)
			return MHD_NO;
		sym_MHD_add_response_header(resp, "Content-Type",
					    "text/plain; charset=utf-8");
		sym_MHD_add_response_header(resp, "Retry-After", "1");
		sym_MHD_add_response_header(resp, "Connection", "close");
		enum MHD_Result r = sym_MHD_queue_response(
			c, MHD_HTTP_SERVICE_UNAVAILABLE, resp);
		sym_MHD_destroy_response(resp);
		return r;
	}
	if (cn) {
		pthread_mutex_lock(&s->conns_lock);
		cn->handling = true; /* the request is in: no reaping */
		pthread_mutex_unlock(&s->conns_lock);
	}
	if (!*req) { /* headers only yet: answer when the request is whole */
		unsigned denied = ctp_web_auth(s->web, c); /* --web-config */
		if (denied)
			return ctp_web_refuse(s->web, c, denied);
		const char *bad = misframed(c);
		if (bad) {
			char m[128];
			int n = snprintf(m, sizeof(m), "400 bad request: %s\n",
					 bad);
			return reply(c, MHD_HTTP_BAD_REQUEST,
				     "text/plain; charset=utf-8", m, (size_t)n,
				     false);
		}
		*req = (void *)1;
		return MHD_YES;
	}
	if (*upload_len) {
		*upload_len = 0; /* a body is no part of these requests */
		return MHD_YES;
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		static const char m[] = "405 method not allowed: GET or HEAD\n";
		return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED,
			     "text/plain; charset=utf-8", m, sizeof(m) - 1,
			     true);
	}
	if (strcmp(url, "/") == 0)
		return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8",
			     index_html, sizeof(index_html) - 1, false);
	if (strcmp(url, "/metrics") != 0) {
		static const char m[] = "404 not found: try /metrics\n";
		return reply(c, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8",
			     m, sizeof(m) - 1, false);
	}
	const char *accept =
		sym_MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
	bool om = accept && strstr(accept, "application/openmetrics-text");
	struct expo *e = NULL;
	char why[600];
	if (metrics(s, om, &e, why, sizeof(why)) < 0) {
		char m[700];
		int n = snprintf(m, sizeof(m), "503 no capture: %s\n", why);
		return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			     "text/plain; charset=utf-8", m,
			     n > 0 && (size_t)n < sizeof(m) ? (size_t)n : 0,
			     false);
	}
	/* The response holds the reference from here (expo_unref when
	 * libmicrohttpd is done with it), or drops it at once. */
	struct MHD_Response *resp =
		sym_MHD_create_response_from_buffer_with_free_callback_cls(
			e->len, e->body, expo_unref, e);
	if (!resp) {
		expo_unref(e);
		return MHD_NO;
	}
	return send_response(c, MHD_HTTP_OK,
			     om ? CT_OPENMETRICS : CT_PROMETHEUS, resp, false);
}

/* ---- Connections: limits and the request deadline ----------------------- */

static bool same_addr(const struct sockaddr_storage *a,
		      const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr,
			      sizeof(struct in6_addr)) == 0;
	return true;
}

static void on_connection(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode code)
{
	struct srv *s = cls;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		struct conn *cn = *ctx;
		if (!cn)
			return;
		pthread_mutex_lock(&s->conns_lock);
		if (cn->fd >= 0)
			close(cn->fd);
		cn->used = false;
		s->n_conns--;
		if (cn->cut)
			s->n_cut--;
		pthread_mutex_unlock(&s->conns_lock);
		*ctx = NULL;
		return;
	}
	const union MHD_ConnectionInfo *fi = sym_MHD_get_connection_info(
		c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *ai = sym_MHD_get_connection_info(
		c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct sockaddr_storage addr = {0};
	if (ai && ai->client_addr) {
		socklen_t l = ai->client_addr->sa_family == AF_INET6
				      ? sizeof(struct sockaddr_in6)
				      : sizeof(struct sockaddr_in);
		memcpy(&addr, ai->client_addr, l);
	}
	pthread_mutex_lock(&s->conns_lock);
	struct conn *cn = NULL, *oldest = NULL;
	unsigned same = 0;
	for (unsigned i = 0; i < CONN_HARD; i++) {
		struct conn *o = &s->conns[i];
		if (!o->used) {
			if (!cn)
				cn = o;
			continue;
		}
		if (o->cut)
			continue;
		if (same_addr(&o->addr, &addr))
			same++;
		/* Waiting for a request (not answering one), longest first. */
		if (!o->handling && o->fd >= 0 &&
		    (!oldest || o->due_ns < oldest->due_ns))
			oldest = o;
	}
	if (cn) {
		*cn = (struct conn){
			.used = true,
			.addr = addr,
			.fd = fi ? fcntl(fi->connect_fd, F_DUPFD_CLOEXEC, 0)
				 : -1,
			.due_ns = ctp_now_ns() + REQUEST_DEADLINE_NS};
		s->n_conns++;
		cn->over = same >= CONN_MAX_CLIENT;
		/* Past the overall limit, whoever holds connections open
		 * without asking anything (a client trickling its requests,
		 * from as many addresses as it likes) would otherwise have
		 * every scrape answered 503: the one waiting longest makes
		 * room, unless this one is past its own address's share. */
		if (!cn->over && s->n_conns - s->n_cut > CONN_MAX) {
			if (oldest) {
				shutdown(oldest->fd, SHUT_RDWR);
				oldest->cut = true;
				s->n_cut++;
			} else {
				cn->over = true;
			}
		}
	}
	pthread_mutex_unlock(&s->conns_lock);
	*ctx = cn;
}

/* An answer went out: the connection's next request starts its clock. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req,
			 enum MHD_RequestTerminationCode toe)
{
	struct srv *s = cls;
	(void)req;
	(void)toe;
	const union MHD_ConnectionInfo *ci = sym_MHD_get_connection_info(
		c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	struct conn *cn = ci ? ci->socket_context : NULL;
	if (!cn)
		return;
	pthread_mutex_lock(&s->conns_lock);
	cn->handling = false;
	cn->due_ns = ctp_now_ns() + REQUEST_DEADLINE_NS;
	pthread_mutex_unlock(&s->conns_lock);
}

/* CTP_SERVE_REAPER_LAG=<duration> (tests only): how long the reaper waits
 * between reading the clock and looking at the connections, as a reaper
 * that a busy host deschedules there (or that waits for the lock while a
 * connection opens) does. 0 without it. */
static uint64_t reaper_lag_ns(void)
{
	const char *v = getenv("CTP_SERVE_REAPER_LAG");
	uint64_t ns = 0;
	if (v && ctp_config_parse_duration(v, &ns) < 0)
		ns = 0;
	return ns;
}

/* Shut down connections whose request did not arrive whole in time: a
 * client sending a byte now and then keeps libmicrohttpd's idle timeout
 * from ever firing. By the time the lock is taken, connections may have
 * opened after `now`: their due time is past it, so they stay. */
static void *reaper_main(void *arg)
{
	struct srv *s = arg;
	uint64_t lag = reaper_lag_ns();
	while (!srv_stop) {
		struct timespec ts = {.tv_nsec = 250000000};
		nanosleep(&ts, NULL);
		uint64_t now = ctp_now_ns();
		if (lag) {
			struct timespec l = {
				.tv_sec = (time_t)(lag / 1000000000u),
				.tv_nsec = (long)(lag % 1000000000u)};
			nanosleep(&l, NULL);
		}
		pthread_mutex_lock(&s->conns_lock);
		for (unsigned i = 0; i < CONN_HARD; i++) {
			struct conn *cn = &s->conns[i];
			if (cn->used && !cn->handling && cn->fd >= 0 &&
			    now >= cn->due_ns)
				shutdown(cn->fd, SHUT_RDWR);
		}
		pthread_mutex_unlock(&s->conns_lock);
	}
	return NULL;
}

/* --no-supervise: the engine in this process, its plugins loaded (*loaded:
 * eng to unload). -1 to go on, else the exit status. */
static int serve_load(struct srv *s, const struct ctp_config *cfg,
		      struct ctp_engine *eng, struct ctp_capture **cap,
		      bool *loaded)
{
	if (ctp_capture_new(cfg->workers ? cfg->workers : 1, cap) < 0) {
		fprintf(stderr, PROG ": %s\n", strerror(errno));
		return CTP_EXIT_FAILURE;
	}
	(*cap)->config_path = strdup(s->config_path);
	int r = ctp_engine_init(eng, cfg, *cap, &srv_stop);
	if (r >= 0) {
		eng->recording = true;
		r = ctp_engine_load(eng);
	}
	*loaded = true;
	if (r >= 0)
		return -1;
	if (r != -ECANCELED)
		fprintf(stderr, PROG ": loading plugins: %s\n", strerror(-r));
	return r == -ECANCELED ? CTP_EXIT_REQUIRED : CTP_EXIT_FAILURE;
}

/* Room for CONN_HARD connections' descriptors, when the hard limit allows
 * (a unit's LimitNOFILE, systemd's default 524288). */
static void raise_nofile(void)
{
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
	    nofile.rlim_cur < 2 * CONN_HARD + 64) {
		nofile.rlim_cur = nofile.rlim_max < 2 * CONN_HARD + 64
					  ? nofile.rlim_max
					  : 2 * CONN_HARD + 64;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
}

/* The HTTP server on s->sock, a thread per connection (--web-config: TLS);
 * NULL when it did not start. */
static struct MHD_Daemon *start_daemon(struct srv *s)
{
	struct MHD_OptionItem web_opts[8];
	unsigned web_flags;
	ctp_webcfg_mhd_options(s->web, web_opts, 8, &web_flags);
	return sym_MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD |
			MHD_USE_THREAD_PER_CONNECTION | MHD_USE_AUTO |
			web_flags,
		0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, s->sock,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_HARD,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)CONN_HARD,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
		MHD_OPTION_THREAD_STACK_SIZE, (size_t)(256 * 1024),
	/* The protocol as written: an HTTP/1.1 request without
	 * Host is refused (400). */
#if MHD_VERSION >= 0x01000000
		MHD_OPTION_CLIENT_DISCIPLINE_LVL, 1,
#else
		MHD_OPTION_STRICT_FOR_CLIENT, 1,
#endif
		MHD_OPTION_ARRAY, web_opts, MHD_OPTION_END);
}

/* Serve until SIGTERM/SIGINT: the HTTP process (or, --no-supervise, the
 * only one, with the engine in it). */
static int serve_run(const struct ctp_config *cfg, void *arg)
{
	struct srv *s = arg;
	struct ctp_capture *cap = NULL;
	struct ctp_engine eng;
	struct MHD_Daemon *d = NULL;
	bool loaded = false;
	int rc = CTP_EXIT_FAILURE;
	s->cfg = cfg;
	s->eng = &eng;
	if (s->ask_fd < 0 &&
	    (rc = serve_load(s, cfg, &eng, &cap, &loaded)) >= 0)
		goto out;
	rc = CTP_EXIT_FAILURE;
	raise_nofile();
	s->conns = calloc(CONN_HARD, sizeof(*s->conns));
	if (!s->conns)
		goto out;
	pthread_mutex_init(&s->conns_lock, NULL);
	/* Signals go to the main thread (sigsuspend below), never to the
	 * HTTP or capture threads, which inherit this mask. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	s->reaper_on = pthread_create(&s->reaper, NULL, reaper_main, s) == 0;
	d = start_daemon(s);
	if (!d) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		fprintf(stderr, PROG ": the HTTP server did not start\n");
		goto out;
	}
	while (!srv_stop)
		sigsuspend(&old);
	rc = CTP_EXIT_OK;
out:
	if (d) {
		sym_MHD_quiesce_daemon(d);
		sym_MHD_stop_daemon(d);
	}
	if (s->reaper_on)
		pthread_join(s->reaper, NULL);
	if (loaded) {
		ctp_engine_unload(&eng);
		ctp_engine_done(&eng);
	}
	ctp_capture_free(cap);
	for (int k = 0; k < 2; k++) {
		expo_unref(s->expo[k]);
		s->expo[k] = NULL;
	}
	ctp_series_free(s->series);
	s->series = NULL;
	s->snap = NULL;
	free(s->conns);
	return rc;
}

/* ---- The supervisor --------------------------------------------------------
 */

static volatile sig_atomic_t http_child;

static void on_signal(int sig)
{
	if (http_child > 0)
		kill((pid_t)http_child, sig);
	srv_stop = sig;
}

/* Start the HTTP process, its end of the asking socket `fd`. */
static pid_t start_http(struct srv *s, const struct ctp_config *cfg, int fd,
			int other)
{
	pid_t parent = getpid();
	fflush(NULL);
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(CTP_EXIT_FAILURE);
	close(other);
	s->ask_fd = fd;
	char why[256];
	/* No capability, NoNewPrivs and the allow-list before the first
	 * byte from a client (every file it needs is open by now). */
	if (s->user && ctp_priv_drop_to_user(s->user, CTP_PRIV_FILTER_SERVE,
					     why, sizeof(why)) < 0) {
		ctp_log(CTP_LOG_ERR, "cannot serve as %s: %s", s->user, why);
		_exit(CTP_EXIT_REQUIRED);
	}
	_exit(serve_run(cfg, s));
}

/* Wait up to `ns` for pid, then kill it. */
static void end_pid(pid_t pid, uint64_t ns)
{
	uint64_t until = ctp_now_ns() + ns;
	int st;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (ctp_now_ns() >= until) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return;
		}
		struct timespec ts = {.tv_nsec = 10000000};
		nanosleep(&ts, NULL);
	}
}

/* The supervisor's loop: answer the HTTP process's requests for captures
 * with the capture service; start the HTTP process again when it dies
 * (at most once a second). */
static int supervise_http(struct srv *s, struct ctp_config *cfg)
{
	struct ctp_capsvc *cs = NULL;
	struct ctp_capsvc_opts o = {
		.prog = PROG, .config_path = s->config_path, .user = s->user};
	int sp[2] = {-1, -1}, rc = CTP_EXIT_FAILURE, r;
	if ((r = ctp_capsvc_new(cfg, &o, s->memfd, &srv_stop, &cs)) < 0) {
		fprintf(stderr, PROG ": %s\n", strerror(-r));
		return CTP_EXIT_FAILURE;
	}
	uint64_t started = 0;
	while (!srv_stop) {
		if (!http_child) {
			uint64_t now = ctp_now_ns();
			if (now - started < 1000000000ull) {
				struct timespec ts = {.tv_nsec = 100000000};
				nanosleep(&ts, NULL);
				continue;
			}
			if (sp[0] >= 0)
				close(sp[0]);
			if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC,
				       0, sp) < 0) {
				fprintf(stderr, PROG ": %s\n", strerror(errno));
				break;
			}
			started = now;
			pid_t pid = start_http(s, cfg, sp[1], sp[0]);
			close(sp[1]);
			if (pid < 0) {
				fprintf(stderr, PROG ": %s\n", strerror(errno));
				break;
			}
			http_child = pid;
		}
		struct pollfd p = {.fd = sp[0], .events = POLLIN};
		r = poll(&p, 1, 200);
		if (r > 0) {
			r = ctp_capsvc_answer(cs, sp[0]);
			if (r == -ENOTRECOVERABLE) {
				rc = CTP_EXIT_REQUIRED;
				break;
			}
		}
		int st;
		if (waitpid((pid_t)http_child, &st, WNOHANG) == http_child) {
			http_child = 0;
			/* It could not confine itself (--user): every new one
			 * would fail alike. */
			if (WIFEXITED(st) &&
			    WEXITSTATUS(st) == CTP_EXIT_REQUIRED) {
				rc = CTP_EXIT_REQUIRED;
				break;
			}
			if (!srv_stop)
				ctp_log(CTP_LOG_WARNING,
					"the HTTP process ended (%s %d); "
					"starting it again",
					WIFSIGNALED(st) ? "signal" : "status",
					WIFSIGNALED(st) ? WTERMSIG(st)
							: WEXITSTATUS(st));
		}
	}
	if (srv_stop)
		rc = CTP_EXIT_OK;
	/* SIGTERM ends it all within 2 s, whatever a plugin does: the HTTP
	 * process has a second, the capture child half of one. */
	pid_t h = (pid_t)http_child;
	if (h > 0)
		kill(h, SIGTERM);
	ctp_capsvc_free(cs);
	if (h > 0)
		end_pid(h, 1000000000ull);
	http_child = 0;
	if (sp[0] >= 0)
		close(sp[0]);
	return rc;
}

int ctp_cmd_serve(int argc, char **argv)
{
	struct srv s = {.min_ns = DEFAULT_MIN_S * 1000000000ull,
			.top = 50,
			.listen = DEFAULT_LISTEN,
			.sock = -1,
			.memfd = -1,
			.ask_fd = -1};
	struct ctp_config *cfg = NULL;
	char said[128], err[512];
	int rc = parse_args(argc, argv, &s);
	if (rc >= 0)
		goto out;
	if ((rc = ctp_cli_load_config(s.config_path, NULL, &cfg)) != 0)
		goto out;
	/* The HTTP and TLS libraries, before any process drops privileges
	 * (httplib.h: no other command loads them). */
	if (ctp_httplib_load(err, sizeof(err)) < 0) {
		fprintf(stderr, PROG ": %s\n", err);
		rc = CTP_EXIT_FAILURE;
		goto out;
	}
	if (s.web_path && /* --web-config */
	    ctp_webcfg_load(s.web_path, &s.web, err, sizeof(err)) < 0) {
		fprintf(stderr, "ctprof-core: %s\n", err);
		rc = CTP_EXIT_USAGE;
		goto out;
	}
	srv_web = s.web;
	rc = CTP_EXIT_USAGE;
	if (ctp_view_find(s.view_name ? s.view_name : "top", &s.view, err,
			  sizeof(err)) < 0 &&
	    s.view_name) {
		fprintf(stderr, PROG ": %s\n", err);
		goto out;
	}
	/* Made here, with the views it reads, before any process drops its
	 * privileges: each HTTP process starts from this empty one. */
	if (ctp_export_series_new(&s.r, s.view, s.top,
				  s.ttl_ns ? s.ttl_ns
					   : cfg->service.series_ttl_ns,
				  &s.series) < 0) {
		fprintf(stderr, PROG ": %s\n", strerror(ENOMEM));
		rc = CTP_EXIT_FAILURE;
		goto out;
	}
	if ((s.sock = listen_on(s.listen, said, sizeof(said))) < 0) {
		rc = s.sock == -EINVAL ? CTP_EXIT_USAGE : CTP_EXIT_FAILURE;
		goto out;
	}
	s.memfd = memfd_create("ctprof-serve", MFD_CLOEXEC);
	if (s.memfd < 0) {
		fprintf(stderr, PROG ": %s\n", strerror(errno));
		rc = CTP_EXIT_FAILURE;
		goto out;
	}
	pthread_mutex_init(&s.lock, NULL);
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fprintf(stderr, PROG ": listening on %s://%s/metrics\n",
		s.web && s.web->tls ? "https" : "http", said);
	rc = s.no_supervise ? serve_run(cfg, &s) : supervise_http(&s, cfg);
	if (rc == CTP_EXIT_INTERRUPTED && srv_stop)
		rc = CTP_EXIT_OK; /* asked to stop: a clean end */
	pthread_mutex_destroy(&s.lock);
out:
	ctp_webcfg_free(s.web);
	if (s.sock >= 0)
		close(s.sock);
	if (s.memfd >= 0)
		close(s.memfd);
	ctp_series_free(s.series);
	ctp_view_free(s.view);
	ctp_config_free(cfg);
	ctp_readopts_done(&s.r);
	return rc;
}
