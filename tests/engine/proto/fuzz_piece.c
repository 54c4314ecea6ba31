/* fuzz_piece.c — libFuzzer target for the batch-piece assembler
 * (hw_wire_piece.h, docs/wire.md#batch-pieces). The input is a sequence of
 * pieces, each {u8 batch_len_lo, u8 batch_len_hi, u16 off, u8 len, u8
 * base} then len bytes, fed to one assembler with a limit of 4096 bytes. A model (a
 * coverage map and a shadow copy) predicts every answer: a batch is handed
 * out exactly when every byte [0, batch_len) has arrived since the
 * assembly began (in any order), and it equals the bytes last fed for each
 * position; repeats are DUPLICATE and change nothing; a piece of another
 * batch (base or length) restarts; more than HW_PIECE_MAX_RANGES separate ranges drop the
 * assembly; refusals carry their reason; no partial batch is handed out. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hw_wire_piece.h"

#define LIMIT 4096u

static unsigned ranges(const uint8_t *cov, uint32_t n)
{
	unsigned r = 0;
	for (uint32_t i = 0; i < n; i++)
		if (cov[i] && (i == 0 || !cov[i - 1]))
			r++;
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t shadow[LIMIT], cov[LIMIT], cov2[LIMIT];
	hw_piece_asm a = { 0 };
	uint32_t run_len = 0;                 /* the model's batch, 0: none */
	size_t pos = 0;
	int64_t run_base = -1;
	while (size - pos >= 6) {
		uint32_t blen = (uint32_t)data[pos] | (uint32_t)data[pos + 1] << 8;
		uint32_t off = (uint32_t)data[pos + 2] << 8 | data[pos + 3];
		uint32_t len = data[pos + 4];
		int64_t base = data[pos + 5];
		pos += 6;
		if (len > size - pos)
			len = (uint32_t)(size - pos);
		const uint8_t *p = data + pos;
		pos += len;
		const uint8_t *out = NULL;
		hw_piece_drop why = HW_PIECE_DROP__COUNT;
		int rc = hw_piece_feed(&a, LIMIT, base, blen, off, p, len, &out, &why);
		if (!len || off > blen || len > blen - off) {
			if (rc != -EINVAL)
				abort();
			continue;   /* arguments a decoder never passes */
		}
		/* the model */
		int expect;
		if (blen > LIMIT) {
			expect = -EMSGSIZE;
			run_len = 0;
		} else {
			if (run_len != blen || run_base != base) {
				run_len = blen;
				run_base = base;
				memset(cov, 0, sizeof cov);
			}
			int all = 1;
			for (uint32_t i = off; i < off + len && all; i++)
				all = cov[i];
			/* a repeat only if one received range holds it all */
			int one = all;
			for (uint32_t i = off; one && i + 1 < off + len; i++)
				one = cov[i] && cov[i + 1];
			if (one) {
				expect = -EALREADY;
			} else {
				memcpy(cov2, cov, blen);
				memset(cov2 + off, 1, len);
				if (ranges(cov2, blen) > HW_PIECE_MAX_RANGES) {
					expect = -EPROTO;
					run_len = 0;
				} else {
					memcpy(cov, cov2, blen);
					memcpy(shadow + off, p, len);
					expect = ranges(cov, blen) == 1 && cov[0] && cov[blen - 1] ? 1 : 0;
				}
			}
		}
		if (rc == -ENOMEM && why == HW_PIECE_DROP_NO_MEMORY) {
			run_len = 0;
			continue;
		}
		if (rc != expect)
			abort();
		if (rc < 0 && why >= HW_PIECE_DROP__COUNT)
			abort();   /* a refusal names its reason */
		if (rc == 1) {
			if (!out || memcmp(out, shadow, blen) != 0)
				abort();
			hw_piece_reset(&a);
			run_len = 0;
		} else if (out) {
			abort();   /* never a partial batch */
		}
	}
	hw_piece_reset(&a);
	return 0;
}
