/* hw_ptiming.c — acks=all stage arithmetic (hw_ptiming.h, docs/breakdown.md). */
#include "hw_ptiming.h"

static const char *const labels[HW_PT__COUNT] = {
#define HW_PT_LABEL(n, k, l) l,
	HW_PT_STAGE_TABLE(HW_PT_LABEL)
#undef HW_PT_LABEL
};
static const char *const keys[HW_PT__COUNT] = {
#define HW_PT_KEY(n, k, l) k,
	HW_PT_STAGE_TABLE(HW_PT_KEY)
#undef HW_PT_KEY
};

const char *hw_pt_stage_label(int stage)
{
	return stage >= 0 && stage < HW_PT__COUNT ? labels[stage] : "?";
}

const char *hw_pt_stage_key(int stage)
{
	return stage >= 0 && stage < HW_PT__COUNT ? keys[stage] : "?";
}

static uint32_t sat(int64_t d)
{
	return d <= 0 ? 0 : d >= (int64_t)UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

/* t raised to at least floor: stamps made monotone along the path */
static int64_t at_least(int64_t t, int64_t floor) { return t > floor ? t : floor; }

void hw_pt_compute(const hw_pt_stamps *s, hw_produce_timing *out)
{
	for (int i = 0; i < HW_PT__COUNT; i++)
		out->stage_ns[i] = 0;
	out->critical = s->mv.critical;
	int64_t rx = s->rx_ns;
	int64_t start = at_least(s->start_ns, rx);
	int64_t app = at_least(s->appended_ns, start);
	int64_t hw = at_least(s->mv.hw_ns, app);
	int64_t done = at_least(s->done_ns, hw);
	out->stage_ns[HW_PT_QUEUE] = sat(start - rx);
	out->stage_ns[HW_PT_APPEND] = sat(app - start);
	if (s->mv.critical < 0) {
		out->stage_ns[HW_PT_LEADER_WRITE] = sat(hw - app);
	} else {
		int64_t begin = at_least(s->mv.resp_begin_ns, app);
		if (begin > hw)
			begin = hw;
		int64_t sent = at_least(s->mv.resp_sent_ns, begin);
		if (sent > hw)
			sent = hw;
		int64_t frx = at_least(s->mv.fetch_rx_ns, sent);
		if (frx > hw)
			frx = hw;
		int64_t rtt = frx - sent;
		int64_t wr = s->mv.turn_write_ns < (uint64_t)rtt ? (int64_t)s->mv.turn_write_ns : rtt;
		int64_t sd = s->mv.turn_send_ns < (uint64_t)(rtt - wr) ? (int64_t)s->mv.turn_send_ns : rtt - wr;
		out->stage_ns[HW_PT_DISPATCH_WAIT] = sat(begin - app);
		out->stage_ns[HW_PT_DISPATCH_SEND] = sat(sent - begin);
		out->stage_ns[HW_PT_FOLLOWER_WRITE] = sat(wr);
		out->stage_ns[HW_PT_FOLLOWER_SEND] = sat(sd);
		out->stage_ns[HW_PT_FOLLOWER_NET] = sat(rtt - wr - sd);
		out->stage_ns[HW_PT_HW_ADVANCE] = sat(hw - frx);
	}
	out->stage_ns[HW_PT_RESPOND] = sat(done - hw);
}

uint64_t hw_pt_total_ns(const hw_produce_timing *t)
{
	uint64_t sum = 0;
	for (int i = 0; i < HW_PT__COUNT; i++)
		sum += t->stage_ns[i];
	return sum;
}

/* hw_repl_int.h */
#include "hw_repl_int.h"

void hw_pt_note_hw_move(hw_part *p)
{
	hw_rm *rm = p->rm;
	hw_hw_move *mv = &p->hw_move;
	mv->hw_ns = hw_clock_ns(rm->clock);
	hw_replica_state *r = rm->timing_rs;
	if (r && r >= p->rs && r < p->rs + p->nrs) {
		mv->critical = r->id;
		mv->resp_begin_ns = r->resp_begin_ns;
		mv->resp_sent_ns = r->resp_sent_ns;
		mv->fetch_rx_ns = rm->timing_fetch_rx_ns;
		mv->turn_write_ns = rm->timing_turn_write_ns;
		mv->turn_send_ns = rm->timing_turn_send_ns;
	} else {
		mv->critical = -1;
		mv->resp_begin_ns = mv->resp_sent_ns = mv->fetch_rx_ns = 0;
		mv->turn_write_ns = mv->turn_send_ns = 0;
	}
}
