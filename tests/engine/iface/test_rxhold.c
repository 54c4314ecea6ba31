/* test_rxhold.c — hw_rxhold.h: a hold is granted only for bytes inside the
 * buffer being delivered through this context right now, only while the
 * transport's hold callback agrees, never after the delivery ends, never
 * through another reactor's context or none. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "hw_rxhold.h"

static int holds, releases, refuse;

static int fake_hold(void *ref)
{
	(void)ref;
	if (refuse)
		return -ENOBUFS;
	holds++;
	return 0;
}

static void fake_release(void *ref)
{
	(void)ref;
	releases++;
}

static uint8_t frame[1000];
static hw_rxhold_buf buf = { .base = frame + 100, .len = 800, .ref = &buf, .hold = fake_hold,
			     .release = fake_release };

static void test_rxhold(void **st)
{
	(void)st;
	void (*rel)(void *) = NULL;
	hw_rxhold_ctx ctx = { 0 }, other = { 0 };
	assert_null(hw_rxhold_take(&ctx, frame + 200, 10, &rel)); /* no delivery */
	hw_rxhold_enter(&ctx, &buf);
	assert_ptr_equal(hw_rxhold_take(&ctx, frame + 100, 800, &rel), &buf); /* all of it */
	assert_ptr_equal(rel, fake_release);
	assert_ptr_equal(hw_rxhold_take(&ctx, frame + 899, 1, &rel), &buf);   /* last byte */
	assert_null(hw_rxhold_take(&ctx, frame + 99, 10, &rel));              /* starts before */
	assert_null(hw_rxhold_take(&ctx, frame + 850, 51, &rel));             /* ends after */
	assert_ptr_equal(hw_rxhold_take(&ctx, frame + 900, 0, &rel), &buf);   /* empty, at the end */
	assert_null(hw_rxhold_take(&ctx, frame + 100, 801, &rel));            /* longer */
	assert_null(hw_rxhold_take(&ctx, frame + 100, SIZE_MAX, &rel));       /* overflow */
	assert_null(hw_rxhold_take(&ctx, NULL, 1, &rel));
	assert_int_equal(holds, 3);
	/* another reactor's context, or none: not delivering there */
	assert_null(hw_rxhold_take(&other, frame + 200, 10, &rel));
	assert_null(hw_rxhold_take(NULL, frame + 200, 10, &rel));
	hw_rxhold_enter(NULL, &buf); /* no-ops */
	hw_rxhold_leave(NULL);
	refuse = 1; /* budget spent: copy */
	assert_null(hw_rxhold_take(&ctx, frame + 200, 10, &rel));
	refuse = 0;
	hw_rxhold_leave(&ctx);
	assert_null(hw_rxhold_take(&ctx, frame + 200, 10, &rel)); /* delivery over */
	assert_int_equal(holds, 3);
	assert_int_equal(releases, 0); /* take never releases; the holder does */
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_rxhold) };
	return cmocka_run_group_tests_name("rxhold", tests, NULL, NULL);
}
