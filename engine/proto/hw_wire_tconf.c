/* hw_wire_tconf.c — PARTITION_STATE's topic config trailer (hw_wire.h,
 * docs/kafka.md "Topic configuration"): u8 n (1..HW_TC_COUNT), n x { u8 id,
 * i64 value }, ids ascending, LOG rows of engine/iface/hw_topic_config.h
 * only, every value one hw_tc_parse could have produced. */
#include "hw_wire_io.h"
#include "hw_topic_config.h"

void hw_wire_enc_tconf(hw_wr *w, const hw_topic_config *tc)
{
	uint32_t set = tc->set;
	uint8_t n = 0;
	if (set >> HW_TC_COUNT) {
		hw_wr_einval(w);
		return;
	}
	for (int i = 0; i < HW_TC_COUNT; i++)
		if (set & (1u << i)) {
			if (!hw_tc_def_of(i)->log) {
				hw_wr_einval(w); /* CTRL rows have their own fields */
				return;
			}
			n++;
		}
	hw_wr_u8(w, n);
	for (int i = 0; i < HW_TC_COUNT; i++)
		if (set & (1u << i)) {
			hw_wr_u8(w, (uint8_t)i);
			hw_wr_i64(w, tc->v[i]);
		}
}

/* v is a value of row d (its type and range). */
static int value_ok(const hw_tc_def *d, int64_t v)
{
	switch ((hw_tc_type)d->type) {
	case HW_TC_T_I64: return v >= d->min && v <= d->max;
	case HW_TC_T_ORNEG1: return v == -1 || (v >= d->min && v <= d->max);
	case HW_TC_T_BOOL: return v == 0 || v == 1;
	case HW_TC_T_POLICY: return v >= 1 && v <= (HW_TC_POLICY_DELETE | HW_TC_POLICY_COMPACT);
	case HW_TC_T_RATIO: {
		double x = hw_tc_ratio(v);
		return x >= 0 && x <= 1;
	}
	default: return 0;
	}
}

void hw_wire_dec_tconf(hw_rd *r, hw_topic_config *tc)
{
	uint8_t n = hw_rd_u8(r);
	if (!r->bad && (n == 0 || n > HW_TC_COUNT))
		hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
	int last = -1;
	for (int k = 0; k < n && !r->bad; k++) {
		uint8_t id = hw_rd_u8(r);
		int64_t v = hw_rd_i64(r);
		const hw_tc_def *d = hw_tc_def_of(id);
		if (r->bad)
			break;
		if (!d || !d->log || (int)id <= last || !value_ok(d, v)) {
			hw_rd_fail(r, HW_WIRE_DROP_BAD_FIELD);
			break;
		}
		tc->set |= 1u << id;
		tc->v[id] = v;
		last = id;
	}
}
