/* hw_wire_admin.c — codecs of the admin/controller messages of
 * hw_admin_msg.h (Metadata, CreateTopic, DescribeTopic, BrokerRegister,
 * BrokerHeartbeat). Layouts are documented in hw_wire.h. Decoded structs and
 * their arrays live in the decode arena; hw_msg.u.other points at them.
 */
#include <errno.h>
#include <string.h>
#include "hw_wire.h"
#include "hw_wire_io.h"
#include "hw_err.h"

static void enc_names(hw_wr *w, uint16_t n, const hw_topic_name *t)
{
	if (n > HW_WIRE_MAX_PARTS || (n && !t)) {
		hw_wr_einval(w);
		return;
	}
	hw_wr_u16(w, n);
	for (unsigned i = 0; i < n; i++)
		hw_wr_str(w, t[i].s, sizeof t[i].s);
}

static void enc_configs(hw_wr *w, uint16_t n, const hw_config_kv *c)
{
	if (n > HW_WIRE_MAX_PARTS || (n && !c)) {
		hw_wr_einval(w);
		return;
	}
	hw_wr_u16(w, n);
	for (unsigned i = 0; i < n; i++) {
		hw_wr_str(w, c[i].key, sizeof c[i].key);
		hw_wr_str(w, c[i].value, sizeof c[i].value);
	}
}

static void enc_topic_meta(hw_wr *w, const hw_topic_meta *t)
{
	if (t->n_parts > HW_WIRE_MAX_PARTS || (t->n_parts && !t->parts)) {
		hw_wr_einval(w);
		return;
	}
	hw_wr_str(w, t->name, sizeof t->name);
	hw_wr_u32(w, t->topic_id);
	hw_wr_i16(w, t->error);
	hw_wr_u32(w, t->n_parts);
	for (uint32_t i = 0; i < t->n_parts; i++) {
		const hw_partition_meta *p = &t->parts[i];
		hw_wr_u32(w, p->partition);
		hw_wr_i16(w, p->error);
		hw_wr_i32(w, p->leader);
		hw_wr_i32(w, p->leader_epoch);
		hw_wr_i32(w, p->partition_epoch);
		hw_wr_u8(w, p->leader_recovery_state);
		hw_wr_idset(w, &p->replicas);
		hw_wr_idset(w, &p->isr);
		hw_wr_idset(w, &p->elr);
		hw_wr_idset(w, &p->last_known_elr);
		hw_wr_i64(w, p->high_watermark);
		hw_wr_i64(w, p->log_end_offset);
		hw_wr_i64(w, p->log_start_offset);
	}
	enc_configs(w, t->n_configs, t->configs);
}

/* 1 if some broker of a METADATA_RESP has a rack: the rack trailer is
 * encoded (and forces the earlier trailers, in their zero form). */
static int metadata_resp_has_racks(const hw_metadata_resp *q)
{
	for (unsigned i = 0; i < q->n_brokers; i++)
		if (q->brokers[i].rack[0])
			return 1;
	return 0;
}

/* 1 if a METADATA_RESP trailer defined after the listener block is
 * encoded (that block then precedes it, empty if no broker has a listener,
 * so the decoder can tell them apart): ZooKeeper mode's controller epoch,
 * or the racks after it. */
static int metadata_resp_later_trailer(const hw_metadata_resp *q)
{
	return q->controller_epoch > 0 || metadata_resp_has_racks(q);
}

/* Listener trailer: u16 n, n x {str name, str value} (hw_wire.h). */
static void enc_listeners(hw_wr *w, uint16_t n, const hw_listener *l)
{
	if (n > HW_MAX_LISTENERS) {
		hw_wr_einval(w);
		return;
	}
	hw_wr_u16(w, n);
	for (unsigned i = 0; i < n; i++) {
		hw_wr_str(w, l[i].name, sizeof l[i].name);
		hw_wr_str(w, l[i].value, sizeof l[i].value);
	}
}

static uint16_t dec_listeners(hw_rd *r, hw_listener *l)
{
	uint16_t n = hw_rd_u16(r);
	if (n > HW_MAX_LISTENERS) {
		hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		return 0;
	}
	for (unsigned i = 0; i < n; i++) {
		hw_rd_str(r, l[i].name, sizeof l[i].name);
		hw_rd_str(r, l[i].value, sizeof l[i].value);
	}
	return r->bad ? 0 : n;
}

static void enc_topics(hw_wr *w, uint16_t n, const hw_topic_meta *t)
{
	if (n > HW_WIRE_MAX_PARTS || (n && !t)) {
		hw_wr_einval(w);
		return;
	}
	hw_wr_u16(w, n);
	for (unsigned i = 0; i < n; i++)
		enc_topic_meta(w, &t[i]);
}

int hw_wire_admin_encode(hw_wr *w, const hw_msg *m)
{
	const void *o = m->u.other;
	switch (m->type) {
	case HW_MSG_METADATA:
	case HW_MSG_DESCRIBE_TOPIC:
	case HW_MSG_METADATA_RESP:
	case HW_MSG_DESCRIBE_TOPIC_RESP:
	case HW_MSG_CREATE_TOPIC:
	case HW_MSG_CREATE_TOPIC_RESP:
	case HW_MSG_BROKER_REGISTER:
	case HW_MSG_BROKER_HEARTBEAT:
	case HW_MSG_BROKER_HEARTBEAT_RESP:
	case HW_MSG_ALTER_CONFIG:
	case HW_MSG_ALTER_CONFIG_RESP:
		if (!o) {
			hw_wr_einval(w);
			return 1;
		}
		break;
	default:
		return 0;
	}
	switch (m->type) {
	case HW_MSG_METADATA: {
		const hw_metadata_req *q = o;
		enc_names(w, q->n_topics, q->topics);
		break;
	}
	case HW_MSG_DESCRIBE_TOPIC: {
		const hw_describe_topic_req *q = o;
		enc_names(w, q->n_topics, q->topics);
		break;
	}
	case HW_MSG_METADATA_RESP: {
		const hw_metadata_resp *q = o;
		if (q->n_brokers > HW_WIRE_MAX_PARTS || (q->n_brokers && !q->brokers)) {
			hw_wr_einval(w);
			break;
		}
		hw_wr_i16(w, q->error);
		hw_wr_i32(w, q->controller_id);
		hw_wr_i64(w, q->metadata_offset);
		hw_wr_u16(w, q->n_brokers);
		for (unsigned i = 0; i < q->n_brokers; i++) {
			const hw_broker_info *b = &q->brokers[i];
			hw_wr_i32(w, b->id);
			hw_wr_i64(w, b->broker_epoch);
			hw_wr_u8(w, b->state);
			hw_wr_str(w, b->control_ep, sizeof b->control_ep);
			hw_wr_str(w, b->data_ep, sizeof b->data_ep);
		}
		enc_topics(w, q->n_topics, q->topics);
		/* trailers (old encoders stop before), in this order: every
		 * broker's listeners, in broker order — present iff some broker
		 * has one or the epoch below follows (one encoding per
		 * message); then, ZooKeeper mode only, the controller epoch */
		unsigned any = 0;
		for (unsigned i = 0; i < q->n_brokers; i++)
			any |= q->brokers[i].n_listeners;
		if (any || metadata_resp_later_trailer(q)) {
			hw_wr_u16(w, q->n_brokers);
			for (unsigned i = 0; i < q->n_brokers; i++) {
				hw_wr_i32(w, q->brokers[i].id);
				enc_listeners(w, q->brokers[i].n_listeners, q->brokers[i].listeners);
			}
		}
		int racks = metadata_resp_has_racks(q);
		if (q->controller_epoch > 0 || racks)
			hw_wr_i32(w, q->controller_epoch > 0 ? q->controller_epoch : 0);
		if (racks) { /* u16 nb, nb x {i32 id, str rack}, broker order */
			hw_wr_u16(w, q->n_brokers);
			for (unsigned i = 0; i < q->n_brokers; i++) {
				hw_wr_i32(w, q->brokers[i].id);
				hw_wr_str(w, q->brokers[i].rack, sizeof q->brokers[i].rack);
			}
		}
		break;
	}
	case HW_MSG_DESCRIBE_TOPIC_RESP: {
		const hw_describe_topic_resp *q = o;
		hw_wr_i16(w, q->error);
		hw_wr_i32(w, q->responder_id);
		enc_topics(w, q->n_topics, q->topics);
		break;
	}
	case HW_MSG_CREATE_TOPIC: {
		const hw_create_topic_req *q = o;
		hw_wr_str(w, q->name, sizeof q->name);
		hw_wr_i32(w, q->partitions);
		hw_wr_i16(w, q->replication_factor);
		hw_wr_i32(w, q->timeout_ms);
		hw_wr_u8(w, q->validate_only ? 1 : 0);
		enc_configs(w, q->n_configs, q->configs);
		if (q->n_assignments) { /* trailer: u32 np, np x idset */
			if (q->n_assignments > HW_WIRE_MAX_PARTS || !q->assignments) {
				hw_wr_einval(w);
				break;
			}
			hw_wr_u32(w, q->n_assignments);
			for (uint32_t i = 0; i < q->n_assignments; i++)
				hw_wr_idset(w, &q->assignments[i]);
		}
		break;
	}
	case HW_MSG_ALTER_CONFIG: {
		const hw_alter_config_req *q = o;
		hw_wr_str(w, q->name, sizeof q->name);
		enc_configs(w, q->n_configs, q->configs);
		if (q->replace || q->validate_only || q->n_deletes) { /* trailer */
			hw_wr_u8(w, (uint8_t)((q->replace ? 1 : 0) | (q->validate_only ? 2 : 0)));
			enc_configs(w, q->n_deletes, q->deletes);
		}
		break;
	}
	case HW_MSG_ALTER_CONFIG_RESP: {
		const hw_alter_config_resp *q = o;
		hw_wr_str(w, q->name, sizeof q->name);
		hw_wr_i16(w, q->error);
		hw_wr_str(w, q->error_message, sizeof q->error_message);
		break;
	}
	case HW_MSG_CREATE_TOPIC_RESP: {
		const hw_create_topic_resp *q = o;
		hw_wr_str(w, q->name, sizeof q->name);
		hw_wr_u32(w, q->topic_id);
		hw_wr_i16(w, q->error);
		hw_wr_str(w, q->error_message, sizeof q->error_message);
		hw_wr_i32(w, q->partitions);
		hw_wr_i16(w, q->replication_factor);
		break;
	}
	case HW_MSG_BROKER_REGISTER: {
		const hw_broker_register_req *q = o;
		hw_wr_i32(w, q->broker_id);
		hw_wr_u64(w, q->incarnation_id);
		hw_wr_i64(w, q->previous_broker_epoch);
		hw_wr_i64(w, q->metadata_offset);
		hw_wr_str(w, q->control_ep, sizeof q->control_ep);
		hw_wr_str(w, q->data_ep, sizeof q->data_ep);
		/* trailers: the listeners (present iff there are some or the
		 * rack follows), then the rack (present iff set) */
		if (q->n_listeners || q->rack[0])
			enc_listeners(w, q->n_listeners, q->listeners);
		if (q->rack[0])
			hw_wr_str(w, q->rack, sizeof q->rack);
		break;
	}
	case HW_MSG_BROKER_HEARTBEAT: {
		const hw_broker_heartbeat_req *q = o;
		hw_wr_i32(w, q->broker_id);
		hw_wr_i64(w, q->broker_epoch);
		hw_wr_i64(w, q->metadata_offset);
		hw_wr_u8(w, q->want_fence ? 1 : 0);
		hw_wr_u8(w, q->want_shutdown ? 1 : 0);
		if (q->offline_dirs) { /* trailer: offline log dirs and their replicas */
			if (q->n_offline > HW_MAX_OFFLINE_REPLICAS || (q->n_offline && !q->offline)) {
				hw_wr_einval(w);
				break;
			}
			hw_wr_u16(w, q->offline_dirs);
			hw_wr_u16(w, q->n_offline);
			for (int i = 0; i < q->n_offline; i++) {
				hw_wr_u32(w, q->offline[i].topic_id);
				hw_wr_u32(w, q->offline[i].partition);
			}
		}
		break;
	}
	case HW_MSG_BROKER_HEARTBEAT_RESP: {
		const hw_broker_heartbeat_resp *q = o;
		hw_wr_i16(w, q->error);
		hw_wr_i64(w, q->broker_epoch);
		hw_wr_u8(w, q->is_caught_up ? 1 : 0);
		hw_wr_u8(w, q->is_fenced ? 1 : 0);
		hw_wr_u8(w, q->should_shut_down ? 1 : 0);
		/* trailers (ZooKeeper mode): controller epoch, then for
		 * NOT_CONTROLLER the active controller's id */
		if (q->controller_epoch > 0 || q->error == HW_ERR_NOT_CONTROLLER)
			hw_wr_i32(w, q->controller_epoch);
		if (q->error == HW_ERR_NOT_CONTROLLER)
			hw_wr_i32(w, q->active_controller_id);
		break;
	}
	}
	return 1;
}

/* ---- decoding */

_Static_assert(HW_MAX_OFFLINE_REPLICAS <= HW_WIRE_MAX_PARTS, "hw_rd_count bounds the offline replicas");

static const hw_topic_name *dec_names(hw_rd *r, uint16_t *n_out)
{
	uint32_t n = hw_rd_count(r, hw_rd_u16(r), 2);
	hw_topic_name *t = n ? hw_rd_alloc(r, n * sizeof *t) : NULL;
	for (uint32_t i = 0; t && i < n; i++)
		hw_rd_str(r, t[i].s, sizeof t[i].s);
	*n_out = (uint16_t)n;
	return t;
}

static const hw_config_kv *dec_configs(hw_rd *r, uint16_t *n_out)
{
	uint32_t n = hw_rd_count(r, hw_rd_u16(r), 4);
	hw_config_kv *c = n ? hw_rd_alloc(r, n * sizeof *c) : NULL;
	for (uint32_t i = 0; c && i < n; i++) {
		hw_rd_str(r, c[i].key, sizeof c[i].key);
		hw_rd_str(r, c[i].value, sizeof c[i].value);
	}
	*n_out = (uint16_t)n;
	return c;
}

#define PART_META_MIN (4 + 2 + 4 + 4 + 4 + 1 + 4 + 8 * 3)

static void dec_topic_meta(hw_rd *r, hw_topic_meta *t)
{
	hw_rd_str(r, t->name, sizeof t->name);
	t->topic_id = hw_rd_u32(r);
	t->error = hw_rd_i16(r);
	uint32_t n = hw_rd_count(r, hw_rd_u32(r), PART_META_MIN);
	hw_partition_meta *p = n ? hw_rd_alloc(r, n * sizeof *p) : NULL;
	for (uint32_t i = 0; p && i < n; i++) {
		p[i].partition = hw_rd_u32(r);
		p[i].error = hw_rd_i16(r);
		p[i].leader = hw_rd_i32(r);
		p[i].leader_epoch = hw_rd_i32(r);
		p[i].partition_epoch = hw_rd_i32(r);
		p[i].leader_recovery_state = hw_rd_u8(r);
		if (p[i].leader_recovery_state > HW_LRS_RECOVERING)
			hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		hw_rd_idset(r, &p[i].replicas);
		hw_rd_idset(r, &p[i].isr);
		hw_rd_idset(r, &p[i].elr);
		hw_rd_idset(r, &p[i].last_known_elr);
		p[i].high_watermark = hw_rd_i64(r);
		p[i].log_end_offset = hw_rd_i64(r);
		p[i].log_start_offset = hw_rd_i64(r);
	}
	t->n_parts = n;
	t->parts = p;
	t->configs = dec_configs(r, &t->n_configs);
}

/* METADATA_RESP's rack trailer: u16 nb (= the brokers), nb x {i32 id (in
 * broker order), str rack}; present iff some rack is set. */
static void dec_broker_racks(hw_rd *r, hw_broker_info *b, uint32_t n)
{
	uint32_t nb = hw_rd_u16(r);
	unsigned any = 0;
	if (nb != n)
		hw_rd_fail(r, HW_WIRE_DROP_BAD_COUNT);
	for (uint32_t i = 0; i < nb && b && !r->bad; i++) {
		if (hw_rd_i32(r) != b[i].id)
			hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		hw_rd_str(r, b[i].rack, sizeof b[i].rack);
		any |= b[i].rack[0] != 0;
	}
	if (!r->bad && !any)
		hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
}

static const hw_topic_meta *dec_topics(hw_rd *r, uint16_t *n_out)
{
	uint32_t n = hw_rd_count(r, hw_rd_u16(r), 2 + 4 + 2 + 4 + 2);
	hw_topic_meta *t = n ? hw_rd_alloc(r, n * sizeof *t) : NULL;
	for (uint32_t i = 0; t && i < n && !r->bad; i++)
		dec_topic_meta(r, &t[i]);
	*n_out = (uint16_t)n;
	return t;
}

int hw_wire_admin_decode(hw_rd *r, hw_msg *m)
{
	switch (m->type) {
	case HW_MSG_METADATA: {
		hw_metadata_req *q = hw_rd_alloc(r, sizeof *q);
		if (q)
			q->topics = dec_names(r, &q->n_topics);
		m->u.other = q;
		return 1;
	}
	case HW_MSG_DESCRIBE_TOPIC: {
		hw_describe_topic_req *q = hw_rd_alloc(r, sizeof *q);
		if (q)
			q->topics = dec_names(r, &q->n_topics);
		m->u.other = q;
		return 1;
	}
	case HW_MSG_METADATA_RESP: {
		hw_metadata_resp *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		q->error = hw_rd_i16(r);
		q->controller_id = hw_rd_i32(r);
		q->metadata_offset = hw_rd_i64(r);
		uint32_t n = hw_rd_count(r, hw_rd_u16(r), 4 + 8 + 1 + 2 + 2);
		hw_broker_info *b = n ? hw_rd_alloc(r, n * sizeof *b) : NULL;
		for (uint32_t i = 0; b && i < n; i++) {
			b[i].id = hw_rd_i32(r);
			b[i].broker_epoch = hw_rd_i64(r);
			b[i].state = hw_rd_u8(r);
			if (b[i].state > HW_BROKER_SHUTTING_DOWN)
				hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
			hw_rd_str(r, b[i].control_ep, sizeof b[i].control_ep);
			hw_rd_str(r, b[i].data_ep, sizeof b[i].data_ep);
		}
		q->n_brokers = (uint16_t)n;
		q->brokers = b;
		q->topics = dec_topics(r, &q->n_topics);
		if (!r->bad && r->pos < r->len) {
			/* trailers (old encoders stop before): the listeners of
			 * every broker, in broker order, present when some broker
			 * has one or when the controller epoch follows (one
			 * encoding per message); then the epoch (ZooKeeper mode) */
			uint32_t nb = hw_rd_u16(r);
			unsigned any = 0;
			if (nb != n)
				hw_rd_fail(r, HW_WIRE_DROP_BAD_COUNT);
			for (uint32_t i = 0; i < nb && b && !r->bad; i++) {
				if (hw_rd_i32(r) != b[i].id)
					hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
				b[i].n_listeners = dec_listeners(r, b[i].listeners);
				any |= b[i].n_listeners;
			}
			int epoch_follows = !r->bad && r->len - r->pos >= 4;
			if (!r->bad && !any && !epoch_follows)
				hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
			if (epoch_follows) {
				q->controller_epoch = hw_rd_i32(r);
				if (q->controller_epoch < 0)
					hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
			}
			/* the racks (an epoch of 0 is the zero form, only
			 * before them) */
			if (!r->bad && epoch_follows && r->pos < r->len)
				dec_broker_racks(r, b, n);
			else if (!r->bad && epoch_follows && q->controller_epoch == 0)
				hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		}
		return 1;
	}
	case HW_MSG_DESCRIBE_TOPIC_RESP: {
		hw_describe_topic_resp *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		q->error = hw_rd_i16(r);
		q->responder_id = hw_rd_i32(r);
		q->topics = dec_topics(r, &q->n_topics);
		return 1;
	}
	case HW_MSG_CREATE_TOPIC: {
		hw_create_topic_req *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		hw_rd_str(r, q->name, sizeof q->name);
		q->partitions = hw_rd_i32(r);
		q->replication_factor = hw_rd_i16(r);
		q->timeout_ms = hw_rd_i32(r);
		q->validate_only = hw_rd_bool(r);
		q->configs = dec_configs(r, &q->n_configs);
		if (!r->bad && r->pos < r->len) {
			/* trailer, present iff an assignment is given */
			uint32_t n = hw_rd_count(r, hw_rd_u32(r), 1);
			hw_idset *a = n ? hw_rd_alloc(r, n * sizeof *a) : NULL;
			for (uint32_t i = 0; a && i < n; i++)
				hw_rd_idset(r, &a[i]);
			if (!r->bad && !n)
				hw_rd_fail(r, HW_WIRE_DROP_BAD_COUNT);
			q->n_assignments = n;
			q->assignments = a;
		}
		return 1;
	}
	case HW_MSG_ALTER_CONFIG: {
		hw_alter_config_req *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		hw_rd_str(r, q->name, sizeof q->name);
		q->configs = dec_configs(r, &q->n_configs);
		if (!r->bad && r->len - r->pos >= 3) { /* trailer: flags, deletes (a lone byte is TRAILING) */
			uint8_t f = hw_rd_u8(r);
			if (f > 3)
				hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
			q->replace = f & 1;
			q->validate_only = (f >> 1) & 1;
			q->deletes = dec_configs(r, &q->n_deletes);
			if (!r->bad && !f && !q->n_deletes)
				hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD); /* not canonical */
		}
		return 1;
	}
	case HW_MSG_ALTER_CONFIG_RESP: {
		hw_alter_config_resp *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		hw_rd_str(r, q->name, sizeof q->name);
		q->error = hw_rd_i16(r);
		hw_rd_str(r, q->error_message, sizeof q->error_message);
		return 1;
	}
	case HW_MSG_CREATE_TOPIC_RESP: {
		hw_create_topic_resp *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		hw_rd_str(r, q->name, sizeof q->name);
		q->topic_id = hw_rd_u32(r);
		q->error = hw_rd_i16(r);
		hw_rd_str(r, q->error_message, sizeof q->error_message);
		q->partitions = hw_rd_i32(r);
		q->replication_factor = hw_rd_i16(r);
		return 1;
	}
	case HW_MSG_BROKER_REGISTER: {
		hw_broker_register_req *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		q->broker_id = hw_rd_i32(r);
		q->incarnation_id = hw_rd_u64(r);
		q->previous_broker_epoch = hw_rd_i64(r);
		q->metadata_offset = hw_rd_i64(r);
		hw_rd_str(r, q->control_ep, sizeof q->control_ep);
		hw_rd_str(r, q->data_ep, sizeof q->data_ep);
		if (!r->bad && r->pos < r->len) {
			/* trailers: the listeners, present iff the broker has
			 * some or the rack follows; then the rack, present iff set */
			q->n_listeners = dec_listeners(r, q->listeners);
			if (!r->bad && r->pos < r->len) {
				hw_rd_str(r, q->rack, sizeof q->rack);
				if (!r->bad && !q->rack[0])
					hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
			} else if (!r->bad && !q->n_listeners) {
				hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
			}
		}
		return 1;
	}
	case HW_MSG_BROKER_HEARTBEAT: {
		hw_broker_heartbeat_req *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		q->broker_id = hw_rd_i32(r);
		q->broker_epoch = hw_rd_i64(r);
		q->metadata_offset = hw_rd_i64(r);
		q->want_fence = hw_rd_bool(r);
		q->want_shutdown = hw_rd_bool(r);
		if (!r->bad && r->len - r->pos >= 4) {
			/* trailer, present iff a log dir is offline (one encoding:
			 * a zero dir count is a drop; fewer bytes than its two
			 * counts are trailing bytes) */
			q->offline_dirs = hw_rd_u16(r);
			if (!r->bad && !q->offline_dirs)
				hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
			uint32_t n = hw_rd_count(r, hw_rd_u16(r), 8); /* <= HW_MAX_OFFLINE_REPLICAS */
			hw_tp *t = n ? hw_rd_alloc(r, n * sizeof *t) : NULL;
			for (uint32_t i = 0; t && i < n; i++) {
				t[i].topic_id = hw_rd_u32(r);
				t[i].partition = hw_rd_u32(r);
			}
			q->n_offline = (uint16_t)n;
			q->offline = t;
		}
		return 1;
	}
	case HW_MSG_BROKER_HEARTBEAT_RESP: {
		hw_broker_heartbeat_resp *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		q->error = hw_rd_i16(r);
		q->broker_epoch = hw_rd_i64(r);
		q->is_caught_up = hw_rd_bool(r);
		q->is_fenced = hw_rd_bool(r);
		q->should_shut_down = hw_rd_bool(r);
		q->active_controller_id = -1;
		/* trailers, one encoding per message (the encoder above): the
		 * epoch when > 0 or for NOT_CONTROLLER, then — NOT_CONTROLLER
		 * only, and then always — the active controller's id; old
		 * encoders stop before (and never answer NOT_CONTROLLER) */
		int not_ctrl = q->error == HW_ERR_NOT_CONTROLLER;
		if (!r->bad && (r->len - r->pos >= 4 || not_ctrl)) { /* both required for NOT_CONTROLLER */
			q->controller_epoch = hw_rd_i32(r);
			if (q->controller_epoch < 0 || (!not_ctrl && q->controller_epoch == 0))
				hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
			if (not_ctrl && !r->bad)
				q->active_controller_id = hw_rd_i32(r);
		}
		return 1;
	}
	}
	return 0;
}
