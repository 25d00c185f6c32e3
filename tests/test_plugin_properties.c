/* SPDX-License-Identifier: MIT */
/*
 * Properties every shipped plugin's descriptor must have, checked on the
 * built .so files rather than mirrored table by table: each static field
 * passes the core's own ctp_field_desc_check (name syntax, kind, rule and
 * type fit), has a one-line help, a unit that fits its kind, and a name
 * that is unique across all plugins and shares its plugin's prefix; each
 * declared option has help, a type the core knows and a default that its
 * own choices or range accept; declared counters and files are well
 * formed.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctprof/plugin-util.h"
#include "model.h"

#define MAX_PLUGINS 32
#define MAX_NAMES   1024

static struct {
	void *dl[MAX_PLUGINS];
	const struct ctp_plugin *p[MAX_PLUGINS];
	size_t n;
} shipped;

/* The plugins the build ships (CTP_TEST_PLUGIN_DIR/<name>.so). */
static int load_all(void **state)
{
	DIR *d = opendir(CTP_TEST_PLUGIN_DIR);
	struct dirent *e;

	(void)state;
	if (!d)
		return -1;
	while ((e = readdir(d)) && shipped.n < MAX_PLUGINS) {
		char path[4096];
		size_t n = strlen(e->d_name);

		if (n < 4 || strcmp(e->d_name + n - 3, ".so"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", CTP_TEST_PLUGIN_DIR,
			 e->d_name);
		void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!dl) {
			fprintf(stderr, "%s\n", dlerror());
			closedir(d);
			return -1;
		}
		shipped.dl[shipped.n] = dl;
		shipped.p[shipped.n++] = dlsym(dl, CTP_PLUGIN_SYMBOL);
	}
	closedir(d);
	return shipped.n >= 10 ? 0 : -1; /* the ten of docs/PLUGINS.md */
}

static int unload_all(void **state)
{
	(void)state;
	for (size_t i = 0; i < shipped.n; i++)
		dlclose(shipped.dl[i]);
	return 0;
}

/* Units a kind can carry: labels and cpu sets have none; cumulative
 * counters count, time or bytes (never a percentage). */
static bool unit_fits(const struct ctp_field_desc *f)
{
	switch (f->kind) {
	case CTP_KIND_CATEGORICAL:
	case CTP_KIND_CPUSET:
		return f->unit == CTP_UNIT_NONE;
	case CTP_KIND_COUNTER:
		return f->unit != CTP_UNIT_CENTIPCT && f->unit != CTP_UNIT_NONE;
	default:
		return true;
	}
}

static size_t prefix_len(const char *name)
{
	const char *dot = strchr(name, '.');
	return dot ? (size_t)(dot - name) : strlen(name);
}

static void fields_have_properties(void **state)
{
	static const char *names[MAX_NAMES];
	size_t nn = 0;

	(void)state;
	for (size_t i = 0; i < shipped.n; i++) {
		const struct ctp_plugin *p = shipped.p[i];
		assert_non_null(p);
		if (p->n_fields)
			assert_int_equal(p->field_desc_size,
					 sizeof(struct ctp_field_desc));
		for (uint32_t j = 0; j < p->n_fields; j++) {
			const struct ctp_field_desc *f = &p->fields[j];
			const char *why = NULL;

			if (ctp_field_desc_check(f, &why) < 0)
				fail_msg("%s: %s: %s", p->name, f->name, why);
			if (!f->help || !*f->help || strchr(f->help, '\n'))
				fail_msg("%s: %s: help missing or not one line",
					 p->name, f->name);
			if (!unit_fits(f))
				fail_msg("%s: %s: unit %u does not fit kind %u",
					 p->name, f->name, f->unit, f->kind);
			/* One prefix per plugin ("procfs." for procfs-stat). */
			if (prefix_len(f->name) !=
				    prefix_len(p->fields[0].name) ||
			    strncmp(f->name, p->fields[0].name,
				    prefix_len(f->name)))
				fail_msg("%s: %s: prefix differs from %s",
					 p->name, f->name, p->fields[0].name);
			for (size_t k = 0; k < nn; k++)
				if (!strcmp(names[k], f->name))
					fail_msg("%s: field %s declared twice",
						 p->name, f->name);
			assert_true(nn < MAX_NAMES);
			names[nn++] = f->name;
		}
	}
	assert_true(nn > 100);
}

/* Whether option o's default is a value the option accepts. */
static bool default_ok(const struct ctp_option_desc *o)
{
	uint64_t v;

	if (!o->def)
		return false;
	switch (o->type) {
	case CTP_OPT_STRING:
		if (!o->choices)
			return true;
		for (const char *const *c = o->choices; *c; c++)
			if (!strcmp(*c, o->def))
				return true;
		return false;
	case CTP_OPT_U64:
		return ctp_parse_u64_str(o->def, &v) == 0 && v >= o->min &&
		       (!o->max || v <= o->max);
	case CTP_OPT_BOOL:
		return !strcmp(o->def, "true") || !strcmp(o->def, "false");
	case CTP_OPT_BYTES:
		return true; /* suffixes: the config parser's own tests */
	default:
		return false;
	}
}

static void options_have_properties(void **state)
{
	(void)state;
	for (size_t i = 0; i < shipped.n; i++) {
		const struct ctp_plugin *p = shipped.p[i];
		/* Every shipped plugin declares its options (none is fine). */
		assert_true(p->flags & CTP_PLUGIN_OPTIONS);
		for (uint32_t j = 0; j < p->n_options; j++) {
			const struct ctp_option_desc *o = &p->options[j];

			assert_int_equal(p->option_desc_size, sizeof(*o));
			if (!o->help || !*o->help || strchr(o->help, '\n'))
				fail_msg("%s: option %s: no one-line help",
					 p->name, o->name);
			if (!default_ok(o))
				fail_msg("%s: option %s: default '%s' is not "
					 "a value it takes",
					 p->name, o->name,
					 o->def ? o->def : "(none)");
			for (uint32_t k = 0; k < j; k++)
				assert_string_not_equal(p->options[k].name,
							o->name);
		}
	}
}

static bool word_ok(const char *s)
{
	size_t n = strlen(s);
	return n > 0 && n <= 64 &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

static void counters_and_files_are_well_formed(void **state)
{
	(void)state;
	for (size_t i = 0; i < shipped.n; i++) {
		const struct ctp_plugin *p = shipped.p[i];
		const char *const *lists[] = {p->thread_files,
					      p->process_files};

		for (uint32_t j = 0; j < p->n_counters; j++) {
			if (!word_ok(p->counters[j]))
				fail_msg("%s: counter '%s'", p->name,
					 p->counters[j]);
			for (uint32_t k = 0; k < j; k++)
				assert_string_not_equal(p->counters[k],
							p->counters[j]);
		}
		for (size_t l = 0; l < 2; l++)
			for (const char *const *f = lists[l]; f && *f; f++) {
				const char *nm = **f == '?' ? *f + 1 : *f;
				if (!*nm || strchr(nm, '/'))
					fail_msg("%s: file '%s'", p->name, *f);
			}
		/* A plugin that is called per task says how it shares. */
		if (p->thread || p->process)
			assert_true(p->flags & CTP_PLUGIN_MT_SAFE);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fields_have_properties),
		cmocka_unit_test(options_have_properties),
		cmocka_unit_test(counters_and_files_are_well_formed),
	};
	return cmocka_run_group_tests(tests, load_all, unload_all);
}
