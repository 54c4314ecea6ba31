/* fuzz_repl_msg.c — libFuzzer target: hostile decoded messages into a
 * replica manager. The wire decoder (engine/proto) bounds-checks frames, but
 * the values inside a well-framed message are the sender's: offsets,
 * epochs, id-set sizes, records, correlation ids. Each input builds a small
 * cluster view (node 1 leads partition 0 with replicas 1,2,3 and follows
 * node 2 for partition 1), then delivers a sequence of messages whose type
 * and fields come from the input, polling after each. The rm must answer
 * with errors or drop, never crash or trip an invariant (HW_ASSERT).
 *
 * Input: repeated [type byte][field bytes][len byte][payload]. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hw_batch.h"
#include "hw_logging.h"
#include "hw_memstore.h"
#include "hw_rm.h"

static int64_t g_now_ns;
static int64_t fz_now(hw_clock *c)
{
	(void)c;
	return g_now_ns;
}
static hw_clock g_clock = { fz_now };
static int fz_send(hw_net *n, const hw_msg *m)
{
	(void)n;
	(void)m;
	return 0;
}
static hw_net g_net = { fz_send };

static int open_store(void *ctx, hw_tp tp, const char *topic, int is_new, hw_store **out)
{
	(void)ctx;
	(void)tp;
	(void)topic;
	(void)is_new;
	return hw_memstore_create(0, out);
}

typedef struct rd {
	const uint8_t *p;
	size_t n;
} rd;

static uint64_t take(rd *r, size_t bytes)
{
	uint64_t v = 0;
	for (size_t i = 0; i < bytes; i++) {
		v = (v << 8) | (r->n ? *r->p : 0);
		if (r->n) {
			r->p++;
			r->n--;
		}
	}
	return v;
}

static const uint8_t *take_buf(rd *r, size_t *len)
{
	size_t l = (size_t)take(r, 2);
	if (l > r->n)
		l = r->n;
	const uint8_t *b = r->p;
	r->p += l;
	r->n -= l;
	*len = l;
	return b;
}

static void state(hw_rm *rm, uint32_t part, int leader, int le, int pe)
{
	hw_msg m;
	memset(&m, 0, sizeof(m));
	m.type = HW_MSG_PARTITION_STATE;
	m.src = 100;
	m.dst = 1;
	hw_partition_state *s = &m.u.pstate;
	s->tp.topic_id = 1;
	s->tp.partition = part;
	s->leader = leader;
	s->leader_epoch = le;
	s->partition_epoch = pe;
	s->replicas.n = s->isr.n = 3;
	for (int i = 0; i < 3; i++)
		s->replicas.id[i] = s->isr.id[i] = i + 1;
	s->min_insync_replicas = 2;
	hw_rm_on_msg(rm, &m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	if (!init) {
		hw_logging_configure("error");
		init = 1;
	}
	g_now_ns = 0;
	hw_rm_config c;
	hw_rm_config_defaults(&c);
	c.node_id = 1;
	c.controller_id = 100;
	c.open_store = open_store;
	hw_rm *rm;
	if (hw_rm_create(&c, &g_clock, &g_net, &rm))
		return 0;
	state(rm, 0, 1, 3, 5);
	state(rm, 1, 2, 4, 6);
	/* a committed record so the paths have data */
	uint8_t b[256];
	hw_record_in rec = { .value = "v", .value_len = 1 };
	hw_batch_spec sp;
	hw_batch_spec_init(&sp);
	ssize_t bl = hw_batch_build(b, sizeof(b), &sp, &rec, 1);
	hw_msg pm;
	memset(&pm, 0, sizeof(pm));
	pm.type = HW_MSG_PRODUCE;
	pm.src = 1000;
	pm.dst = 1;
	pm.u.produce.acks = 1;
	pm.u.produce.tp.topic_id = 1;
	pm.u.produce.records = b;
	pm.u.produce.records_len = (uint32_t)bl;
	hw_rm_on_msg(rm, &pm);

	rd r = { data, size };
	hw_fetch_part fparts[8];
	hw_fetch_resp_part rparts[4];
	hw_ofe_part oparts[4];
	hw_ofe_resp_part orparts[4];
	for (int steps = 0; r.n && steps < 32; steps++) {
		hw_msg m;
		memset(&m, 0, sizeof(m));
		int t = (int)(take(&r, 1) % 7);
		m.src = (int32_t)(take(&r, 1) % 4);
		m.dst = 1;
		m.correlation_id = (uint32_t)take(&r, 1);
		size_t len;
		const uint8_t *buf;
		switch (t) {
		case 0:
			m.type = HW_MSG_PRODUCE;
			m.u.produce.acks = (int16_t)((int)take(&r, 1) - 128);
			m.u.produce.timeout_ms = (int32_t)take(&r, 2);
			m.u.produce.tp.topic_id = (uint32_t)take(&r, 1) % 2;
			m.u.produce.tp.partition = (uint32_t)take(&r, 1) % 3;
			buf = take_buf(&r, &len);
			m.u.produce.records = buf;
			m.u.produce.records_len = (uint32_t)len;
			break;
		case 1: {
			m.type = HW_MSG_FETCH;
			m.u.fetch.replica_id = (int32_t)((int)take(&r, 1) % 5 - 1);
			m.u.fetch.max_wait_ms = (int32_t)take(&r, 2) - 100;
			m.u.fetch.min_bytes = (int32_t)take(&r, 2);
			m.u.fetch.max_bytes = (int32_t)take(&r, 4);
			uint16_t n = (uint16_t)(take(&r, 1) % 9);
			for (uint16_t i = 0; i < n; i++) {
				fparts[i].tp.topic_id = 1;
				fparts[i].tp.partition = (uint32_t)take(&r, 1) % 3;
				fparts[i].fetch_offset = (int64_t)take(&r, 8);
				fparts[i].current_leader_epoch = (int32_t)take(&r, 4);
				fparts[i].last_fetched_epoch = (int32_t)take(&r, 4);
				fparts[i].log_start_offset = 0;
				fparts[i].partition_max_bytes = (int32_t)take(&r, 4);
			}
			m.u.fetch.n_parts = n;
			m.u.fetch.parts = fparts;
			break;
		}
		case 2: {
			m.type = HW_MSG_FETCH_RESP;
			uint16_t n = (uint16_t)(take(&r, 1) % 5);
			for (uint16_t i = 0; i < n; i++) {
				memset(&rparts[i], 0, sizeof(rparts[i]));
				rparts[i].tp.topic_id = 1;
				rparts[i].tp.partition = (uint32_t)take(&r, 1) % 3;
				rparts[i].error = (int16_t)(take(&r, 1) % 80);
				rparts[i].high_watermark = (int64_t)take(&r, 8);
				rparts[i].log_start_offset = (int64_t)take(&r, 8);
				rparts[i].diverging_epoch = (int32_t)take(&r, 4);
				rparts[i].diverging_end_offset = (int64_t)take(&r, 8);
				rparts[i].records = take_buf(&r, &len);
				rparts[i].records_len = (uint32_t)len;
			}
			m.u.fetch_resp.n_parts = n;
			m.u.fetch_resp.parts = rparts;
			break;
		}
		case 3: {
			m.type = HW_MSG_OFFSETS_FOR_EPOCH;
			uint16_t n = (uint16_t)(take(&r, 1) % 5);
			for (uint16_t i = 0; i < n; i++) {
				oparts[i].tp.topic_id = 1;
				oparts[i].tp.partition = (uint32_t)take(&r, 1) % 3;
				oparts[i].current_leader_epoch = (int32_t)take(&r, 4);
				oparts[i].leader_epoch = (int32_t)take(&r, 4);
			}
			m.u.ofe.n_parts = n;
			m.u.ofe.parts = oparts;
			break;
		}
		case 4: {
			m.type = HW_MSG_OFFSETS_FOR_EPOCH_RESP;
			uint16_t n = (uint16_t)(take(&r, 1) % 5);
			for (uint16_t i = 0; i < n; i++) {
				orparts[i].tp.topic_id = 1;
				orparts[i].tp.partition = (uint32_t)take(&r, 1) % 3;
				orparts[i].error = (int16_t)(take(&r, 1) % 80);
				orparts[i].leader_epoch = (int32_t)take(&r, 4);
				orparts[i].end_offset = (int64_t)take(&r, 8);
			}
			m.u.ofe_resp.n_parts = n;
			m.u.ofe_resp.parts = orparts;
			break;
		}
		case 5: {
			m.type = HW_MSG_ALTER_PARTITION_RESP;
			hw_alter_partition_resp *a = &m.u.alter_resp;
			a->error = (int16_t)(take(&r, 1) % 110);
			a->tp.topic_id = 1;
			a->tp.partition = (uint32_t)take(&r, 1) % 3;
			a->leader_id = (int32_t)take(&r, 1);
			a->leader_epoch = (int32_t)take(&r, 4);
			a->partition_epoch = (int32_t)take(&r, 4);
			a->isr.n = (uint8_t)take(&r, 1);
			for (int i = 0; i < HW_MAX_RF; i++)
				a->isr.id[i] = (int32_t)(take(&r, 1) % 5);
			break;
		}
		default: {
			m.type = HW_MSG_PARTITION_STATE;
			hw_partition_state *s = &m.u.pstate;
			s->tp.topic_id = 1;
			s->tp.partition = (uint32_t)take(&r, 1) % 3;
			s->leader = (int32_t)((int)take(&r, 1) % 5 - 1);
			s->leader_epoch = (int32_t)take(&r, 4);
			s->partition_epoch = (int32_t)take(&r, 4);
			s->replicas.n = (uint8_t)take(&r, 1);
			s->isr.n = (uint8_t)take(&r, 1);
			s->elr.n = (uint8_t)(take(&r, 1) % 3);
			for (int i = 0; i < HW_MAX_RF; i++) {
				s->replicas.id[i] = (int32_t)(take(&r, 1) % 5);
				s->isr.id[i] = (int32_t)(take(&r, 1) % 5);
			}
			s->min_insync_replicas = (int16_t)take(&r, 1);
			memset(s->topic, 'x', sizeof(s->topic)); /* not NUL-terminated */
			break;
		}
		}
		hw_rm_on_msg(rm, &m);
		g_now_ns += (int64_t)(take(&r, 1) * 20) * 1000000LL;
		hw_rm_poll(rm);
	}
	hw_rm_destroy(rm);
	return 0;
}
