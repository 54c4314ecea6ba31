/* fuzz_frag.c — libFuzzer target for hiwater fragments
 * (drivers/net/dpdk/hw_frag.h). For every input:
 *   - the input as one fragment: decode succeeds, and then the header
 *     re-encodes to the input's first 24 bytes, or it reports a reason of
 *     the table with that reason's errno and leaves the output untouched;
 *   - the input as a stream of hostile fragments from a few senders with
 *     time passing, fed to a small reassembler: every push returns 1, 0 or
 *     the reason's errno; completed frames are 1..65507 bytes; at most
 *     n_slots messages in flight; every fragment is accounted for (accepted
 *     or dropped by reason) and every message started is completed, timed
 *     out, evicted or still in flight;
 *   - the input as a frame, cut into fragments and delivered in an order,
 *     with duplicates, chosen by the input: it comes back byte for byte. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hw_frag.h"

static void check_decode(const uint8_t *data, size_t size)
{
	hw_frag_hdr out, before;
	memset(&out, 0xA5, sizeof out);
	before = out;
	hw_frag_drop why = HW_FRAG_DROP__COUNT;
	int rc = hw_frag_decode(data, size, &out, &why);
	if (rc < 0) {
		if ((int)why < 0 || why > HW_FRAG_DROP_BAD_LENGTH || rc != -hw_frag_drop_errno(why) ||
		    memcmp(&out, &before, sizeof out) != 0)
			abort();
		return;
	}
	if (rc != 0 || size < HW_FRAG_HDR_LEN || out.payload_len != size - HW_FRAG_HDR_LEN ||
	    out.offset + out.payload_len > out.total_len || out.index >= out.count || out.count < 2)
		abort();
	uint8_t again[HW_FRAG_HDR_LEN];
	if (hw_frag_encode(&out, again, sizeof again) != HW_FRAG_HDR_LEN || memcmp(again, data, sizeof again) != 0)
		abort();
}

static void check_accounting(const hw_frag_reasm *r, unsigned slots)
{
	const hw_frag_stats *s = hw_frag_reasm_stats(r);
	uint64_t frag_drops = 0;
	for (int i = 0; i < HW_FRAG_DROP__COUNT; i++)
		if (i != HW_FRAG_DROP_TIMEOUT && i != HW_FRAG_DROP_EVICTED)
			frag_drops += s->drops[i];
	if (hw_frag_reasm_in_use(r) > slots || s->fragments != s->fragments_accepted + frag_drops ||
	    s->messages_started != s->messages_completed + s->drops[HW_FRAG_DROP_TIMEOUT] +
				       s->drops[HW_FRAG_DROP_EVICTED] + hw_frag_reasm_in_use(r))
		abort();
}

/* records: u8 ctl, u16 len, len bytes (an exact-size copy is pushed) */
static void hostile_stream(const uint8_t *data, size_t size)
{
	if (size < 1)
		return;
	unsigned slots = 1 + data[0] % 4;
	hw_frag_reasm *r = hw_frag_reasm_create(slots, 1000, NULL);
	if (!r)
		abort();
	int64_t t = 0;
	size_t i = 1;
	while (i + 3 <= size) {
		uint8_t ctl = data[i];
		size_t len = (size_t)data[i + 1] << 8 | data[i + 2];
		i += 3;
		if (len > size - i)
			len = size - i;
		uint8_t *b = malloc(len ? len : 1);
		if (!b)
			abort();
		memcpy(b, data + i, len);
		i += len;
		t += (ctl >> 3 & 7) * 250;
		const uint8_t *out = NULL;
		size_t olen = 0;
		hw_frag_drop why = HW_FRAG_DROP__COUNT;
		int rc = hw_frag_reasm_push(r, ctl & 3, (uint16_t)(ctl >> 2 & 1), len ? b : NULL, len, t, &out, &olen,
					    &why);
		free(b);
		if (rc == 1) {
			if (!out || olen == 0 || olen > HW_FRAG_MAX_TOTAL)
				abort();
			volatile uint8_t x = out[0] ^ out[olen - 1];   /* readable */
			(void)x;
		} else if (rc < 0 && (why >= HW_FRAG_DROP__COUNT || rc != -hw_frag_drop_errno(why))) {
			abort();
		} else if (rc != 0 && rc != 1 && rc >= 0) {
			abort();
		}
		check_accounting(r, slots);
	}
	(void)hw_frag_reasm_expire(r, t + 2000);
	if (hw_frag_reasm_in_use(r) != 0)
		abort();
	check_accounting(r, slots);
	hw_frag_reasm_destroy(r);
}

/* The input (after 3 control bytes) is a frame; cut it, deliver every
 * fragment once in an input-chosen order, with input-chosen duplicates. */
static void round_trip(const uint8_t *data, size_t size)
{
	if (size < 4)
		return;
	size_t total = size - 3 > HW_FRAG_MAX_TOTAL ? HW_FRAG_MAX_TOTAL : size - 3;
	const uint8_t *frame = data + 3;
	size_t mp = HW_FRAG_HDR_LEN + HW_FRAG_MIN_SIZE + (((size_t)data[0] << 8 | data[1]) % 9000);
	uint16_t fs = 0;
	int n = hw_frag_plan(total, mp, &fs);
	if (n < 0)
		abort();
	if (n == 1)
		return;
	int order[HW_FRAG_MAX_COUNT];
	for (int k = 0; k < n; k++)
		order[k] = k;
	uint32_t s = (uint32_t)data[2] * 2654435761u + (uint32_t)total;
	for (int k = n - 1; k > 0; k--) {
		s = s * 1103515245u + 12345u;
		int j = (int)((s >> 8) % (uint32_t)(k + 1)), x = order[k];
		order[k] = order[j];
		order[j] = x;
	}
	hw_frag_reasm *r = hw_frag_reasm_create(2, 1000000, NULL);
	uint8_t *pkt = malloc(HW_FRAG_HDR_LEN + fs);
	if (!r || !pkt)
		abort();
	int done = 0;
	for (int k = 0; k < n; k++) {
		int idx = order[k];
		size_t off = (size_t)idx * fs, pl = total - off < fs ? total - off : fs;
		hw_frag_hdr h = { .index = (uint16_t)idx, .count = (uint16_t)n, .frag_size = fs, .msg_id = s,
				  .total_len = (uint32_t)total, .offset = (uint32_t)off };
		if (hw_frag_encode(&h, pkt, HW_FRAG_HDR_LEN) != HW_FRAG_HDR_LEN)
			abort();
		memcpy(pkt + HW_FRAG_HDR_LEN, frame + off, pl);
		int reps = (frame[off] & 7) == 0 && k + 1 < n ? 2 : 1;   /* some duplicates */
		for (int rep = 0; rep < reps; rep++) {
			const uint8_t *out = NULL;
			size_t olen = 0;
			hw_frag_drop why;
			int rc = hw_frag_reasm_push(r, 7, 9, pkt, HW_FRAG_HDR_LEN + pl, k, &out, &olen, &why);
			if (rep == 1) {
				if (rc != -EALREADY || why != HW_FRAG_DROP_DUPLICATE)
					abort();
			} else if (k + 1 < n) {
				if (rc != 0)
					abort();
			} else {
				if (rc != 1 || olen != total || memcmp(out, frame, total) != 0)
					abort();
				done = 1;
			}
		}
	}
	if (!done)
		abort();
	free(pkt);
	hw_frag_reasm_destroy(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b = malloc(size ? size : 1);
	if (!b)
		return 0;
	memcpy(b, data, size);
	check_decode(size ? b : NULL, size);
	hostile_stream(b, size);
	round_trip(b, size);
	free(b);
	return 0;
}
