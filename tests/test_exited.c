/* SPDX-License-Identifier: MIT */
/*
 * The exited table: the core's exited_begin / exited_end / exited_lost /
 * recording (core/capture/api.c) on a plugin loaded into a real engine
 * (tests/harness.h, tests/plugins/abi_exited.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"
#include "harness.h"

/* ---- The core's API ---------------------------------------------------- */

/* abi-exited loaded into a real engine; *c its context. */
static void load(struct hx_fx *fx, bool recording, struct ctp_ctx **c)
{
	hx_ctx_init(&fx->ctx, fx->p, NULL);
	fx->ctx.eng.recording = recording;
	assert_int_equal(hx_fx_load(fx, 0), 0);
	*c = &hx_info(&fx->ctx)->rt->ctx;
}

static void test_api(void **state)
{
	struct hx_fx *fx = *state;
	const struct ctp_api *core = &fx->ctx.core;
	struct ctp_record *rec = NULL;
	struct ctp_ctx *c;
	load(fx, true, &c);
	struct ctp_plugin_rt *rt = hx_info(&fx->ctx)->rt;
	int cpu = hx_field(&fx->ctx, "abi-exited.cpu");
	int seen = hx_field(&fx->ctx, "abi-exited.seen");

	assert_true(core->recording(c));
	/* Outside a host or finish callback. */
	assert_int_equal(core->exited_begin(c, 1, 1, "a", 1, 1, &rec), -EBUSY);
	rt->in_host_cb = true;
	assert_int_equal(core->exited_begin(c, 1, 1, NULL, 1, 1, &rec),
			 -EINVAL);
	assert_int_equal(core->exited_begin(c, 1, 1, "a", 1, 1, NULL), -EINVAL);
	assert_int_equal(hx_exited_rows(&fx->ctx), 0);
	assert_int_equal(core->exited_begin(c, 7, 6, "x", 1, 5, &rec), 0);
	assert_int_equal(core->set_u64(rec, cpu, 3), 0);
	assert_int_equal(core->set_u64(rec, seen, 3), -EINVAL);
	/* The next row takes the record over; the last row keeps its
	 * values. */
	assert_int_equal(core->exited_begin(c, 8, 6, "y", 1, 5, &rec), 0);
	assert_int_equal(core->set_u64(rec, cpu, 4), 0);
	rt->in_host_cb = false;
	ctp_api_exited_close(rt);
	assert_int_equal(core->set_u64(rec, cpu, 5), -EINVAL);
	uint64_t v;
	assert_true(hx_exited_u64(&fx->ctx, 0, "abi-exited.cpu", &v));
	assert_int_equal(v, 3);
	assert_true(hx_exited_u64(&fx->ctx, 1, "abi-exited.cpu", &v));
	assert_int_equal(v, 4);
	core->exited_lost(c, 4);
	core->exited_lost(c, 1);
	assert_int_equal(hx_exited_lost(&fx->ctx), 5);
	hx_fx_stop(fx);

	load(fx, false, &c);
	assert_false(fx->ctx.core.recording(c));
	hx_fx_stop(fx);
}

/* CTP_EXITED_MAX_ROWS rows, then -ENOSPC and no row more. */
static void test_api_cap(void **state)
{
	struct hx_fx *fx = *state;
	struct ctp_record *rec;
	struct ctp_ctx *c;
	load(fx, false, &c);
	hx_info(&fx->ctx)->rt->in_host_cb = true;
	for (uint32_t i = 0; i < CTP_EXITED_MAX_ROWS; i++)
		if (fx->ctx.core.exited_begin(c, i, 0, NULL, 0, 0, &rec) < 0)
			fail_msg("row %u refused", i);
	assert_int_equal(fx->ctx.core.exited_begin(c, 1, 0, NULL, 0, 0, &rec),
			 -ENOSPC);
	assert_int_equal(hx_exited_rows(&fx->ctx), CTP_EXITED_MAX_ROWS);
	hx_info(&fx->ctx)->rt->in_host_cb = false;
	hx_fx_stop(fx);
}

static int setup(void **state)
{
	return hx_fx_setup(state, CTP_ABI_PLUGIN_DIR "/abi-exited.so");
}

static int teardown(void **state)
{
	return hx_fx_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_api),
		cmocka_unit_test(test_api_cap),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
