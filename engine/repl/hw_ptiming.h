/* hw_ptiming.h — acks=all stage timing on the leader (docs/breakdown.md).
 *
 * Design note. A PRODUCE that carries want_timing (tag 8) is answered with
 * the durations of the stages along its critical path, all taken on the
 * leader's clock except the critical follower's turnaround, which that
 * follower measures on its own clock and reports in its next FETCH (tag 8).
 * No timestamp of one process is ever subtracted from another's.
 *
 * The stamps: rx (frame received), start (handler entered), appended (the
 * store append returned: offsets assigned, the write submitted), then the HW
 * move that covered the record: either a follower's fetch — resp_begin and
 * resp_sent (the leader began answering, and sent, that follower the
 * response preceding this fetch, the one that carried the record; one fetch
 * is outstanding per follower session, so the last response is that one),
 * fetch_rx (its next fetch received), the
 * follower's turnaround (response received -> write done, write done ->
 * fetch sent), hw (HW moved) — or the leader's own write completing last
 * (critical -1); and done (the response is being sent).
 *
 * hw_pt_compute makes the stamps monotone (each clamped to at least the one
 * before, so a stale stamp shows as a zero stage, never a negative one) and
 * cuts [rx, done] into HW_PT_STAGE_TABLE stages that add up to done - rx
 * exactly (saturation at UINT32_MAX ns aside). The follower round trip
 * fetch_rx - resp_sent is split into the turnaround the follower reported
 * (each part capped by what is left of the round trip) and the rest, the
 * network both ways plus both transports.
 *
 * Cost when no one asks: rm->timed_waiting is 0, and each stamp site is one
 * predictable branch on it.
 */
#ifndef HW_PTIMING_H
#define HW_PTIMING_H
#include <stdint.h>
#include "hw_msg.h"

/* The HW move a timed produce completes on (hw_part.hw_move). */
typedef struct hw_hw_move {
	int64_t hw_ns;               /* when the HW moved */
	int64_t resp_begin_ns;       /* critical follower: the leader began answering its fetch */
	int64_t resp_sent_ns;        /* ... and sent the response carrying the record */
	int64_t fetch_rx_ns;         /* its next fetch received */
	uint32_t turn_write_ns, turn_send_ns;
	int32_t critical;            /* follower id, -1: the leader's own write */
} hw_hw_move;

typedef struct hw_pt_stamps {
	int64_t rx_ns, start_ns, appended_ns;
	hw_hw_move mv;
	int64_t done_ns;
} hw_pt_stamps;

/* Fill out from s (never fails; out fully written). */
void hw_pt_compute(const hw_pt_stamps *s, hw_produce_timing *out);
/* The sum of out's stages in ns (= done - rx of the stamps it came from). */
uint64_t hw_pt_total_ns(const hw_produce_timing *t);
/* The stage's label ("leader queue"); "?" out of range. */
const char *hw_pt_stage_label(int stage);
/* The stage's JSON key ("queue"). */
const char *hw_pt_stage_key(int stage);

#endif
