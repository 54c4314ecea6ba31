/* test_netconf.c — endpoint strings (drivers/net/common/hw_netconf.h):
 * the DPDK neighbour form with queues= (a peer's reactor count), the
 * port-less form brokers register ("dpdk:ip=..,udp=BASE,queues=N"), what is
 * refused, and format/parse round trips. Pure: no DPDK, no sockets. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "hw_netconf.h"

/* parse s, format it back, parse that: both parses agree field by field */
static void round_trip(const char *s, hw_endpoint *out)
{
	hw_endpoint b;
	char buf[256];
	assert_int_equal(hw_endpoint_parse(s, out), 0);
	int n = hw_endpoint_format(out, buf, sizeof buf);
	assert_true(n > 0);
	assert_int_equal((size_t)n, strlen(buf));
	assert_int_equal(hw_endpoint_parse(buf, &b), 0);
	assert_int_equal(b.kind, out->kind);
	assert_string_equal(b.port, out->port);
	assert_int_equal(b.has_mac, out->has_mac);
	assert_memory_equal(b.mac, out->mac, 6);
	assert_int_equal(b.ip, out->ip);
	assert_int_equal(b.udp_port, out->udp_port);
	assert_int_equal(b.queues, out->queues);
}

static void test_queues(void **st)
{
	(void)st;
	hw_endpoint ep;
	char buf[256];
	round_trip("dpdk:port=net_af_packet0,ip=10.202.0.2,udp=9092,queues=2", &ep);
	assert_int_equal(ep.kind, HW_EP_DPDK);
	assert_string_equal(ep.port, "net_af_packet0");
	assert_int_equal(ep.udp_port, 9092);
	assert_int_equal(ep.queues, 2);
	assert_int_equal(ep.ip, inet_addr("10.202.0.2"));
	hw_endpoint_format(&ep, buf, sizeof buf);
	assert_string_equal(buf, "dpdk:port=net_af_packet0,ip=10.202.0.2,udp=9092,queues=2");

	/* unset: 0 (the driver reads it as 1) */
	round_trip("dpdk:port=0", &ep);
	assert_int_equal(ep.queues, 0);
	assert_int_equal(ep.udp_port, 0);
	hw_endpoint_format(&ep, buf, sizeof buf);
	assert_string_equal(buf, "dpdk:port=0");

	/* the bounds: 1 and HW_EP_MAX_QUEUES; any key order */
	round_trip("dpdk:queues=1,port=p", &ep);
	assert_int_equal(ep.queues, 1);
	round_trip("dpdk:port=p,queues=255", &ep);
	assert_int_equal(ep.queues, HW_EP_MAX_QUEUES);
	/* the last reactor's port is 65535: still a port */
	round_trip("dpdk:port=p,udp=65534,queues=2", &ep);
	/* a repeated key: the last one counts */
	round_trip("dpdk:port=p,queues=3,queues=4", &ep);
	assert_int_equal(ep.queues, 4);
}

static void test_registration_form(void **st)
{
	(void)st;
	hw_endpoint ep;
	char buf[256];
	/* what a broker registers: no port (the receiver routes it through its
	 * own hiwater.dpdk.port) */
	round_trip("dpdk:ip=10.77.0.3,udp=9092,queues=2", &ep);
	assert_int_equal(ep.kind, HW_EP_DPDK);
	assert_string_equal(ep.port, "");
	assert_int_equal(ep.ip, inet_addr("10.77.0.3"));
	assert_int_equal(ep.queues, 2);
	hw_endpoint_format(&ep, buf, sizeof buf);
	assert_string_equal(buf, "dpdk:ip=10.77.0.3,udp=9092,queues=2");
	round_trip("dpdk:ip=10.77.0.3", &ep);
	hw_endpoint_format(&ep, buf, sizeof buf);
	assert_string_equal(buf, "dpdk:ip=10.77.0.3");
	/* every field, and the old memif form unchanged */
	round_trip("dpdk:port=net_memif_b2,mac=02:00:00:00:00:0a,ip=10.77.0.2,udp=9000,queues=8", &ep);
	hw_endpoint_format(&ep, buf, sizeof buf);
	assert_string_equal(buf, "dpdk:port=net_memif_b2,mac=02:00:00:00:00:0a,ip=10.77.0.2,udp=9000,queues=8");
	round_trip("dpdk:port=net_memif_b2,ip=10.77.0.2", &ep);
	hw_endpoint_format(&ep, buf, sizeof buf);
	assert_string_equal(buf, "dpdk:port=net_memif_b2,ip=10.77.0.2");
}

static void test_refused(void **st)
{
	(void)st;
	const char *bad[] = {
		"dpdk:port=p,queues=0",        /* a peer has at least one reactor */
		"dpdk:port=p,queues=256",      /* above HW_EP_MAX_QUEUES */
		"dpdk:port=p,queues=",         /* empty */
		"dpdk:port=p,queues=2x",       /* trailing junk */
		"dpdk:port=p,queues=-1",
		"dpdk:port=p,queues=99999999999999999999",
		"dpdk:port=p,queues",          /* no '=' */
		"dpdk:port=p,udp=65535,queues=2", /* reactor 1 would listen on 65536 */
		"dpdk:port=p,udp=65400,queues=255,ip=1.2.3.4", /* 65654 */
		"dpdk:queues=2",               /* neither port nor ip */
		"dpdk:udp=9092,queues=2",
		"dpdk:",
		"dpdk:ip=10.77.0.300,queues=2",
		"dpdk:port=p,Queues=2",        /* keys are case-sensitive */
	};
	hw_endpoint ep;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&ep, 0xa5, sizeof ep);
		if (hw_endpoint_parse(bad[i], &ep) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
	}
	/* an empty field between commas is skipped (strtok_r), as before */
	assert_int_equal(hw_endpoint_parse("dpdk:port=p,,queues=2", &ep), 0);
	assert_int_equal(ep.queues, 2);
	assert_int_equal(hw_endpoint_parse(NULL, &ep), -EINVAL);
	assert_int_equal(hw_endpoint_parse("dpdk:port=p", NULL), -EINVAL);
}

/* Format into every buffer size below the full length: -ENOSPC and a
 * NUL-terminated prefix, never an overrun. */
static void test_format_short_buffers(void **st)
{
	(void)st;
	hw_endpoint ep;
	assert_int_equal(hw_endpoint_parse("dpdk:port=net_af_packet0,mac=02:00:00:00:00:0a,ip=10.202.0.2,"
					   "udp=9092,queues=2", &ep), 0);
	char full[256];
	int n = hw_endpoint_format(&ep, full, sizeof full);
	assert_true(n > 0);
	for (int cap = 1; cap <= n; cap++) {
		char buf[256];
		memset(buf, 'Z', sizeof buf);
		assert_int_equal(hw_endpoint_format(&ep, buf, (size_t)cap), -ENOSPC);
		assert_int_equal(strlen(buf), (size_t)cap - 1);
		assert_memory_equal(buf, full, (size_t)cap - 1);
		assert_int_equal(buf[cap], 'Z');
	}
	char buf[256];
	assert_int_equal(hw_endpoint_format(&ep, buf, (size_t)n + 1), n);
	assert_int_equal(hw_endpoint_format(&ep, buf, 0), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queues),
		cmocka_unit_test(test_registration_form),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_format_short_buffers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
