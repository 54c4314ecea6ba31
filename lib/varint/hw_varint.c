/* hw_varint.c — Kafka varint / zigzag codecs. See hw_varint.h. */
#include "hw_varint.h"

#include <errno.h>

int hw_varint_put_u64(uint8_t *buf, size_t cap, uint64_t v)
{
	int n = hw_varint_size_u64(v);
	if ((size_t)n > cap)
		return -EMSGSIZE;
	for (int i = 0; i < n - 1; i++) {
		buf[i] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	buf[n - 1] = (uint8_t)v;
	return n;
}

int hw_varint_put_u32(uint8_t *buf, size_t cap, uint32_t v)
{
	return hw_varint_put_u64(buf, cap, v);
}

int hw_varint_put_i32(uint8_t *buf, size_t cap, int32_t v)
{
	return hw_varint_put_u64(buf, cap, hw_zigzag32(v));
}

int hw_varlong_put_i64(uint8_t *buf, size_t cap, int64_t v)
{
	return hw_varint_put_u64(buf, cap, hw_zigzag64(v));
}

/* Shared decoder: at most maxb bytes; the last permitted byte may only carry
 * (bits - 7 * (maxb - 1)) value bits. */
static int hw_varint_get(const uint8_t *buf, size_t len, int maxb, int bits, uint64_t *out)
{
	uint64_t v = 0;
	for (int i = 0; i < maxb; i++) {
		if ((size_t)i >= len)
			return -EMSGSIZE;
		uint8_t b = buf[i];
		if (i == maxb - 1) {
			if (b & 0x80)
				return -EOVERFLOW; /* would need another byte */
			int room = bits - 7 * (maxb - 1);
			if (b >> room)
				return -EOVERFLOW; /* value bits past the type width */
		}
		v |= (uint64_t)(b & 0x7F) << (7 * i);
		if (!(b & 0x80)) {
			*out = v;
			return i + 1;
		}
	}
	return -EOVERFLOW; /* unreachable: the last byte returns above */
}

int hw_varint_get_u32(const uint8_t *buf, size_t len, uint32_t *out)
{
	uint64_t v;
	int n = hw_varint_get(buf, len, HW_VARINT_MAX_BYTES, 32, &v);
	if (n > 0)
		*out = (uint32_t)v;
	return n;
}

int hw_varint_get_u64(const uint8_t *buf, size_t len, uint64_t *out)
{
	return hw_varint_get(buf, len, HW_VARLONG_MAX_BYTES, 64, out);
}

int hw_varint_get_i32(const uint8_t *buf, size_t len, int32_t *out)
{
	uint32_t u;
	int n = hw_varint_get_u32(buf, len, &u);
	if (n > 0)
		*out = hw_unzigzag32(u);
	return n;
}

int hw_varlong_get_i64(const uint8_t *buf, size_t len, int64_t *out)
{
	uint64_t u;
	int n = hw_varint_get_u64(buf, len, &u);
	if (n > 0)
		*out = hw_unzigzag64(u);
	return n;
}
