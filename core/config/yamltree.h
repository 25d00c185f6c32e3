/* SPDX-License-Identifier: MIT */
/*
 * The YAML the core reads (collectors.yaml, view files) as a small tree
 * with positions, and the schema helpers every reader of it shares, so an
 * error is always one line "FILE:LINE:COL: message" and the same mistake
 * gets the same words in every file. Private to the core.
 */
#ifndef CTP_CORE_YAMLTREE_H
#define CTP_CORE_YAMLTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ctp_ynode_type { CTP_Y_SCALAR, CTP_Y_SEQ, CTP_Y_MAP };

struct ctp_ynode {
	enum ctp_ynode_type type;
	bool plain;		 /* scalar written without quotes */
	unsigned line, col;	 /* 1-based */
	char *str;		 /* scalar text */
	struct ctp_ynode **kids; /* sequence items; mapping key, value, ... */
	size_t n, cap;
};

/* One file being read: its name for messages, its bytes, where the one
 * error message goes. */
struct ctp_yctx {
	const char *name;
	const char *buf;
	size_t len;
	char *err;
	size_t errlen;
	void *user; /* the schema pass's own (e.g. what it has read so far) */
};

/*
 * The document's root (NULL for a stream with no document). Refuses
 * aliases, anchors, tags, nesting over 32 levels, duplicate or non-scalar
 * mapping keys, NUL bytes and a second document, each with its position.
 * Returns 0 or a negative errno with the message in c->err.
 */
int ctp_yaml_parse(struct ctp_yctx *c, struct ctp_ynode **ret);
void ctp_ynode_free(struct ctp_ynode *n);
/* YAML 1.1 null (empty, ~, null), meaningful where a container is
 * expected: `key:` with nothing under it reads as an empty map. */
bool ctp_ynode_is_null(const struct ctp_ynode *n);

/* The message "NAME:LINE:COL: ..." (one line) in c->err; -EINVAL. */
int ctp_y_fail_at(struct ctp_yctx *c, unsigned line, unsigned col,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int ctp_y_fail(struct ctp_yctx *c, const struct ctp_ynode *at, const char *fmt,
	       ...) __attribute__((format(printf, 3, 4)));
/* "NAME: ..." for what has no position. */
void ctp_y_fail_file(struct ctp_yctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A user string made fit for a message: escaped and cut short. */
#define CTP_Y_CLIP_MAX 60
struct ctp_yclip {
	char s[CTP_Y_CLIP_MAX * 4 + 8];
};
const char *ctp_y_clip(struct ctp_yclip *b, const char *s);
/* "'value'" for a scalar, "a mapping" / "a sequence" otherwise. */
const char *ctp_y_got(struct ctp_yclip *b, const struct ctp_ynode *n);
/* A dotted key path for messages ("hosts[0].plugins.x"), cut short. */
void ctp_y_path(char *dst, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The name of `names` within two edits of s, for "did you mean", or NULL. */
const char *ctp_y_closest(const char *s, const char *const *names, size_t n);
/* Index of key in the NULL-terminated `keys`, or -EINVAL with "unknown key
 * 'k' in WHERE (expected one of: ...); did you mean '...'?". */
int ctp_y_key_index(struct ctp_yctx *c, const struct ctp_ynode *key,
		    const char *const *keys, const char *where);

/* A mapping or sequence (t) under path: 1 for a null v (nothing there), 0
 * for a node of type t, else the error "'PATH' must be a mapping|sequence
 * OF, got ..." (OF: " of plugin names", " (proc, sys, cgroup)" or ""). */
int ctp_y_collection(struct ctp_yctx *c, const struct ctp_ynode *v,
		     enum ctp_ynode_type t, const char *path, const char *of);

/* Scalars by type, each failing with "'PATH' must be ..., got ...". */
int ctp_y_str(struct ctp_yctx *c, const char *path, const struct ctp_ynode *v,
	      char **out); /* non-empty; replaces and frees *out */
int ctp_y_bool(struct ctp_yctx *c, const char *path, const struct ctp_ynode *v,
	       int *out);
int ctp_y_uint(struct ctp_yctx *c, const char *path, const struct ctp_ynode *v,
	       uint64_t min, uint64_t max, uint64_t *out);
/* Decimal digits only: no sign, no base prefix, no YAML 1.1 octal. Returns
 * the number of digits consumed, 0 for none, -ERANGE on overflow. */
int ctp_y_scan_u64(const char *s, uint64_t *out);

#endif
