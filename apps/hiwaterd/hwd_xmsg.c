/* hwd_xmsg.c — decoded hand-offs between reactors (hwd_xmsg.h). */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include "hwd_store.h"
#include "hwd_xmsg.h"

static const char *const xk_names[] = {
#define N(n) #n,
	HWD_XMSG_TABLE(N)
#undef N
};
const char *hwd_xmsg_kind_name(int k)
{
	return k >= 0 && k < HWD_XMSG_KIND_COUNT ? xk_names[k] : "UNKNOWN_XMSG";
}

/* Every piece of a copy starts aligned for any member (parts hold int64). */
static size_t al(size_t n)
{
	const size_t a = alignof(max_align_t);
	return (n + a - 1) / a * a;
}

hwd_xmsg *hwd_xmsg_new(int kind)
{
	hwd_xmsg *x = calloc(1, sizeof(*x));
	if (x)
		x->kind = (uint16_t)kind;
	return x;
}

/* Bytes the decoded copy of m needs after the header; -ENOTSUP for an
 * admin body (u.other) or a type without a row. */
static int64_t copy_size(const hw_msg *m)
{
	switch (m->type) {
	case HW_MSG_PRODUCE:
		return (int64_t)al(m->u.produce.records_len);
	case HW_MSG_FETCH:
		return (int64_t)al((size_t)m->u.fetch.n_parts * sizeof(hw_fetch_part));
	case HW_MSG_FETCH_RESP: {
		const hw_fetch_resp *r = &m->u.fetch_resp;
		size_t need = al((size_t)r->n_parts * sizeof(hw_fetch_resp_part)) +
			      al((size_t)r->n_preferred * sizeof(hw_fetch_preferred));
		for (uint16_t i = 0; r->parts && i < r->n_parts; i++) /* NULL: put() copies none */
			if (!r->parts[i].records_ref)
				need += al(r->parts[i].records_len);
		return (int64_t)need;
	}
	case HW_MSG_OFFSETS_FOR_EPOCH:
		return (int64_t)al((size_t)m->u.ofe.n_parts * sizeof(hw_ofe_part));
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP:
		return (int64_t)al((size_t)m->u.ofe_resp.n_parts * sizeof(hw_ofe_resp_part));
	case HW_MSG_PRODUCE_RESP:
	case HW_MSG_ALTER_PARTITION:
	case HW_MSG_ALTER_PARTITION_RESP:
	case HW_MSG_PARTITION_STATE:
		return 0; /* the whole message is in the struct */
	}
	return -ENOTSUP;
}

/* Copy n bytes from src to *at (advanced, aligned); NULL stays NULL. */
static const void *put(uint8_t **at, const void *src, size_t n)
{
	if (!src)
		return NULL;
	void *dst = *at;
	if (n) /* memcpy from NULL is undefined even for 0 bytes */
		memcpy(dst, src, n);
	*at += al(n);
	return dst;
}

/* The fetch response's parts into the body: record bytes copied, or held
 * by reference (one more hold each, hwd_xmsg_free releases it). */
static void put_fetch_resp(hw_fetch_resp *r, uint8_t **at)
{
	hw_net_ref_ops ops = hwd_log_ref_ops();
	hw_fetch_resp_part *p = (hw_fetch_resp_part *)(uintptr_t)put(at, r->parts, (size_t)r->n_parts * sizeof(*p));
	for (uint16_t i = 0; p && i < r->n_parts; i++) {
		if (p[i].records_ref)
			ops.hold(p[i].records_ref);
		else
			p[i].records = put(at, p[i].records, p[i].records_len);
	}
	r->parts = p;
	r->preferred = put(at, r->preferred, (size_t)r->n_preferred * sizeof(hw_fetch_preferred));
}

static hwd_xmsg *copy_decoded(const hw_msg *m, int kind, size_t need)
{
	hwd_xmsg *x = malloc(sizeof(*x) + need);
	if (!x)
		return NULL;
	memset(x, 0, sizeof(*x));
	x->kind = (uint16_t)kind;
	x->m = *m;
	uint8_t *at = (uint8_t *)x->body;
	switch (m->type) {
	case HW_MSG_PRODUCE:
		x->m.u.produce.records = put(&at, m->u.produce.records, m->u.produce.records_len);
		break;
	case HW_MSG_FETCH:
		x->m.u.fetch.parts = put(&at, m->u.fetch.parts, (size_t)m->u.fetch.n_parts * sizeof(hw_fetch_part));
		break;
	case HW_MSG_FETCH_RESP:
		put_fetch_resp(&x->m.u.fetch_resp, &at);
		break;
	case HW_MSG_OFFSETS_FOR_EPOCH:
		x->m.u.ofe.parts = put(&at, m->u.ofe.parts, (size_t)m->u.ofe.n_parts * sizeof(hw_ofe_part));
		break;
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP:
		x->m.u.ofe_resp.parts = put(&at, m->u.ofe_resp.parts,
					    (size_t)m->u.ofe_resp.n_parts * sizeof(hw_ofe_resp_part));
		break;
	}
	return x;
}

/* An admin message as one local wire frame (hw_wire.h "Frames that never
 * leave the process"). */
static hwd_xmsg *copy_framed(const hw_msg *m, int kind, hw_wire_tx *tx, int *err)
{
	size_t cap = hw_wire_local_bound(m);
	hwd_xmsg *x = malloc(sizeof(*x) + cap);
	if (!x) {
		*err = -ENOMEM;
		return NULL;
	}
	memset(x, 0, sizeof(*x));
	int len = hw_wire_encode_local(tx, m, (uint8_t *)x->body, cap);
	if (len < 0) {
		free(x);
		*err = len == -EMSGSIZE ? -EMSGSIZE : -EINVAL;
		return NULL;
	}
	x->kind = (uint16_t)kind;
	x->framed = 1;
	x->len = (uint32_t)len;
	return x;
}

hwd_xmsg *hwd_xmsg_copy(const hw_msg *m, int kind, hw_wire_tx *tx, int *err)
{
	int64_t need = copy_size(m);
	if (need == -ENOTSUP)
		return copy_framed(m, kind, tx, err);
	hwd_xmsg *x = copy_decoded(m, kind, (size_t)need);
	if (!x)
		*err = -ENOMEM;
	return x;
}

int hwd_xmsg_msg(hwd_xmsg *x, uint32_t cluster_id, hw_wire_arena *arena, hw_msg *out, hw_wire_drop *why)
{
	if (!x->framed) {
		*out = x->m;
		return 0;
	}
	hw_wire_hdr h;
	hw_wire_arena_init(arena, arena->base, arena->cap);
	return hw_wire_decode_local((const uint8_t *)x->body, x->len, cluster_id, arena, &h, out, why, NULL)
		       ? -EBADMSG : 0;
}

void hwd_xmsg_free(hwd_xmsg *x)
{
	if (!x)
		return;
	if (!x->framed && x->m.type == HW_MSG_FETCH_RESP &&
	    (x->kind == HWD_XMSG_MSG || x->kind == HWD_XMSG_SEND)) {
		hw_net_ref_ops ops = hwd_log_ref_ops();
		for (uint16_t i = 0; x->m.u.fetch_resp.parts && i < x->m.u.fetch_resp.n_parts; i++)
			if (x->m.u.fetch_resp.parts[i].records_ref)
				ops.release(x->m.u.fetch_resp.parts[i].records_ref);
	}
	free(x);
}
