/* hw_kafka_api.c — API table and request/response headers. See hw_kafka_api.h. */
#include "hw_kafka_api.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

static const hw_kafka_api_info api_rows[HW_KAPI__COUNT] = {
#define HW_KAFKA_API_ROW(nm, k, mn, mx, fl, own) \
	{ #nm, (k), (mn), (mx), (fl), HW_KAPI_OWNER_##own },
	HW_KAFKA_API_TABLE(HW_KAFKA_API_ROW)
#undef HW_KAFKA_API_ROW
};

const hw_kafka_api_info *hw_kafka_api_at(int idx)
{
	if (idx < 0 || idx >= HW_KAPI__COUNT)
		idx = 0;
	return &api_rows[idx];
}

int hw_kafka_api_index(int16_t api_key)
{
	for (int i = 0; i < HW_KAPI__COUNT; i++)
		if (api_rows[i].key == api_key)
			return i;
	return -1;
}

const hw_kafka_api_info *hw_kafka_api_find(int16_t api_key)
{
	int i = hw_kafka_api_index(api_key);
	return i < 0 ? NULL : &api_rows[i];
}

int hw_kafka_api_supported(int16_t api_key, int16_t version)
{
	const hw_kafka_api_info *a = hw_kafka_api_find(api_key);
	return a && a->min >= 0 && version >= a->min && version <= a->max;
}

int hw_kafka_api_flexible(int16_t api_key, int16_t version)
{
	const hw_kafka_api_info *a = hw_kafka_api_find(api_key);
	return a && version >= a->flex;
}

int hw_kafka_req_hdr_decode(hw_kr *r, hw_kafka_req_hdr *h)
{
	h->api_key = hw_kr_i16(r);
	h->api_version = hw_kr_i16(r);
	h->correlation_id = hw_kr_i32(r);
	h->flexible = hw_kafka_api_flexible(h->api_key, h->api_version);
	h->hdr_version = h->flexible ? 2 : 1;
	h->client_id = hw_kr_nstr(r);
	h->client_host = (hw_kstr){ NULL, -1 };
	if (h->flexible)
		hw_kr_tags(r, NULL, NULL);
	return r->err;
}

/* "hiwater\0" + 4 zero bytes: 12 bytes that make the UUID's high half
 * non-zero (Kafka's ZERO_UUID and METADATA_TOPIC_ID have a zero high half) */
static const uint8_t topic_uuid_prefix[12] = { 'h', 'i', 'w', 'a', 't', 'e', 'r', 0, 0, 0, 0, 0 };

void hw_kafka_topic_uuid(uint32_t id, uint8_t out[16])
{
	memcpy(out, topic_uuid_prefix, sizeof(topic_uuid_prefix));
	out[12] = (uint8_t)(id >> 24);
	out[13] = (uint8_t)(id >> 16);
	out[14] = (uint8_t)(id >> 8);
	out[15] = (uint8_t)id;
}

int hw_kafka_topic_uuid_id(const uint8_t uuid[16], uint32_t *id)
{
	if (memcmp(uuid, topic_uuid_prefix, sizeof(topic_uuid_prefix)))
		return -ENOENT;
	*id = (uint32_t)uuid[12] << 24 | (uint32_t)uuid[13] << 16 | (uint32_t)uuid[14] << 8 | uuid[15];
	return 0;
}

void hw_kafka_req_hdr_encode(hw_kw *w, const hw_kafka_req_hdr *h)
{
	hw_kw_i16(w, h->api_key);
	hw_kw_i16(w, h->api_version);
	hw_kw_i32(w, h->correlation_id);
	hw_kw_nstr(w, h->client_id.len < 0 ? NULL : h->client_id.p,
		   h->client_id.len < 0 ? 0 : (size_t)h->client_id.len);
	if (hw_kafka_api_flexible(h->api_key, h->api_version))
		hw_kw_tags_none(w);
}

int hw_kafka_resp_hdr_flexible(int16_t api_key, int16_t version)
{
	return api_key != HW_KAPI_API_VERSIONS && hw_kafka_api_flexible(api_key, version);
}

size_t hw_kafka_resp_begin(hw_kw *w, int32_t correlation_id, bool flexible_hdr)
{
	size_t at = hw_kw_skip(w, 4);
	hw_kw_i32(w, correlation_id);
	if (flexible_hdr)
		hw_kw_tags_none(w);
	return w->err ? SIZE_MAX : at;
}

int hw_kafka_resp_end(hw_kw *w, size_t at)
{
	if (w->err)
		return w->err;
	if (at == SIZE_MAX || at + 4 > w->len || w->len - at - 4 > INT32_MAX)
		return -EINVAL;
	hw_kw_patch_i32(w, at, (int32_t)(w->len - at - 4));
	return 0;
}
