/* hwd_route.c — reactor and role of a received message (hwd_route.h). */
#include "hwd_route.h"
#include "hwd_shard_of.h"

int hwd_route_parts(const hw_msg *m, hwd_parts *v)
{
	if (hw_msg_owner_of(m->type) != HW_OWNER_PARTITION)
		return 0;
	switch (m->type) {
	case HW_MSG_PRODUCE:
		*v = (hwd_parts){ (const uint8_t *)&m->u.produce.tp, sizeof(hw_tp), 1, 0 };
		return 1;
	case HW_MSG_ALTER_PARTITION_RESP:
		*v = (hwd_parts){ (const uint8_t *)&m->u.alter_resp.tp, sizeof(hw_tp), 1, 0 };
		return 1;
	case HW_MSG_PARTITION_STATE:
		*v = (hwd_parts){ (const uint8_t *)&m->u.pstate.tp, sizeof(hw_tp), 1, 0 };
		return 1;
	case HW_MSG_FETCH:
		*v = (hwd_parts){ (const uint8_t *)m->u.fetch.parts, sizeof(hw_fetch_part), m->u.fetch.n_parts, 1 };
		return 1;
	case HW_MSG_FETCH_RESP:
		*v = (hwd_parts){ (const uint8_t *)m->u.fetch_resp.parts, sizeof(hw_fetch_resp_part),
				  m->u.fetch_resp.n_parts, 1 };
		return 1;
	case HW_MSG_OFFSETS_FOR_EPOCH:
		*v = (hwd_parts){ (const uint8_t *)m->u.ofe.parts, sizeof(hw_ofe_part), m->u.ofe.n_parts, 1 };
		return 1;
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP:
		*v = (hwd_parts){ (const uint8_t *)m->u.ofe_resp.parts, sizeof(hw_ofe_resp_part),
				  m->u.ofe_resp.n_parts, 1 };
		return 1;
	}
	return 0; /* a PARTITION row not named here: reactor 0 (the unit test fails) */
}

void hwd_route_set_parts(hw_msg *m, const void *parts, uint16_t n)
{
	switch (m->type) {
	case HW_MSG_FETCH:
		m->u.fetch.parts = parts;
		m->u.fetch.n_parts = n;
		break;
	case HW_MSG_FETCH_RESP:
		m->u.fetch_resp.parts = parts;
		m->u.fetch_resp.n_parts = n;
		break;
	case HW_MSG_OFFSETS_FOR_EPOCH:
		m->u.ofe.parts = parts;
		m->u.ofe.n_parts = n;
		break;
	case HW_MSG_OFFSETS_FOR_EPOCH_RESP:
		m->u.ofe_resp.parts = parts;
		m->u.ofe_resp.n_parts = n;
		break;
	}
}

static int tp_reactor(const uint8_t *p, int n_reactors)
{
	const hw_tp *tp = (const hw_tp *)p;
	return hwd_shard_of(tp->topic_id, tp->partition, n_reactors);
}

int hwd_route_reactor(const hw_msg *m, int n_reactors, int self)
{
	hwd_parts v;
	if (!hwd_route_parts(m, &v))
		return 0;
	if (v.n == 0 || !v.base)
		return self;
	int owner = tp_reactor(v.base, n_reactors);
	for (uint16_t i = 1; i < v.n; i++)
		if (tp_reactor(v.base + i * v.elem, n_reactors) != owner)
			return -1;
	return owner;
}

static const char *const role_names[] = {
#define N(n) #n,
	HWD_ROLE_TABLE(N)
#undef N
};
const char *hwd_role_name(int r) { return r >= 0 && r < HWD_ROLE__COUNT ? role_names[r] : "UNKNOWN_ROLE"; }

hwd_role hwd_route_role(int type, int is_broker)
{
	switch (hw_msg_owner_of(type)) {
	case HW_OWNER_CONTROLLER:
		return HWD_ROLE_CONTROLLER;
	case HW_OWNER_VIEW:
		return is_broker ? HWD_ROLE_BROKER : HWD_ROLE_CONTROLLER;
	default: /* PARTITION, NODE, no row */
		return is_broker ? HWD_ROLE_BROKER : HWD_ROLE_NONE;
	}
}
