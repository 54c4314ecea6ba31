/* hw_select.c — which replica a consumer should read from (docs/racks.md
 * "Fetching from the closest replica"): Kafka's ReplicaSelector (KIP-392)
 * as ReplicaManager.findPreferredReadReplica calls it, with
 * RackAwareReplicaSelector as the one selector besides the default
 * (leader only), and the brokers' racks it needs.
 */
#include <errno.h>
#include <string.h>
#include "hw_repl_int.h"

int hw_rm_set_broker_rack(hw_rm *rm, int32_t id, const char *rack)
{
	if (!rm || id < 0)
		return -EINVAL;
	if (!rack)
		rack = "";
	if (strlen(rack) >= HW_RACK_MAX)
		return -EINVAL;
	for (int i = 0; i < rm->n_racks; i++)
		if (rm->racks[i].id == id) {
			memcpy(rm->racks[i].rack, rack, strlen(rack) + 1);
			return 0;
		}
	if (!rack[0])
		return 0;
	if (rm->n_racks == HW_RM_MAX_RACKS)
		return -ENOSPC;
	rm->racks[rm->n_racks].id = id;
	memcpy(rm->racks[rm->n_racks].rack, rack, strlen(rack) + 1);
	rm->n_racks++;
	return 0;
}

/* The rack of broker id ("" unknown); this broker's own is broker.rack. */
static const char *rack_of(const hw_rm *rm, int32_t id)
{
	if (id == rm->cfg.node_id)
		return rm->cfg.rack;
	for (int i = 0; i < rm->n_racks; i++)
		if (rm->racks[i].id == id)
			return rm->racks[i].rack;
	return "";
}

int32_t hw_select_read_replica(hw_rm *rm, hw_part *p, const char *client_rack, int64_t fetch_offset,
			       int64_t now_ms)
{
	/* findPreferredReadReplica: leaders only, consumers only, a selector
	 * configured; RackAwareReplicaSelector: only with a client rack */
	if (rm->cfg.replica_selector != HW_RM_SELECTOR_RACK_AWARE || p->role != HW_PART_LEADER ||
	    !client_rack || !client_rack[0])
		return -1;
	/* the leader itself in the consumer's rack: keep reading here */
	if (!strcmp(rack_of(rm, rm->cfg.node_id), client_rack))
		return -1;
	int32_t best = -1;
	int64_t best_leo = -1, best_lag = 0;
	for (int i = 0; i < p->nrs; i++) {
		const hw_replica_state *rs = &p->rs[i];
		/* Kafka: only ISR members (a lagging follower would hold the
		 * consumer back) that have the fetch offset */
		if (!hw_idset_has(&p->isr, rs->id) || rs->ineligible || rs->leo < fetch_offset)
			continue;
		if (strcmp(rack_of(rm, rs->id), client_rack))
			continue;
		/* the selector's tie-break: the highest LEO, then the
		 * shortest time since caught up */
		int64_t lag = now_ms - rs->last_caught_up_ms;
		if (best < 0 || rs->leo > best_leo || (rs->leo == best_leo && lag < best_lag)) {
			best = rs->id;
			best_leo = rs->leo;
			best_lag = lag;
		}
	}
	return best;
}
