/* hw_ksrv_int.h — internals shared by the Kafka server's files
 * (hw_ksrv.c core, hw_ksrv_meta.c metadata/admin APIs, hw_ksrv_admin.c
 * DeleteTopics and InitProducerId, hw_ksrv_data.c
 * produce/fetch/list offsets). Not for use outside engine/kafka. */
#ifndef HW_KSRV_INT_H
#define HW_KSRV_INT_H
#include <stdbool.h>
#include "hw_err.h"
#include "hw_ksrv.h"

/* Kafka error codes hiwater's engine table does not need (Errors.java). */
#define HW_KERR_INVALID_TOPIC              17
#define HW_KERR_COORDINATOR_NOT_AVAILABLE  15
#define HW_KERR_TRANSACTIONAL_ID_AUTH      53
#define HW_KERR_UNSUPPORTED_FOR_MESSAGE_FORMAT 43

/* An engine answer for part `idx` of request r (m borrowed). */
typedef void (*hw_kop_answer_fn)(hw_kreq *r, int idx, const hw_msg *m);
/* Part idx failed without an answer (send refused, timeout): err. */
typedef void (*hw_kop_fail_fn)(hw_kreq *r, int idx, int16_t err);

struct hw_kreq {
	hw_kconn *conn;
	hw_kreq *next;               /* the connection's FIFO */
	hw_kafka_req_hdr hdr;        /* client_id is not kept (null) */
	int api_idx;                 /* dense index, -1: unknown key */
	int pending;                 /* engine operations + the handler itself */
	bool no_response;            /* acks=0 */
	bool done;                   /* body complete */
	bool had_error;              /* a non-zero error code was written */
	bool group_pending;          /* left pending by a group handler */
	bool close_conn;             /* acks=0 with an error: close once it is the FIFO head */
	int64_t start_ns;
	hw_kw body;                  /* the response body (after the header) */
	void *state;                 /* per-API state */
	void (*finish)(hw_kreq *r);  /* encode body from state (pending hit 0) */
	void (*free_state)(void *st);
};

struct hw_kconn {
	hw_ksrv *srv;
	void *ctx;
	hw_kreq *head, *tail;
	int n_req;
	uint8_t *in;                 /* unparsed input */
	size_t in_len, in_cap;
	hw_kw out;                   /* framed responses not yet sent */
	size_t out_off;              /* bytes of out already sent */
	bool closed;
	bool want_close;             /* an acks=0 produce failed: the broker closes (hw_kconn_close_wanted) */
	char peer[64];               /* "/IP" (hw_kconn_set_peer), "" unknown */
};

typedef struct hw_kop {
	uint32_t corr;               /* 0: free */
	hw_kreq *req;
	int idx;
	int parts_left;              /* answers still expected (split fetches) */
	int64_t deadline_ns;         /* answered with an error after this */
	hw_kop_answer_fn answer;
	hw_kop_fail_fn fail;
} hw_kop;

#define HW_KSRV_MAX_OPS 65536

/* A topic name -> id / partitions cache from controller metadata. */
typedef struct hw_ktopic {
	char name[HW_TOPIC_NAME_MAX];
	uint32_t id;
} hw_ktopic;

struct hw_ksrv {
	hw_ksrv_config cfg;
	hw_ksrv_ops ops;
	void *ctx;
	hw_kop *opv;                 /* HW_KSRV_MAX_OPS slots */
	uint32_t free_hint;
	uint32_t gen;
	uint32_t n_ops;
	int64_t next_sweep_ns;       /* hw_ksrv_poll looks for timeouts from then */
	hw_ktopic *topics;
	size_t n_topics, cap_topics;
	hw_ksrv_stats st;
};

/* ---- core services for the API files ------------------------------------ */
int64_t ksrv_now(hw_ksrv *s);
/* Submit m (its correlation id is set here) as part idx of r, expecting
 * `parts` answers (FETCH split per reactor: its partition count; others 1).
 * ctrl: a control-plane request with a timeout. 0 (r->pending counts it) or
 * a negative errno (nothing pending; the caller fills the error itself). */
int ksrv_submit(hw_ksrv *s, hw_kreq *r, hw_msg *m, int idx, int parts, bool ctrl, hw_kop_answer_fn answer,
		hw_kop_fail_fn fail);
/* One answer of an operation counted (split fetches pass the number of
 * partitions the answer covered). */
void ksrv_req_release(hw_kreq *r);
/* Remember / look up topic ids from metadata. */
void ksrv_topic_learn(hw_ksrv *s, const char *name, uint32_t id);
int ksrv_topic_id(hw_ksrv *s, const char *name, uint32_t *id);
/* Note an error code written into r's response (for the error counter). */
static inline void ksrv_err(hw_kreq *r, int16_t code)
{
	if (code)
		r->had_error = true;
}
/* Copy a protocol string into a topic-name buffer: 0, or the Kafka error
 * for a name hiwater cannot hold (INVALID_TOPIC). */
int16_t ksrv_topic_name(hw_kstr s, char out[HW_TOPIC_NAME_MAX]);

/* ---- API handlers: decode the body in rd, then write the body into
 * r->body now or set r->finish/state and submit engine operations. 0 or a
 * negative errno (the request does not decode: the connection closes). */
typedef int (*hw_kapi_fn)(hw_ksrv *s, hw_kreq *r, hw_kr *rd);
int hw_kapi_api_versions(hw_ksrv *s, hw_kreq *r, hw_kr *rd);
int hw_kapi_metadata(hw_ksrv *s, hw_kreq *r, hw_kr *rd);
int hw_kapi_create_topics(hw_ksrv *s, hw_kreq *r, hw_kr *rd);
int hw_kapi_delete_topics(hw_ksrv *s, hw_kreq *r, hw_kr *rd);
int hw_kapi_describe_configs(hw_ksrv *s, hw_kreq *r, hw_kr *rd);
int hw_kapi_alter_configs(hw_ksrv *s, hw_kreq *r, hw_kr *rd);            /* hw_ksrv_config.c */
int hw_kapi_incremental_alter_configs(hw_ksrv *s, hw_kreq *r, hw_kr *rd);
int hw_kapi_init_producer_id(hw_ksrv *s, hw_kreq *r, hw_kr *rd);
int hw_kapi_find_coordinator_stub(hw_ksrv *s, hw_kreq *r, hw_kr *rd);
int hw_kapi_produce(hw_ksrv *s, hw_kreq *r, hw_kr *rd);
int hw_kapi_fetch(hw_ksrv *s, hw_kreq *r, hw_kr *rd);
int hw_kapi_list_offsets(hw_ksrv *s, hw_kreq *r, hw_kr *rd);

#endif
