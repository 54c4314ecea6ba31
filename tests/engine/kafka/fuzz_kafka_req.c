/* fuzz_kafka_req.c — libFuzzer target over the Kafka listener's request path
 * (engine/kafka/hw_ksrv.h, lib/kafka): the input is the byte stream of one
 * client connection, fed in two pieces (so frames straddle reads). A fake
 * broker answers every engine request at once (PRODUCE: offset 0; FETCH:
 * each partition with a 61-byte record batch; METADATA: one topic "t" of 2
 * partitions on broker 1 and every requested name; CREATE_TOPIC: created;
 * ALTER_CONFIG: done or INVALID_CONFIG).
 * The corpus covers every advertised version's layout, Produce and Fetch
 * down to v0 (old MessageSets, docs/kafka.md "Versions").
 * For every input:
 *   - nothing crashes, leaks or reads out of bounds (ASan), no hang;
 *   - hw_kconn_input returns 0 or a negative errno;
 *   - the output is a sequence of whole frames: int32 size >= 4, then a
 *     correlation id; correlation ids appear in the order of the requests
 *     that produced them (checked: the frames parse to the end exactly). */
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hw_admin_msg.h"
#include "hw_err.h"
#include "hw_ksrv.h"

static hw_ksrv *srv;
static int64_t fake_ns;

static const uint8_t batch61[61] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 49, 0, 0, 0, 0, 2 };

static int f_submit(void *ctx, const hw_msg *m)
{
	(void)ctx;
	hw_msg a;
	memset(&a, 0, sizeof(a));
	a.correlation_id = m->correlation_id;
	a.dst = HW_KSRV_NODE;
	switch (m->type) {
	case HW_MSG_PRODUCE:
		if (!m->correlation_id)
			return 0; /* acks=0 */
		a.type = HW_MSG_PRODUCE_RESP;
		a.u.produce_resp = (hw_produce_resp){ .tp = m->u.produce.tp, .base_offset = 0 };
		break;
	case HW_MSG_FETCH: {
		a.type = HW_MSG_FETCH_RESP;
		uint16_t n = m->u.fetch.n_parts;
		hw_fetch_resp_part *p = calloc(n ? n : 1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		for (uint16_t i = 0; i < n; i++) {
			p[i].tp = m->u.fetch.parts[i].tp;
			p[i].high_watermark = 1;
			p[i].records = batch61;
			p[i].records_len = sizeof(batch61);
		}
		a.u.fetch_resp = (hw_fetch_resp){ .n_parts = n, .parts = p };
		(void)hw_ksrv_on_msg(srv, &a);
		free(p);
		return 0;
	}
	case HW_MSG_METADATA: {
		const hw_metadata_req *q = m->u.other;
		hw_broker_info b;
		memset(&b, 0, sizeof(b));
		b.id = 1;
		b.state = HW_BROKER_ACTIVE;
		b.n_listeners = 1;
		strcpy(b.listeners[0].name, "PLAINTEXT");
		strcpy(b.listeners[0].value, "127.0.0.1:9092");
		hw_partition_meta pm[2];
		memset(pm, 0, sizeof(pm));
		for (int i = 0; i < 2; i++) {
			pm[i].partition = (uint32_t)i;
			pm[i].leader = 1;
			pm[i].replicas.n = 1;
			pm[i].replicas.id[0] = 1;
			pm[i].isr = pm[i].replicas;
		}
		hw_topic_meta t[8];
		memset(t, 0, sizeof(t));
		int nt = 0;
		strcpy(t[nt].name, "t");
		t[nt].topic_id = 1;
		t[nt].n_parts = 2;
		t[nt++].parts = pm;
		for (int i = 0; i < q->n_topics && nt < 8; i++) {
			snprintf(t[nt].name, sizeof(t[nt].name), "%s", q->topics[i].s);
			t[nt++].error = (int16_t)(i % 2 ? HW_ERR_UNKNOWN_TOPIC_OR_PARTITION : 0);
		}
		hw_metadata_resp r = { .n_brokers = 1, .brokers = &b, .n_topics = (uint16_t)nt, .topics = t };
		a.type = HW_MSG_METADATA_RESP;
		a.u.other = &r;
		(void)hw_ksrv_on_msg(srv, &a);
		return 0;
	}
	case HW_MSG_CREATE_TOPIC: {
		hw_create_topic_resp r;
		memset(&r, 0, sizeof(r));
		a.type = HW_MSG_CREATE_TOPIC_RESP;
		a.u.other = &r;
		(void)hw_ksrv_on_msg(srv, &a);
		return 0;
	}
	case HW_MSG_DELETE_TOPIC: {
		const hw_delete_topic_req *q = m->u.other;
		hw_delete_topic_resp r;
		memset(&r, 0, sizeof(r));
		snprintf(r.name, sizeof(r.name), "%s", q->name[0] ? q->name : "byid");
		r.topic_id = q->topic_id ? q->topic_id : 1;
		r.error = (int16_t)(m->correlation_id % 3 == 0 ? HW_ERR_TOPIC_DELETION_DISABLED : 0);
		a.type = HW_MSG_DELETE_TOPIC_RESP;
		a.u.other = &r;
		(void)hw_ksrv_on_msg(srv, &a);
		return 0;
	}
	case HW_MSG_ALTER_CONFIG: {
		const hw_alter_config_req *q = m->u.other;
		hw_alter_config_resp r;
		memset(&r, 0, sizeof(r));
		size_t bytes = 0; /* every entry readable (ASan) and terminated */
		for (int i = 0; i < q->n_configs; i++)
			bytes += strlen(q->configs[i].key) + strlen(q->configs[i].value);
		for (int i = 0; i < q->n_deletes; i++)
			bytes += strlen(q->deletes[i].key);
		snprintf(r.name, sizeof(r.name), "%s", q->name);
		r.error = (int16_t)((m->correlation_id + bytes) % 3 == 0 ? HW_ERR_INVALID_CONFIG : 0);
		snprintf(r.error_message, sizeof(r.error_message), "%s", r.error ? "Unknown topic config name: x" : "");
		a.type = HW_MSG_ALTER_CONFIG_RESP;
		a.u.other = &r;
		(void)hw_ksrv_on_msg(srv, &a);
		return 0;
	}
	default:
		abort(); /* the server sends nothing else */
	}
	(void)hw_ksrv_on_msg(srv, &a);
	return 0;
}

static int f_topic_id(void *ctx, const char *topic, uint32_t *id)
{
	(void)ctx;
	if (strcmp(topic, "t"))
		return -ENOENT;
	*id = 1;
	return 0;
}

static int f_part_info(void *ctx, hw_tp tp, hw_rm_part_info *out)
{
	(void)ctx;
	if (tp.partition > 1)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->tp = tp;
	out->role = HW_PART_LEADER;
	out->hw = 5;
	return 0;
}

static int64_t f_pid(void *ctx)
{
	(void)ctx;
	return 42;
}

static int64_t f_now(void *ctx)
{
	(void)ctx;
	return fake_ns += 1000;
}

static const hw_ksrv_kv kv[] = { { "min.insync.replicas", "1", 1, "min.insync.replicas" },
				 { "cleanup.policy", "delete", 1, "log.cleanup.policy" } };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	hw_ksrv_config cfg = { .node_id = 1, .auto_create_topics = 1, .socket_request_max_bytes = 1 << 20,
			       .broker_configs = kv, .n_broker_configs = 2 };
	hw_ksrv_ops ops = { .submit = f_submit, .topic_id = f_topic_id, .part_info = f_part_info,
			    .alloc_producer_id = f_pid, .now_ns = f_now };
	if (hw_ksrv_create(&cfg, &ops, NULL, &srv) < 0)
		return 0;
	hw_kconn *c = hw_kconn_open(srv, NULL);
	if (!c) {
		hw_ksrv_destroy(srv);
		return 0;
	}
	/* exact-size copies: ASan reports any read past the input */
	size_t cut = size ? data[0] % (size + 1) : 0;
	uint8_t *a = malloc(cut ? cut : 1), *b = malloc(size - cut ? size - cut : 1);
	memcpy(a, data, cut);
	memcpy(b, data + cut, size - cut);
	int rc = hw_kconn_input(c, a, cut);
	if (rc == 0)
		rc = hw_kconn_input(c, b, size - cut);
	if (rc > 0)
		abort();
	const uint8_t *p;
	size_t n = hw_kconn_output(c, &p);
	size_t off = 0;
	while (off < n) {
		if (n - off < 8)
			abort();
		uint32_t fs = (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 | (uint32_t)p[off + 2] << 8 | p[off + 3];
		if (fs < 4 || fs > n - off - 4)
			abort();
		off += 4 + fs;
	}
	hw_kconn_output_done(c, n);
	(void)hw_ksrv_poll(srv);
	hw_kconn_close(c, HW_KSRV_CLOSE_PEER);
	hw_ksrv_destroy(srv);
	srv = NULL;
	free(a);
	free(b);
	return 0;
}
