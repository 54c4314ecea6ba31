/* test_rxhold.c — hw_rxhold.h: a hold is granted only for bytes inside the
 * buffer being delivered on this thread right now, only while the
 * transport's hold callback agrees, never after the delivery ends, never
 * on another thread. */
#include <errno.h>
#include <pthread.h>
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

static void *other_thread(void *arg)
{
	(void)arg;
	void (*rel)(void *) = NULL;
	return hw_rxhold_take(frame + 200, 10, &rel); /* not delivering here */
}

static void test_rxhold(void **st)
{
	(void)st;
	void (*rel)(void *) = NULL;
	assert_null(hw_rxhold_take(frame + 200, 10, &rel)); /* no delivery */
	hw_rxhold_enter(&buf);
	assert_ptr_equal(hw_rxhold_take(frame + 100, 800, &rel), &buf); /* all of it */
	assert_ptr_equal(rel, fake_release);
	assert_ptr_equal(hw_rxhold_take(frame + 899, 1, &rel), &buf);   /* last byte */
	assert_null(hw_rxhold_take(frame + 99, 10, &rel));              /* starts before */
	assert_null(hw_rxhold_take(frame + 850, 51, &rel));             /* ends after */
	assert_ptr_equal(hw_rxhold_take(frame + 900, 0, &rel), &buf);   /* empty, at the end */
	assert_null(hw_rxhold_take(frame + 100, 801, &rel));            /* longer */
	assert_null(hw_rxhold_take(frame + 100, SIZE_MAX, &rel));       /* overflow */
	assert_null(hw_rxhold_take(NULL, 1, &rel));
	assert_int_equal(holds, 3);
	pthread_t t;
	void *r = (void *)1;
	assert_int_equal(pthread_create(&t, NULL, other_thread, NULL), 0);
	assert_int_equal(pthread_join(t, &r), 0);
	assert_null(r);
	refuse = 1; /* budget spent: copy */
	assert_null(hw_rxhold_take(frame + 200, 10, &rel));
	refuse = 0;
	hw_rxhold_leave();
	assert_null(hw_rxhold_take(frame + 200, 10, &rel)); /* delivery over */
	assert_int_equal(holds, 3);
	assert_int_equal(releases, 0); /* take never releases; the holder does */
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_rxhold) };
	return cmocka_run_group_tests_name("rxhold", tests, NULL, NULL);
}
