/* hw_frag.c — hiwater fragment codec and reassembler. Format, contract and
 * design in hw_frag.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_frag.h"
#include "hw_bytes.h"

static const char *const drop_names[] = {
#define X(n, e, d) #n,
	HW_FRAG_DROP_TABLE(X)
#undef X
};
static const char *const drop_descs[] = {
#define X(n, e, d) d,
	HW_FRAG_DROP_TABLE(X)
#undef X
};
static const int drop_errnos[] = {
#define X(n, e, d) e,
	HW_FRAG_DROP_TABLE(X)
#undef X
};

const char *hw_frag_drop_name(int reason)
{
	return reason >= 0 && reason < HW_FRAG_DROP__COUNT ? drop_names[reason] : "UNKNOWN_DROP";
}

const char *hw_frag_drop_desc(int reason)
{
	return reason >= 0 && reason < HW_FRAG_DROP__COUNT ? drop_descs[reason] : "unknown drop reason";
}

int hw_frag_drop_errno(int reason)
{
	return reason >= 0 && reason < HW_FRAG_DROP__COUNT ? drop_errnos[reason] : EINVAL;
}

int hw_frag_plan(size_t total, size_t max_payload, uint16_t *frag_size)
{
	if (!frag_size || total == 0 || total > HW_FRAG_MAX_TOTAL)
		return -EINVAL;
	if (total <= max_payload)
		return 1;
	if (max_payload < HW_FRAG_HDR_LEN + HW_FRAG_MIN_SIZE)
		return -EMSGSIZE;
	size_t fs = max_payload - HW_FRAG_HDR_LEN;   /* < total: total > max_payload */
	size_t count = (total + fs - 1) / fs;
	if (count > HW_FRAG_MAX_COUNT)
		return -EMSGSIZE;                     /* unreachable with fs >= MIN_SIZE; kept as a guard */
	*frag_size = (uint16_t)fs;
	return (int)count;
}

/* The checks of one header, in the table's order. HW_FRAG_DROP__COUNT if
 * it is good. Reads len >= HW_FRAG_HDR_LEN bytes of b. */
static hw_frag_drop check(const uint8_t *b, size_t len, hw_frag_hdr *h)
{
	if (hw_be32_get(b) != HW_FRAG_MAGIC)
		return HW_FRAG_DROP_BAD_MAGIC;
	h->version = b[4];
	if (h->version < HW_FRAG_VERSION_MIN || h->version > HW_FRAG_VERSION)
		return HW_FRAG_DROP_BAD_VERSION;
	if (b[5] != 0)
		return HW_FRAG_DROP_BAD_RESERVED;
	h->index = hw_be16_get(b + 6);
	h->count = hw_be16_get(b + 8);
	h->frag_size = hw_be16_get(b + 10);
	h->msg_id = hw_be32_get(b + 12);
	h->total_len = hw_be32_get(b + 16);
	h->offset = hw_be32_get(b + 20);
	h->payload_len = (uint32_t)(len - HW_FRAG_HDR_LEN);
	if (h->total_len == 0 || h->total_len > HW_FRAG_MAX_TOTAL)
		return HW_FRAG_DROP_BAD_TOTAL;
	if (h->frag_size < HW_FRAG_MIN_SIZE || h->frag_size >= h->total_len)
		return HW_FRAG_DROP_BAD_SIZE;
	if (h->count != (h->total_len + h->frag_size - 1) / h->frag_size)
		return HW_FRAG_DROP_BAD_COUNT;
	if (h->index >= h->count)
		return HW_FRAG_DROP_BAD_INDEX;
	if (h->offset != (uint32_t)h->index * h->frag_size)
		return HW_FRAG_DROP_BAD_OFFSET;
	uint32_t rest = h->total_len - h->offset;   /* > 0: index < count */
	if (len - HW_FRAG_HDR_LEN != (rest < h->frag_size ? rest : h->frag_size))
		return HW_FRAG_DROP_BAD_LENGTH;
	return HW_FRAG_DROP__COUNT;
}

int hw_frag_encode(const hw_frag_hdr *h, uint8_t *buf, size_t cap)
{
	if (!h || !buf)
		return -EINVAL;
	/* validate by decoding what would be written, with the payload size
	 * the fields imply */
	uint8_t tmp[HW_FRAG_HDR_LEN];
	hw_be32_put(tmp, HW_FRAG_MAGIC);
	tmp[4] = HW_FRAG_VERSION;
	tmp[5] = 0;
	hw_be16_put(tmp + 6, h->index);
	hw_be16_put(tmp + 8, h->count);
	hw_be16_put(tmp + 10, h->frag_size);
	hw_be32_put(tmp + 12, h->msg_id);
	hw_be32_put(tmp + 16, h->total_len);
	hw_be32_put(tmp + 20, h->offset);
	if (h->total_len == 0 || h->total_len > HW_FRAG_MAX_TOTAL || h->offset >= h->total_len)
		return -EINVAL;
	uint32_t rest = h->total_len - h->offset;
	size_t plen = rest < h->frag_size ? rest : h->frag_size;
	hw_frag_hdr d;
	if (check(tmp, HW_FRAG_HDR_LEN + plen, &d) != HW_FRAG_DROP__COUNT)
		return -EINVAL;
	if (cap < HW_FRAG_HDR_LEN)
		return -ENOSPC;
	memcpy(buf, tmp, HW_FRAG_HDR_LEN);
	return HW_FRAG_HDR_LEN;
}

int hw_frag_decode(const uint8_t *buf, size_t len, hw_frag_hdr *out, hw_frag_drop *why)
{
	if (!out || !why || (!buf && len > 0))
		return -EINVAL;
	hw_frag_hdr h;
	hw_frag_drop r = len < HW_FRAG_HDR_LEN ? HW_FRAG_DROP_TRUNCATED : check(buf, len, &h);
	if (r != HW_FRAG_DROP__COUNT) {
		*why = r;
		return -drop_errnos[r];
	}
	*out = h;
	return 0;
}

int hw_frag_is_fragment(const uint8_t *buf, size_t len)
{
	return buf && len >= 4 && hw_be32_get(buf) == HW_FRAG_MAGIC;
}

/* ---- reassembly */

typedef struct fkey {
	uint32_t ip;
	uint32_t msg_id;
	uint16_t port;
} fkey;

typedef struct slot {
	fkey key;
	uint8_t used;
	uint16_t count, frag_size, got;
	uint32_t total;
	int64_t started;
	int64_t last;                                    /* newest fragment stored (expiry) */
	uint64_t have[(HW_FRAG_MAX_COUNT + 63) / 64];  /* fragment index bitmap */
	uint8_t *buf;                                    /* HW_FRAG_MAX_TOTAL bytes */
} slot;

typedef struct recent {
	fkey key;
	uint8_t valid;
	uint8_t completed;   /* 1: delivered (-> DUPLICATE), 0: given up (-> LATE) */
} recent;

struct hw_frag_reasm {
	unsigned n_slots;
	int64_t timeout_ns;
	slot *slots;
	uint8_t *bufs;
	recent recent[HW_FRAG_RECENT];
	unsigned recent_next;
	unsigned in_use;
	size_t mem;
	hw_frag_stats st;
};

hw_frag_reasm *hw_frag_reasm_create(unsigned n_slots, int64_t timeout_ns, int *err)
{
	int rc = -EINVAL;
	hw_frag_reasm *r = NULL;
	if (n_slots == 0 || n_slots > HW_FRAG_MAX_SLOTS || timeout_ns <= 0)
		goto fail;
	rc = -ENOMEM;
	r = calloc(1, sizeof *r);
	if (!r)
		goto fail;
	r->n_slots = n_slots;
	r->timeout_ns = timeout_ns;
	r->slots = calloc(n_slots, sizeof *r->slots);
	r->bufs = malloc((size_t)n_slots * HW_FRAG_MAX_TOTAL);
	if (!r->slots || !r->bufs)
		goto fail;
	for (unsigned i = 0; i < n_slots; i++)
		r->slots[i].buf = r->bufs + (size_t)i * HW_FRAG_MAX_TOTAL;
	r->mem = sizeof *r + (size_t)n_slots * (sizeof(slot) + HW_FRAG_MAX_TOTAL);
	return r;
fail:
	hw_frag_reasm_destroy(r);
	if (err)
		*err = rc;
	return NULL;
}

void hw_frag_reasm_destroy(hw_frag_reasm *r)
{
	if (!r)
		return;
	free(r->slots);
	free(r->bufs);
	free(r);
}

static int key_eq(const fkey *a, const fkey *b)
{
	return a->ip == b->ip && a->port == b->port && a->msg_id == b->msg_id;
}

static void remember(hw_frag_reasm *r, const fkey *k, int completed)
{
	recent *e = &r->recent[r->recent_next++ % HW_FRAG_RECENT];
	e->key = *k;
	e->valid = 1;
	e->completed = (uint8_t)completed;
}

/* Give up an incomplete message (TIMEOUT or EVICTED). */
static void give_up(hw_frag_reasm *r, slot *s, hw_frag_drop why)
{
	r->st.drops[why]++;
	r->st.fragments_discarded += s->got;
	remember(r, &s->key, 0);
	s->used = 0;
	r->in_use--;
}

unsigned hw_frag_reasm_expire(hw_frag_reasm *r, int64_t now_ns)
{
	unsigned n = 0;
	if (!r || !r->in_use)
		return 0;
	for (unsigned i = 0; i < r->n_slots; i++) {
		slot *s = &r->slots[i];
		if (s->used && now_ns - s->last > r->timeout_ns) {
			give_up(r, s, HW_FRAG_DROP_TIMEOUT);
			n++;
		}
	}
	return n;
}

static int drop(hw_frag_reasm *r, hw_frag_drop *why, hw_frag_drop reason)
{
	r->st.drops[reason]++;
	*why = reason;
	return -drop_errnos[reason];
}

/* A free slot for a new message: a free one, else the oldest incomplete
 * message's (EVICTED). */
static slot *take_slot(hw_frag_reasm *r)
{
	slot *oldest = NULL;
	for (unsigned i = 0; i < r->n_slots; i++) {
		slot *s = &r->slots[i];
		if (!s->used)
			return s;
		if (!oldest || s->started < oldest->started)
			oldest = s;
	}
	give_up(r, oldest, HW_FRAG_DROP_EVICTED);
	return oldest;
}

int hw_frag_reasm_push(hw_frag_reasm *r, uint32_t src_ip, uint16_t src_port, const uint8_t *buf, size_t len,
		       int64_t now_ns, const uint8_t **frame, size_t *frame_len, hw_frag_drop *why)
{
	if (!r || !frame || !frame_len || !why || (!buf && len > 0))
		return -EINVAL;
	r->st.fragments++;
	hw_frag_hdr h;
	hw_frag_drop bad;
	if (hw_frag_decode(buf, len, &h, &bad) < 0)
		return drop(r, why, bad);
	fkey k = { .ip = src_ip, .msg_id = h.msg_id, .port = src_port };
	slot *s = NULL;
	for (unsigned i = 0; i < r->n_slots && !s; i++)
		if (r->slots[i].used && key_eq(&r->slots[i].key, &k))
			s = &r->slots[i];
	if (s) {
		if (h.total_len != s->total || h.count != s->count || h.frag_size != s->frag_size)
			return drop(r, why, HW_FRAG_DROP_INCONSISTENT);
		if (s->have[h.index / 64] & (1ull << (h.index % 64)))
			return drop(r, why, HW_FRAG_DROP_DUPLICATE);
	} else {
		for (unsigned i = 0; i < HW_FRAG_RECENT; i++) {
			const recent *e = &r->recent[i];
			if (e->valid && key_eq(&e->key, &k))
				return drop(r, why, e->completed ? HW_FRAG_DROP_DUPLICATE : HW_FRAG_DROP_LATE);
		}
		s = take_slot(r);
		memset(s, 0, offsetof(slot, buf));
		s->used = 1;
		s->key = k;
		s->count = h.count;
		s->frag_size = h.frag_size;
		s->total = h.total_len;
		s->started = now_ns;
		r->in_use++;
		r->st.messages_started++;
	}
	/* decode proved offset + payload_len <= total_len <= HW_FRAG_MAX_TOTAL */
	memcpy(s->buf + h.offset, buf + HW_FRAG_HDR_LEN, h.payload_len);
	s->have[h.index / 64] |= 1ull << (h.index % 64);
	s->got++;
	s->last = now_ns;
	r->st.fragments_accepted++;
	if (s->got < s->count)
		return 0;
	/* every index once, no overlap, no hole (decode's offset/length rules):
	 * the frame is whole */
	r->st.messages_completed++;
	r->st.bytes_completed += s->total;
	remember(r, &k, 1);
	s->used = 0;                 /* its bytes stay until the slot is taken again */
	r->in_use--;
	*frame = s->buf;
	*frame_len = s->total;
	return 1;
}

const hw_frag_stats *hw_frag_reasm_stats(const hw_frag_reasm *r)
{
	return &r->st;
}

size_t hw_frag_reasm_mem(const hw_frag_reasm *r)
{
	return r->mem;
}

unsigned hw_frag_reasm_in_use(const hw_frag_reasm *r)
{
	return r->in_use;
}
