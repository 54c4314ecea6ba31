/* hw_ksrv_admin.c — the Kafka server's DeleteTopics and InitProducerId
 * (docs/kafka.md "DeleteTopics", "InitProducerId"). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_ksrv_int.h"

/* ---- DeleteTopics: the controller has no topic deletion ------------------ */
int hw_kapi_delete_topics(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	(void)s;
	int16_t v = r->hdr.api_version;
	int32_t n = hw_kr_array(rd);
	hw_kw *w = &r->body;
	hw_kw tmp;
	hw_kw_init(&tmp, 64);
	int k = 0;
	for (int i = 0; i < n && !rd->err; i++) {
		hw_kstr name = hw_kr_str(rd);
		hw_kw_str(&tmp, name.p, name.len > 0 ? (size_t)name.len : 0);
		hw_kw_i16(&tmp, HW_KERR_TOPIC_DELETION_DISABLED);
		k++;
	}
	(void)hw_kr_i32(rd); /* timeout_ms */
	if (rd->err) {
		hw_kw_free(&tmp);
		return rd->err;
	}
	if (v >= 1)
		hw_kw_i32(w, 0);
	hw_kw_array_v(w, false, k);
	hw_kw_raw(w, tmp.buf, tmp.len);
	hw_kw_free(&tmp);
	if (k)
		ksrv_err(r, HW_KERR_TOPIC_DELETION_DISABLED);
	return 0;
}

/* ---- InitProducerId --------------------------------------------------------- */
int hw_kapi_init_producer_id(hw_ksrv *s, hw_kreq *r, hw_kr *rd)
{
	hw_kstr txn = hw_kr_nstr(rd);
	(void)hw_kr_i32(rd); /* transaction_timeout_ms */
	if (rd->err)
		return rd->err;
	hw_kw *w = &r->body;
	int16_t err = HW_ERR_NONE;
	int64_t pid = -1;
	if (txn.len >= 0) {
		err = HW_KERR_TRANSACTIONAL_ID_AUTH; /* transactions are not supported */
	} else {
		pid = s->ops.alloc_producer_id(s->ctx);
		if (pid < 0) {
			err = HW_ERR_BROKER_NOT_AVAILABLE; /* not registered yet: retriable for clients */
			pid = -1;
		}
	}
	hw_kw_i32(w, 0);
	hw_kw_i16(w, err);
	ksrv_err(r, err);
	hw_kw_i64(w, pid);
	hw_kw_i16(w, pid >= 0 ? 0 : -1);
	return 0;
}
