/* fuzz_piece.c — libFuzzer target for the batch-piece assembler
 * (hw_wire_piece.h, docs/wire.md#batch-pieces). The input is a sequence of
 * pieces, each {u8 batch_len_lo, u8 batch_len_hi, u16 off, u8 len} then
 * len bytes, fed to one assembler with a limit of 4096 bytes. Checked: a
 * batch is handed out only when every byte [0, batch_len) was fed in one
 * unbroken run of consecutive pieces since a piece at offset 0, and it
 * equals exactly those bytes (a shadow copy); refusals carry a reason; no
 * partial batch is ever handed out. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hw_wire_piece.h"

#define LIMIT 4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t shadow[65536];
	hw_piece_asm a = { 0 };
	uint32_t run_len = 0, run_have = 0;   /* the shadow's batch, 0: none */
	size_t pos = 0;
	while (size - pos >= 5) {
		uint32_t blen = (uint32_t)data[pos] | (uint32_t)data[pos + 1] << 8;
		uint32_t off = (uint32_t)data[pos + 2] << 8 | data[pos + 3];
		uint32_t len = data[pos + 4];
		pos += 5;
		if (len > size - pos)
			len = (uint32_t)(size - pos);
		const uint8_t *p = data + pos;
		pos += len;
		const uint8_t *out = NULL;
		hw_piece_drop why = HW_PIECE_DROP__COUNT;
		int rc = hw_piece_feed(&a, LIMIT, blen, off, p, len, &out, &why);
		int valid = len && off <= blen && len <= blen - off;
		if (!valid) {
			if (rc != -EINVAL)
				abort();
			continue;   /* arguments a decoder never passes: state unspecified but safe */
		}
		/* the shadow model */
		int expect;
		if (blen > LIMIT) {
			expect = -EMSGSIZE;
			run_len = 0;
		} else if (off == 0) {
			run_len = blen;
			memcpy(shadow, p, len);
			run_have = len;
			expect = run_have == run_len ? 1 : 0;
		} else if (run_len && run_len == blen && run_have == off) {
			memcpy(shadow + off, p, len);
			run_have += len;
			expect = run_have == run_len ? 1 : 0;
		} else {
			expect = -EPROTO;
			run_len = 0;
		}
		if (rc != expect && !(rc == -ENOMEM && why == HW_PIECE_DROP_NO_MEMORY))
			abort();
		if (rc < 0 && rc != -EINVAL && why >= HW_PIECE_DROP__COUNT)
			abort();   /* a refusal names its reason */
		if (rc == -ENOMEM)
			run_len = 0;
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
