/* SPDX-License-Identifier: MIT */
/* `ctprof-core dump`: a whole snapshot as JSON on stdout. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctprof/plugin-util.h"
#include "cli.h"
#include "readcli.h"
#include "reader.h"
#include "table.h"

/* An array is printed on one line when nothing in it is a map. */
static bool flat(const msgpack_object *o)
{
	if (o->type == MSGPACK_OBJECT_MAP)
		return false;
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return true;
	for (uint32_t i = 0; i < o->via.array.size; i++)
		if (!flat(&o->via.array.ptr[i]))
			return false;
	return true;
}

static void indent(FILE *f, int depth)
{
	putc('\n', f);
	for (int i = 0; i < depth; i++)
		fputs("  ", f);
}

static void json_obj(FILE *f, const msgpack_object *o, int depth, bool pretty);

static void json_key(FILE *f, const msgpack_object *k)
{
	if (k->type == MSGPACK_OBJECT_STR) {
		ctp_table_json_str(f, k->via.str.ptr, k->via.str.size);
		return;
	}
	/* JSON keys are strings: use the key's own JSON text. */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m) {
		fputs("\"?\"", f);
		return;
	}
	json_obj(m, k, 0, false);
	fclose(m);
	ctp_table_json_str(f, buf, len);
	free(buf);
}

static void json_obj(FILE *f, const msgpack_object *o, int depth, bool pretty)
{
	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		fputs("null", f);
		break;
	case MSGPACK_OBJECT_BOOLEAN:
		fputs(o->via.boolean ? "true" : "false", f);
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		fprintf(f, "%" PRIu64, o->via.u64);
		break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		fprintf(f, "%" PRId64, o->via.i64);
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		if (isfinite(o->via.f64))
			fprintf(f, "%.17g", o->via.f64);
		else
			fputs("null", f);
		break;
	case MSGPACK_OBJECT_STR:
		ctp_table_json_str(f, o->via.str.ptr, o->via.str.size);
		break;
	case MSGPACK_OBJECT_BIN:
		ctp_table_json_str(f, o->via.bin.ptr, o->via.bin.size);
		break;
	case MSGPACK_OBJECT_ARRAY: {
		bool inl = !pretty || flat(o);
		putc('[', f);
		for (uint32_t i = 0; i < o->via.array.size; i++) {
			if (i)
				fputs(inl ? ", " : ",", f);
			if (!inl)
				indent(f, depth + 1);
			json_obj(f, &o->via.array.ptr[i], depth + 1, pretty);
		}
		if (!inl && o->via.array.size)
			indent(f, depth);
		putc(']', f);
		break;
	}
	case MSGPACK_OBJECT_MAP:
		putc('{', f);
		for (uint32_t i = 0; i < o->via.map.size; i++) {
			if (i)
				fputs(pretty ? "," : ", ", f);
			if (pretty)
				indent(f, depth + 1);
			json_key(f, &o->via.map.ptr[i].key);
			fputs(": ", f);
			json_obj(f, &o->via.map.ptr[i].val, depth + 1, pretty);
		}
		if (pretty && o->via.map.size)
			indent(f, depth);
		putc('}', f);
		break;
	default:
		/* Extension types never appear in a valid snapshot. */
		fputs("null", f);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: ctprof-core dump FILE [--format json] [--config FILE] "
		"[--max-decompressed BYTES]\n"
		"Print the whole snapshot FILE (\"-\" for stdin) as JSON on "
		"stdout.\n"
		"Absent values are null; strings are JSON-escaped, bytes that "
		"are not\n"
		"well-formed UTF-8 become \\u00XX of the byte.\n"
		"\n"
		"  --format json             the output format (the only one)\n"
		"  -c, --config FILE         take max_decompressed_bytes from "
		"FILE (default:\n"
		"                            the default config when it "
		"exists)\n"
		"  --max-decompressed BYTES  refuse snapshots that need more "
		"memory (K, M,\n"
		"                            G, KiB, MiB, GiB; overrides the "
		"config)\n"
		"  -h, --help                this help\n"
		"\n"
		"Exit status: 0 ok, 1 unreadable or corrupt snapshot, 2 usage "
		"error.\n");
}

/* dump's own options (ctp_readopts_own_fn). */
static int dump_option(void *ctx, int c, const char *arg)
{
	(void)ctx;
	switch (c) {
	case 'f':
		if (strcmp(arg, "json") == 0)
			return -1;
		fprintf(stderr,
			"ctprof-core dump: unknown format '%s' (json is the "
			"only one)\n",
			arg);
		return CTP_EXIT_USAGE;
	case 'h':
		usage(stdout);
		return CTP_EXIT_OK;
	default:
		return ctp_readcli_try_help("dump");
	}
}

int ctp_cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{"format", required_argument, NULL, 'f'},
		{"max-decompressed", required_argument, NULL, CTP_READOPT_CAP},
		{"config", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	static const char *const operands[] = {"FILE"};
	struct ctp_readopts r = {0};
	int rc = ctp_readopts_parse("dump", &r, argc, argv, "hf:c:", opts,
				    dump_option, NULL);
	if (rc >= 0)
		return rc;
	rc = ctp_readopts_finish("dump", &r, argc, argv, 1, operands);
	ctp_readopts_done(&r);
	if (rc >= 0)
		return rc;
	uint64_t cap = r.cap;

	char err[512];
	struct ctp_snap *snap;
	if (ctp_snap_open(argv[optind], cap, &snap, err, sizeof(err)) < 0) {
		fprintf(stderr, "ctprof-core dump: %s\n", err);
		return CTP_EXIT_FAILURE;
	}
	json_obj(stdout, ctp_snap_root(snap), 0, true);
	putc('\n', stdout);
	ctp_snap_free(snap);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "ctprof-core dump: writing output: %s\n",
			strerror(errno));
		return CTP_EXIT_FAILURE;
	}
	return CTP_EXIT_OK;
}
