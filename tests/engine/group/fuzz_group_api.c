/* fuzz_group_api.c — libFuzzer target over the group APIs' request
 * decoders and the coordinator behind them (engine/group/hw_group_api.h,
 * lib/kafka/hw_kafka_group.h). The input is a sequence of requests
 *   u8 api selector, u8 version, u16 body length, body
 * (version bit 7 selects DescribeGroups or ListGroups)
 * run on one coordinator (4 offsets partitions, in-memory log) with the
 * virtual clock advancing between requests, so hostile bytes reach every
 * state, not only the decoders. For every request:
 *   - hw_group_api_handle returns 0, 1 (pending) or a negative errno; a
 *     version outside the API's range is -EPROTONOSUPPORT;
 *   - an immediate answer leaves the writer without error;
 *   - every pending request is completed exactly once (at the latest when
 *     the coordinator is freed), never twice.
 * Afterwards the offsets partitions are replayed by a second coordinator
 * (the records the first one wrote must rebuild without a counted drop). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hw_err.h"
#include "hw_group.h"
#include "hw_group_api.h"
#include "hw_group_memlog.h"

typedef struct vclock { hw_clock c; int64_t ns; } vclock;
static int64_t vnow(hw_clock *c) { return ((vclock *)c)->ns; }

typedef struct preq {
	hw_kw w;
	int completed;
	int pending;
} preq;

#define MAXREQ 64
static preq reqs[MAXREQ];

static hw_kw *pw(void *ctx, void *req) { (void)ctx; return &((preq *)req)->w; }
static void done(void *ctx, void *req)
{
	(void)ctx;
	preq *q = req;
	if (!q->pending || q->completed) abort(); /* completed twice or never pending */
	q->completed = 1;
}
static int coord(void *ctx, int32_t p, int32_t *node, char *host, size_t cap, int32_t *port)
{
	(void)ctx;
	if (p == 3) return -ENOENT;
	*node = p; *port = 9092;
	strncpy(host, "127.0.0.1", cap - 1);
	host[cap - 1] = 0;
	return 0;
}
static void ensure(void *ctx) { (void)ctx; }

static const int16_t keys[] = { 10, 11, 12, 13, 14, 8, 9, 3, 15, 16 };
/* HW_KG_*_MAX of each key (lib/kafka/hw_kafka_group.h), flexible versions included */
static const int16_t maxv[] = { 4, 9, 4, 5, 5, 8, 8, -1, 5, 4 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	vclock clk = { .c = { .now_ns = vnow }, .ns = 1000000000LL };
	hw_gmemlog *ml;
	if (hw_gmemlog_create(4, &ml) != 0) abort();
	hw_gcoord_cfg cfg;
	hw_gcoord_cfg_init(&cfg);
	cfg.offsets_partitions = 4;
	cfg.min_session_timeout_ms = 0;
	cfg.initial_rebalance_delay_ms = 100;
	hw_gcoord *co;
	if (hw_gcoord_create(&cfg, &clk.c, hw_gmemlog_log(ml), &co) != 0) abort();
	for (int p = 0; p < 4; p++) hw_gcoord_load(co, p);
	hw_group_api_ops ops = { .pending_writer = pw, .complete = done, .coordinator = coord,
				 .ensure_offsets_topic = ensure };
	hw_group_api *api;
	if (hw_group_api_create(co, &ops, NULL, &api) != 0) abort();
	memset(reqs, 0, sizeof reqs);
	int n = 0;
	size_t off = 0;
	while (off + 4 <= size && n < MAXREQ) {
		uint8_t sel = data[off], ver = data[off + 1];
		size_t len = (size_t)data[off + 2] << 8 | data[off + 3];
		off += 4;
		if (len > size - off) len = size - off;
		/* api: sel bits 0-2 (keys 0..7, as the first seeds), or with the
		 * version's top bit DescribeGroups / ListGroups (sel bit 0) */
		unsigned ki = (ver & 0x80) ? 8u + (sel & 1u) : sel & 7u;
		int16_t key = keys[ki], v = (int16_t)((ver & 0x7f) % 11); /* one above JoinGroup's 9 */
		preq *q = &reqs[n++];
		hw_kw_init(&q->w, 0);
		hw_kr r;
		hw_kr_init(&r, data + off, len);
		hw_kafka_req_hdr h = { .api_key = key, .api_version = v, .client_id = { "fz", 2 } };
		int rc = hw_group_api_handle(api, q, &h, &r, &q->w);
		if (rc == 1) q->pending = 1;
		else if (rc == 0) { if (q->w.err) abort(); }
		else if (rc > 1) abort();
		if (rc < 0 && maxv[ki] >= 0 && v > maxv[ki] && rc != -EPROTONOSUPPORT) abort();
		if (maxv[ki] < 0 && rc != -ENOTSUP) abort();
		off += len;
		clk.ns += (int64_t)(sel >> 3) * 250 * 1000000LL; /* 0..7.75 s */
		hw_gcoord_tick(co);
	}
	clk.ns += 3600LL * 1000 * 1000000LL;
	hw_gcoord_tick(co);
	hw_gcoord_free(co); /* answers what is still waiting */
	hw_group_api_free(api);
	for (int i = 0; i < n; i++) {
		if (reqs[i].pending && !reqs[i].completed) abort();
		hw_kw_free(&reqs[i].w);
	}
	/* what was written rebuilds cleanly */
	if (hw_gcoord_create(&cfg, &clk.c, hw_gmemlog_log(ml), &co) != 0) abort();
	for (int p = 0; p < 4; p++)
		if (hw_gcoord_load(co, p) != 0) abort();
	const hw_gstats *st = hw_gcoord_stats(co);
	for (int d = 0; d < HW_GD__COUNT; d++)
		if (st->drops[d]) abort();
	hw_gcoord_free(co);
	hw_gmemlog_free(ml);
	return 0;
}
