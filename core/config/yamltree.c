/* SPDX-License-Identifier: MIT */
/*
 * The YAML the core reads (collectors.yaml, view files): libyaml's event
 * parser builds a small tree of scalars, sequences and mappings, refusing
 * aliases, anchors, tags, deep nesting and duplicate keys on the way. Every
 * node keeps its position, so a schema pass over the tree reports each
 * error as FILE:LINE:COL, and the helpers below give every schema the same
 * messages for the same mistakes ("unknown key ...; did you mean ...?").
 */
#include "yamltree.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "grow.h"
#include "suggest.h"

/* Nothing the core reads nests this deep. */
#define MAX_DEPTH 32

void ctp_ynode_free(struct ctp_ynode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++)
		ctp_ynode_free(n->kids[i]);
	free(n->kids);
	free(n->str);
	free(n);
}

static int node_append(struct ctp_ynode *n, struct ctp_ynode *kid)
{
	if (CTP_GROW(n->kids, n->cap, n->n + 1, 8) < 0)
		return -ENOMEM;
	n->kids[n->n++] = kid;
	return 0;
}

/* YAML 1.1 null: only meaningful where a container is expected, so that
 * `plugins:` with nothing under it reads as an empty map. */
bool ctp_ynode_is_null(const struct ctp_ynode *n)
{
	return n->type == CTP_Y_SCALAR && n->plain &&
	       (!n->str[0] || !strcmp(n->str, "~") ||
		!strcasecmp(n->str, "null"));
}

/* ---- Errors -------------------------------------------------------------- */

/* Whatever went into the message, it stays one line. */
static void one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

__attribute__((format(printf, 4, 0))) static void
vset_err(struct ctp_yctx *c, unsigned line, unsigned col, const char *fmt,
	 va_list ap)
{
	int k;

	if (!c->err || !c->errlen)
		return;
	k = snprintf(c->err, c->errlen, "%s:%u:%u: ", c->name, line, col);
	if (k >= 0 && (size_t)k < c->errlen)
		vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
	one_line(c->err);
}

int ctp_y_fail_at(struct ctp_yctx *c, unsigned line, unsigned col,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset_err(c, line, col, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int ctp_y_fail(struct ctp_yctx *c, const struct ctp_ynode *at, const char *fmt,
	       ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset_err(c, at->line, at->col, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Errors with no position: the file as a whole. */
void ctp_y_fail_file(struct ctp_yctx *c, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (!c->err || !c->errlen)
		return;
	k = snprintf(c->err, c->errlen, "%s: ", c->name);
	if (k >= 0 && (size_t)k < c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
		va_end(ap);
	}
	one_line(c->err);
}

/* A user string made fit for a message: escaped and cut short. */

const char *ctp_y_clip(struct ctp_yclip *b, const char *s)
{
	size_t o = 0, i;

	for (i = 0; s[i] && i < CTP_Y_CLIP_MAX; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '\n') {
			b->s[o++] = '\\';
			b->s[o++] = 'n';
		} else if (ch == '\t') {
			b->s[o++] = '\\';
			b->s[o++] = 't';
		} else if (ch < 0x20 || ch == 0x7f) {
			o += (size_t)snprintf(b->s + o, sizeof(b->s) - o,
					      "\\x%02x", ch);
		} else {
			b->s[o++] = (char)ch;
		}
	}
	if (s[i]) {
		memcpy(b->s + o, "...", 3);
		o += 3;
	}
	b->s[o] = '\0';
	return b->s;
}

/* Dotted key paths for messages ("hosts[0].plugins.x"): cut short rather
 * than overflow; they come with a line and column anyway. */
void ctp_y_path(char *dst, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dst, n, fmt, ap);
	va_end(ap);
}

/* "'value'" for a scalar, "a mapping" / "a sequence" otherwise. */
const char *ctp_y_got(struct ctp_yclip *b, const struct ctp_ynode *n)
{
	struct ctp_yclip tmp;

	if (n->type == CTP_Y_MAP)
		return "a mapping";
	if (n->type == CTP_Y_SEQ)
		return "a sequence";
	snprintf(b->s, sizeof(b->s), "'%s'", ctp_y_clip(&tmp, n->str));
	return b->s;
}

/* Byte offset -> 1-based line and column, for reader errors, which libyaml
 * reports as an offset only. */
static void offset_pos(const struct ctp_yctx *c, size_t off, unsigned *line,
		       unsigned *col)
{
	size_t bol = 0;

	*line = 1;
	if (off > c->len)
		off = c->len;
	for (size_t i = 0; i < off; i++) {
		if (c->buf[i] == '\n') {
			(*line)++;
			bol = i + 1;
		}
	}
	*col = (unsigned)(off - bol) + 1;
}

static int syntax_error(struct ctp_yctx *c, const yaml_parser_t *p)
{
	const char *problem = p->problem ? p->problem : "unknown error";
	unsigned line, col;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		ctp_y_fail_file(c, "out of memory while parsing");
		return -ENOMEM;
	case YAML_READER_ERROR:
		offset_pos(c, p->problem_offset, &line, &col);
		if (p->problem_value != -1)
			return ctp_y_fail_at(
				c, line, col, "invalid input: %s (byte 0x%02x)",
				problem, (unsigned)p->problem_value);
		return ctp_y_fail_at(c, line, col, "invalid input: %s",
				     problem);
	default:
		line = (unsigned)p->problem_mark.line + 1;
		col = (unsigned)p->problem_mark.column + 1;
		if (p->context)
			return ctp_y_fail_at(
				c, line, col,
				"YAML syntax error: %s (%s at line %u, "
				"column %u)",
				problem, p->context,
				(unsigned)p->context_mark.line + 1,
				(unsigned)p->context_mark.column + 1);
		return ctp_y_fail_at(c, line, col, "YAML syntax error: %s",
				     problem);
	}
}

#define MARK_LINE(m) ((unsigned)(m).line + 1)
#define MARK_COL(m)  ((unsigned)(m).column + 1)

/* ---- Tree building ------------------------------------------------------- */

struct keyref {
	const struct ctp_ynode *key;
	size_t idx;
};

static int keyref_cmp(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	int r = strcmp(x->key->str, y->key->str);

	if (r)
		return r;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Sorting keeps a plugin map of many entries from going quadratic. Reports
 * the first repeated key in file order. */
static int check_dups(struct ctp_yctx *c, const struct ctp_ynode *map)
{
	size_t nk = map->n / 2, i, best = SIZE_MAX;
	const struct ctp_ynode *first = NULL, *dup = NULL;
	struct keyref *refs;
	struct ctp_yclip b;

	if (nk < 2)
		return 0;
	refs = malloc(nk * sizeof(*refs));
	if (!refs) {
		ctp_y_fail_file(c, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < nk; i++) {
		refs[i].key = map->kids[2 * i];
		refs[i].idx = i;
	}
	qsort(refs, nk, sizeof(*refs), keyref_cmp);
	for (i = 1; i < nk; i++) {
		if (strcmp(refs[i].key->str, refs[i - 1].key->str))
			continue;
		if (refs[i].idx < best) {
			size_t j = i - 1;

			/* The first occurrence heads the run of equals. */
			while (j > 0 &&
			       !strcmp(refs[j - 1].key->str, refs[i].key->str))
				j--;
			best = refs[i].idx;
			dup = refs[i].key;
			first = refs[j].key;
		}
	}
	free(refs);
	if (!dup)
		return 0;
	return ctp_y_fail(c, dup,
			  "duplicate key '%s' (first given at line %u, "
			  "column %u)",
			  ctp_y_clip(&b, dup->str), first->line, first->col);
}

/* Refuse what the config language leaves out: aliases, anchors, tags,
 * deep nesting and any event that cannot start a value. */
static int check_event(struct ctp_yctx *c, const yaml_event_t *ev,
		       unsigned depth)
{
	unsigned line = MARK_LINE(ev->start_mark),
		 col = MARK_COL(ev->start_mark);
	const yaml_char_t *anchor = NULL, *tag = NULL;
	struct ctp_yclip b;

	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		return ctp_y_fail_at(
			c, line, col,
			"YAML aliases ('*%s') are not supported: write "
			"the value out in full",
			ctp_y_clip(&b, (const char *)ev->data.alias.anchor));
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	default:
		return ctp_y_fail_at(c, line, col, "unexpected YAML structure");
	}
	if (anchor)
		return ctp_y_fail_at(
			c, line, col,
			"YAML anchors ('&%s') are not supported: write "
			"the value out in full",
			ctp_y_clip(&b, (const char *)anchor));
	if (tag)
		return ctp_y_fail_at(c, line, col,
				     "YAML tags ('%s') are not supported",
				     ctp_y_clip(&b, (const char *)tag));
	if (depth > MAX_DEPTH)
		return ctp_y_fail_at(c, line, col,
				     "nested more than %d levels deep",
				     MAX_DEPTH);
	return 0;
}

/* A scalar event's text into n (NUL-free). */
static int build_scalar(struct ctp_yctx *c, const yaml_event_t *ev,
			struct ctp_ynode *n)
{
	size_t len = ev->data.scalar.length;

	n->type = CTP_Y_SCALAR;
	n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
	n->str = malloc(len + 1);
	if (!n->str)
		return -ENOMEM;
	memcpy(n->str, ev->data.scalar.value, len);
	n->str[len] = '\0';
	if (strlen(n->str) != len)
		return ctp_y_fail(c, n, "value contains a NUL character");
	return 0;
}

static int build(struct ctp_yctx *c, yaml_parser_t *p, yaml_event_t *ev,
		 unsigned depth, struct ctp_ynode **ret);

/* The elements of a mapping or sequence n, up to its end event; a
 * mapping's keys are scalars and unique. */
static int build_children(struct ctp_yctx *c, yaml_parser_t *p,
			  struct ctp_ynode *n, unsigned depth)
{
	for (;;) {
		yaml_event_t kev;
		struct ctp_ynode *kid;
		int r;

		if (!yaml_parser_parse(p, &kev))
			return syntax_error(c, p);
		if (kev.type == YAML_SEQUENCE_END_EVENT ||
		    kev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&kev);
			break;
		}
		r = build(c, p, &kev, depth + 1, &kid);
		if (r < 0)
			return r;
		r = node_append(n, kid);
		if (r < 0) {
			ctp_ynode_free(kid);
			return r;
		}
		if (n->type == CTP_Y_MAP && n->n % 2 == 1 &&
		    kid->type != CTP_Y_SCALAR)
			return ctp_y_fail(
				c, kid,
				"mapping keys must be plain names, got %s",
				kid->type == CTP_Y_MAP ? "a mapping"
						       : "a sequence");
	}
	return n->type == CTP_Y_MAP ? check_dups(c, n) : 0;
}

/* One value, from the event that starts it. Takes ownership of *ev
 * (deletes it). */
static int build(struct ctp_yctx *c, yaml_parser_t *p, yaml_event_t *ev,
		 unsigned depth, struct ctp_ynode **ret)
{
	struct ctp_ynode *n = NULL;
	int r = check_event(c, ev, depth);

	if (r == 0) {
		n = calloc(1, sizeof(*n));
		r = n ? 0 : -ENOMEM;
	}
	if (r == 0) {
		n->line = MARK_LINE(ev->start_mark);
		n->col = MARK_COL(ev->start_mark);
		if (ev->type == YAML_SCALAR_EVENT)
			r = build_scalar(c, ev, n);
		else
			n->type = ev->type == YAML_MAPPING_START_EVENT
					  ? CTP_Y_MAP
					  : CTP_Y_SEQ;
	}
	/* The children come from the parser: this event is done with. */
	yaml_event_delete(ev);
	if (r == 0 && n->type != CTP_Y_SCALAR)
		r = build_children(c, p, n, depth);
	if (r == -ENOMEM && c->err && c->errlen && !c->err[0])
		ctp_y_fail_file(c, "out of memory");
	if (r < 0) {
		ctp_ynode_free(n);
		return r;
	}
	*ret = n;
	return 0;
}

static int next_event(struct ctp_yctx *c, yaml_parser_t *p, yaml_event_t *ev)
{
	if (!yaml_parser_parse(p, ev))
		return syntax_error(c, p);
	return 0;
}

/* Drops the event in *ev (one the caller has no use for) and reads the
 * next into it. */
static int skip_event(struct ctp_yctx *c, yaml_parser_t *p, yaml_event_t *ev)
{
	yaml_event_delete(ev);
	return next_event(c, p, ev);
}

/* The document's root node, or NULL for a stream with no document. */
int ctp_yaml_parse(struct ctp_yctx *c, struct ctp_ynode **ret)
{
	static const char empty[] = "";
	struct ctp_ynode *root = NULL;
	yaml_parser_t p;
	yaml_event_t ev;
	int r;

	if (!yaml_parser_initialize(&p)) {
		ctp_y_fail_file(c, "out of memory");
		return -ENOMEM;
	}
	yaml_parser_set_input_string(
		&p, (const unsigned char *)(c->buf ? c->buf : empty), c->len);

	r = next_event(c, &p, &ev); /* STREAM-START */
	if (r < 0 || (r = skip_event(c, &p, &ev)) < 0)
		goto out;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		goto out;
	}
	r = skip_event(c, &p, &ev); /* past DOCUMENT-START */
	if (r < 0)
		goto out;
	r = build(c, &p, &ev, 0, &root);
	if (r < 0)
		goto out;
	r = next_event(c, &p, &ev); /* DOCUMENT-END */
	if (r < 0 || (r = skip_event(c, &p, &ev)) < 0)
		goto out;
	if (ev.type == YAML_DOCUMENT_START_EVENT)
		r = ctp_y_fail_at(c, MARK_LINE(ev.start_mark),
				  MARK_COL(ev.start_mark),
				  "a second YAML document: the config is one "
				  "document");
	yaml_event_delete(&ev);
out:
	yaml_parser_delete(&p);
	if (r < 0) {
		ctp_ynode_free(root);
		return r;
	}
	*ret = root;
	return 0;
}

/* ---- Schema helpers ------------------------------------------------------ */

/* Within two edits (ctp_edit_distance, shared with every "did you mean"
 * of the core) and fewer than the name's length. */
const char *ctp_y_closest(const char *s, const char *const *names, size_t n)
{
	const char *best = NULL;
	size_t bd = 3; /* suggest only within two edits */

	for (size_t i = 0; i < n; i++) {
		size_t d = ctp_edit_distance(s, names[i]);

		if (d < bd && d < strlen(names[i])) {
			bd = d;
			best = names[i];
		}
	}
	return best;
}

/* Index of key in the NULL-terminated `keys`, or an error naming them. */
int ctp_y_key_index(struct ctp_yctx *c, const struct ctp_ynode *key,
		    const char *const *keys, const char *where)
{
	char list[512];
	const char *hint;
	struct ctp_yclip b;
	size_t n, o = 0;

	for (n = 0; keys[n]; n++)
		if (!strcmp(key->str, keys[n]))
			return (int)n;
	list[0] = '\0';
	for (size_t i = 0; i < n && o < sizeof(list); i++)
		o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s",
				      i ? ", " : "", keys[i]);
	hint = ctp_y_closest(key->str, keys, n);
	if (hint)
		return ctp_y_fail(
			c, key,
			"unknown key '%s' in %s (expected one of: %s); "
			"did you mean '%s'?",
			ctp_y_clip(&b, key->str), where, list, hint);
	return ctp_y_fail(c, key,
			  "unknown key '%s' in %s (expected one of: %s)",
			  ctp_y_clip(&b, key->str), where, list);
}

int ctp_y_collection(struct ctp_yctx *c, const struct ctp_ynode *v,
		     enum ctp_ynode_type t, const char *path, const char *of)
{
	struct ctp_yclip b;

	if (ctp_ynode_is_null(v))
		return 1;
	if (v->type == t)
		return 0;
	return ctp_y_fail(c, v, "'%s' must be %s%s, got %s", path,
			  t == CTP_Y_MAP ? "a mapping" : "a sequence", of,
			  ctp_y_got(&b, v));
}

int ctp_y_str(struct ctp_yctx *c, const char *path, const struct ctp_ynode *v,
	      char **out)
{
	struct ctp_yclip b;
	char *s;

	if (v->type != CTP_Y_SCALAR || !v->str[0])
		return ctp_y_fail(
			c, v, "'%s' must be a non-empty string, got %s", path,
			v->type == CTP_Y_SCALAR ? "''" : ctp_y_got(&b, v));
	s = strdup(v->str);
	if (!s)
		return -ENOMEM;
	free(*out);
	*out = s;
	return 0;
}

int ctp_y_bool(struct ctp_yctx *c, const char *path, const struct ctp_ynode *v,
	       int *out)
{
	static const char *const yes[] = {"true", "yes", "on"};
	static const char *const no[] = {"false", "no", "off"};
	struct ctp_yclip b;

	if (v->type == CTP_Y_SCALAR) {
		for (size_t i = 0; i < 3; i++) {
			if (!strcasecmp(v->str, yes[i])) {
				*out = 1;
				return 0;
			}
			if (!strcasecmp(v->str, no[i])) {
				*out = 0;
				return 0;
			}
		}
	}
	return ctp_y_fail(
		c, v,
		"'%s' must be a boolean (true/false, yes/no, on/off), "
		"got %s",
		path, ctp_y_got(&b, v));
}

/* Decimal digits only: no sign, no base prefix, no YAML 1.1 octal. Returns
 * the number of digits consumed, 0 for none, -ERANGE on overflow. */
int ctp_y_scan_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	int i;

	for (i = 0; s[i] >= '0' && s[i] <= '9'; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return i;
}

int ctp_y_uint(struct ctp_yctx *c, const char *path, const struct ctp_ynode *v,
	       uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t x = 0;
	struct ctp_yclip b;
	int k;

	if (v->type == CTP_Y_SCALAR) {
		k = ctp_y_scan_u64(v->str, &x);
		if (k > 0 && !v->str[k] && x >= min && x <= max) {
			*out = x;
			return 0;
		}
	}
	return ctp_y_fail(c, v,
			  "'%s' must be an integer in %" PRIu64 "..%" PRIu64
			  ", got %s",
			  path, min, max, ctp_y_got(&b, v));
}
