/* hw_wire_ctrl.c — the codec of the controller messages for topic deletion
 * and producer id blocks (hw_admin_msg.h; docs/wire.md "Admin messages"):
 *
 *   DELETE_TOPIC           str name, u32 topic_id, i32 timeout_ms
 *                          (exactly one of name / topic_id set)
 *   DELETE_TOPIC_RESP      str name, u32 topic_id, i16 error, str error_message
 *   ALLOCATE_PRODUCER_IDS  i32 broker_id, i64 broker_epoch
 *   ALLOCATE_PRODUCER_IDS_RESP  i16 error, i64 first_id, i32 count
 *                          (error NONE: first_id >= 0, count 1..HW_PRODUCER_ID_BLOCK;
 *                           otherwise first_id -1, count 0)
 *
 * Every decoder is bounds-checked by hw_rd (a failure latches a drop reason). */
#include "hw_admin_msg.h"
#include "hw_err.h"
#include "hw_wire_io.h"

static int is_ours(uint16_t type)
{
	switch (type) {
	case HW_MSG_DELETE_TOPIC:
	case HW_MSG_DELETE_TOPIC_RESP:
	case HW_MSG_ALLOCATE_PRODUCER_IDS:
	case HW_MSG_ALLOCATE_PRODUCER_IDS_RESP:
		return 1;
	}
	return 0;
}

static int pids_resp_ok(int16_t error, int64_t first, int32_t count)
{
	if (error == HW_ERR_NONE)
		return first >= 0 && count >= 1 && count <= HW_PRODUCER_ID_BLOCK && first <= INT64_MAX - count;
	return first == -1 && count == 0;
}

int hw_wire_ctrl_encode(hw_wr *w, const hw_msg *m)
{
	if (!is_ours(m->type))
		return 0;
	const void *o = m->u.other;
	if (!o) {
		hw_wr_einval(w);
		return 1;
	}
	switch (m->type) {
	case HW_MSG_DELETE_TOPIC: {
		const hw_delete_topic_req *q = o;
		if ((q->name[0] != 0) == (q->topic_id != 0)) {
			hw_wr_einval(w);
			break;
		}
		hw_wr_str(w, q->name, sizeof q->name);
		hw_wr_u32(w, q->topic_id);
		hw_wr_i32(w, q->timeout_ms);
		break;
	}
	case HW_MSG_DELETE_TOPIC_RESP: {
		const hw_delete_topic_resp *q = o;
		hw_wr_str(w, q->name, sizeof q->name);
		hw_wr_u32(w, q->topic_id);
		hw_wr_i16(w, q->error);
		hw_wr_str(w, q->error_message, sizeof q->error_message);
		break;
	}
	case HW_MSG_ALLOCATE_PRODUCER_IDS: {
		const hw_alloc_pids_req *q = o;
		hw_wr_i32(w, q->broker_id);
		hw_wr_i64(w, q->broker_epoch);
		break;
	}
	case HW_MSG_ALLOCATE_PRODUCER_IDS_RESP: {
		const hw_alloc_pids_resp *q = o;
		if (!pids_resp_ok(q->error, q->first_id, q->count)) {
			hw_wr_einval(w);
			break;
		}
		hw_wr_i16(w, q->error);
		hw_wr_i64(w, q->first_id);
		hw_wr_i32(w, q->count);
		break;
	}
	}
	return 1;
}

int hw_wire_ctrl_decode(hw_rd *r, hw_msg *m)
{
	if (!is_ours(m->type))
		return 0;
	switch (m->type) {
	case HW_MSG_DELETE_TOPIC: {
		hw_delete_topic_req *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		hw_rd_str(r, q->name, sizeof q->name);
		q->topic_id = hw_rd_u32(r);
		q->timeout_ms = hw_rd_i32(r);
		if (!r->bad && (q->name[0] != 0) == (q->topic_id != 0))
			hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		return 1;
	}
	case HW_MSG_DELETE_TOPIC_RESP: {
		hw_delete_topic_resp *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		hw_rd_str(r, q->name, sizeof q->name);
		q->topic_id = hw_rd_u32(r);
		q->error = hw_rd_i16(r);
		hw_rd_str(r, q->error_message, sizeof q->error_message);
		return 1;
	}
	case HW_MSG_ALLOCATE_PRODUCER_IDS: {
		hw_alloc_pids_req *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		q->broker_id = hw_rd_i32(r);
		q->broker_epoch = hw_rd_i64(r);
		return 1;
	}
	case HW_MSG_ALLOCATE_PRODUCER_IDS_RESP: {
		hw_alloc_pids_resp *q = hw_rd_alloc(r, sizeof *q);
		m->u.other = q;
		if (!q)
			return 1;
		q->error = hw_rd_i16(r);
		q->first_id = hw_rd_i64(r);
		q->count = hw_rd_i32(r);
		if (!r->bad && !pids_resp_ok(q->error, q->first_id, q->count))
			hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
		return 1;
	}
	}
	return 1;
}
