/* hw_varint.h — Kafka's variable-length integers (ByteUtils), bounds-checked.
 *
 * Design note
 * -----------
 * Kafka's record format v2 and its flexible protocol versions use protobuf
 * style base-128 varints: 7 value bits per byte, least significant group
 * first, high bit set on every byte but the last. Three flavours, named as in
 * org.apache.kafka.common.utils.ByteUtils:
 *
 *   unsigned varint  (u32)   writeUnsignedVarint / readUnsignedVarint
 *   unsigned varlong (u64)   writeUnsignedVarlong / readUnsignedVarlong
 *   varint   (int32, zigzag) writeVarint / readVarint    (0,-1,1,-2.. -> 0,1,2,3..)
 *   varlong  (int64, zigzag) writeVarlong / readVarlong
 *
 * Encoders produce exactly Kafka's bytes (the minimal encoding). Decoders
 * accept Kafka's bytes and reject, without reading past len:
 *   - truncated input (the last byte read still has the continuation bit):
 *     -EMSGSIZE;
 *   - too long (a 6th byte for a 32-bit value, an 11th for 64-bit), or a final
 *     byte carrying bits beyond the type's width (5th byte > 0x0F, 10th byte >
 *     0x01): -EOVERFLOW. Kafka throws "Varint is too long" for the first case
 *     and silently drops the excess bits in the second; hiwater rejects both,
 *     since no Kafka encoder ever produces them.
 * Non-minimal encodings that fit (e.g. 0x80 0x00 for 0) are accepted, as in
 * Kafka. All functions are pure, thread-safe, and never touch errno.
 */
#ifndef HW_VARINT_H
#define HW_VARINT_H
#include <stddef.h>
#include <stdint.h>

#define HW_VARINT_MAX_BYTES  5   /* longest 32-bit varint */
#define HW_VARLONG_MAX_BYTES 10  /* longest 64-bit varlong */

static inline uint32_t hw_zigzag32(int32_t v)
{
	return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}
static inline int32_t hw_unzigzag32(uint32_t u)
{
	return (int32_t)((u >> 1) ^ (0u - (u & 1u)));
}
static inline uint64_t hw_zigzag64(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t hw_unzigzag64(uint64_t u)
{
	return (int64_t)((u >> 1) ^ (0ull - (u & 1ull)));
}

/* Encoded sizes in bytes (1..5 / 1..10), as ByteUtils.sizeOf*. */
static inline int hw_varint_size_u64(uint64_t v)
{
	int n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}
static inline int hw_varint_size_u32(uint32_t v) { return hw_varint_size_u64(v); }
static inline int hw_varint_size_i32(int32_t v) { return hw_varint_size_u64(hw_zigzag32(v)); }
static inline int hw_varlong_size_i64(int64_t v) { return hw_varint_size_u64(hw_zigzag64(v)); }

/* Encoders: write v at buf (capacity cap bytes). Return the number of bytes
 * written (>= 1), or -EMSGSIZE if cap is smaller than the encoded size, in
 * which case nothing is written. buf may be NULL iff cap == 0. */
int hw_varint_put_u32(uint8_t *buf, size_t cap, uint32_t v);
int hw_varint_put_u64(uint8_t *buf, size_t cap, uint64_t v);
int hw_varint_put_i32(uint8_t *buf, size_t cap, int32_t v);
int hw_varlong_put_i64(uint8_t *buf, size_t cap, int64_t v);

/* Decoders: read one value from buf[0..len). Return the number of bytes
 * consumed (>= 1) and store the value in *out, or:
 *   -EMSGSIZE  input ends before the value does (len == 0 included);
 *   -EOVERFLOW more than 5 (u32/i32) or 10 (u64/i64) bytes, or the last byte
 *              holds bits that do not fit the type.
 * On error *out is untouched. Never reads buf[len] or beyond. */
int hw_varint_get_u32(const uint8_t *buf, size_t len, uint32_t *out);
int hw_varint_get_u64(const uint8_t *buf, size_t len, uint64_t *out);
int hw_varint_get_i32(const uint8_t *buf, size_t len, int32_t *out);
int hw_varlong_get_i64(const uint8_t *buf, size_t len, int64_t *out);

#endif
