/* hwd_shard_stats.c — what a broker's reactors publish for reactor 0 and
 * the metrics thread: partition snapshots (every 5 ms while busy, 500 ms
 * idle), and the sums of every reactor's transport and replica-manager
 * counters. Split from hwd_shard.c; the design note is in hwd_shard.h. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_logging.h"
#include "hw_quota.h"
#include "hwd_shard.h"

#define PUB_BUSY_NS     5000000LL    /* publish at most every 5 ms while working */
#define PUB_IDLE_NS     500000000LL  /* and every 500 ms anyway (lag gauges) */

/* ---- snapshots for reactor 0 --------------------------------------------- */

static void publish(hwd_shard *s, int64_t now)
{
	size_t np = hw_rm_partition_count(s->rm);
	if (np > s->cap_pub) {
		hw_rm_part_info *nb = realloc(s->pub, np * sizeof(*nb));
		if (!nb)
			return;
		s->pub = nb;
		s->cap_pub = np;
	}
	size_t k = 0;
	for (size_t i = 0; i < np; i++) {
		hw_tp tp;
		if (hw_rm_partition_at(s->rm, i, &tp) == 0 && hw_rm_partition_info(s->rm, tp, &s->pub[k]) == 0)
			k++;
	}
	hw_rm_stats st;
	hw_rm_get_stats(s->rm, &st);
	pthread_mutex_lock(&s->snap_lock);
	hw_rm_part_info *t = s->snap;
	size_t tcap = s->cap_snap;
	s->snap = s->pub;
	s->cap_snap = s->cap_pub;
	s->n_snap = k;
	s->pub = t;
	s->cap_pub = tcap;
	s->snap_stats = st;
	if (s->data) {
		s->snap_wire = hw_udp_get_stats(s->data)->wire;
		s->snap_forgotten = hw_udp_get_stats(s->data)->forgotten;
	}
	if (s->dpdk) {
		s->snap_dpdk = *hw_dpdk_get_stats(s->dpdk);
		s->snap_wire = s->snap_dpdk.wire;
		s->snap_forgotten = s->snap_dpdk.forgotten;
	}
	pthread_mutex_unlock(&s->snap_lock);
	s->last_pub_ns = now;
}

static int pub_due(hwd_shard *s, int64_t now, int64_t *when)
{
	hw_reactor_stats rs;
	hw_reactor_get_stats(s->reactor, &rs);
	int64_t due = s->last_pub_ns + (rs.busy_iterations != s->pub_busy ? PUB_BUSY_NS : PUB_IDLE_NS);
	if (when)
		*when = due;
	if (now < due)
		return 0;
	s->pub_busy = rs.busy_iterations;
	return 1;
}

static int poll_publish(void *arg)
{
	hwd_shard *s = arg;
	int64_t now = hw_reactor_now_ns();
	if (pub_due(s, now, NULL))
		publish(s, now);
	return 0; /* bookkeeping, not work: an idle reactor stays idle */
}

static int64_t deadline_publish(void *arg)
{
	hwd_shard *s = arg;
	hw_reactor_stats rs;
	hw_reactor_get_stats(s->reactor, &rs);
	return s->last_pub_ns + (rs.busy_iterations != s->pub_busy ? PUB_BUSY_NS : PUB_IDLE_NS);
}

void hwd_shard_wire_stats(hwd_shard *s, hw_wire_stats *out)
{
	if (s->idx == 0) {
		*out = s->data ? hw_udp_get_stats(s->data)->wire : (hw_wire_stats){ 0 };
		return;
	}
	pthread_mutex_lock(&s->snap_lock);
	*out = s->snap_wire;
	pthread_mutex_unlock(&s->snap_lock);
}

uint64_t hwd_shard_neigh_forgotten(hwd_shard *s)
{
	pthread_mutex_lock(&s->snap_lock);
	uint64_t v = s->snap_forgotten;
	pthread_mutex_unlock(&s->snap_lock);
	return v;
}

void hwd_shard_dpdk_stats(hwd_shard *s, hw_dpdk_stats *out)
{
	if (s->idx == 0) {
		if (s->dpdk)
			*out = *hw_dpdk_get_stats(s->dpdk);
		else
			memset(out, 0, sizeof(*out));
		return;
	}
	pthread_mutex_lock(&s->snap_lock);
	*out = s->snap_dpdk;
	pthread_mutex_unlock(&s->snap_lock);
}

/* Saturating sum of two throttle bounds (HW_QUOTA_UNLIMITED absorbs). */
static int64_t add_bound(int64_t a, int64_t b)
{
	if (a == HW_QUOTA_UNLIMITED || b == HW_QUOTA_UNLIMITED || a > HW_QUOTA_UNLIMITED - b)
		return HW_QUOTA_UNLIMITED;
	return a + b;
}

/* Broker-wide replica-manager stats from each reactor's: counts, bytes and
 * measured rates add up; so do the throttle bounds (each reactor's quota is
 * its share of the broker's rate, hwd_shard_throttle_share: the sum is the
 * configured rate). */
static void add_stats(hw_rm_stats *sum, const hw_rm_stats *st, int first)
{
	if (first) {
		*sum = *st;
		return;
	}
	sum->partitions += st->partitions;
	sum->leaders += st->leaders;
	sum->under_replicated += st->under_replicated;
	sum->under_min_isr += st->under_min_isr;
	sum->offline += st->offline;
	sum->delayed_produce += st->delayed_produce;
	sum->delayed_fetch += st->delayed_fetch;
	sum->dropped_malformed += st->dropped_malformed;
	if (st->controller_epoch > sum->controller_epoch)
		sum->controller_epoch = st->controller_epoch;
	sum->stale_controller_pushes += st->stale_controller_pushes;
	sum->stale_controller_alter_resps += st->stale_controller_alter_resps;
	for (int r = 0; r < HW_RM_REJECT__COUNT; r++)
		sum->rejected[r] += st->rejected[r];
	sum->leader_throttle_bound = add_bound(sum->leader_throttle_bound, st->leader_throttle_bound);
	sum->follower_throttle_bound = add_bound(sum->follower_throttle_bound, st->follower_throttle_bound);
	sum->leader_throttle_rate += st->leader_throttle_rate;
	sum->follower_throttle_rate += st->follower_throttle_rate;
	sum->leader_throttled_bytes += st->leader_throttled_bytes;
	sum->follower_throttled_bytes += st->follower_throttled_bytes;
	sum->leader_throttled_fetches += st->leader_throttled_fetches;
	sum->follower_throttled_fetches += st->follower_throttled_fetches;
}

int hwd_node_partitions(hwd_node *n, hw_rm_part_info **out, size_t *cnt, int **shard_of, hw_rm_stats *sum)
{
	size_t cap = 16, k = 0;
	hw_rm_part_info *v = malloc(cap * sizeof(*v));
	int *so = malloc(cap * sizeof(*so));
	if (sum)
		memset(sum, 0, sizeof(*sum));
	if (!v || !so)
		goto nomem;
	for (int r = 0; r < n->n_reactors; r++) {
		hwd_shard *s = &n->shards[r];
		if (!s->rm)
			continue;
		if (r > 0)
			pthread_mutex_lock(&s->snap_lock);
		size_t np = r == 0 ? hw_rm_partition_count(s->rm) : s->n_snap;
		if (k + np > cap) {
			while (k + np > cap)
				cap *= 2;
			hw_rm_part_info *nv = realloc(v, cap * sizeof(*nv));
			int *nso = nv ? realloc(so, cap * sizeof(*nso)) : NULL;
			if (nv)
				v = nv;
			if (nso)
				so = nso;
			if (!nv || !nso) {
				if (r > 0)
					pthread_mutex_unlock(&s->snap_lock);
				goto nomem;
			}
		}
		hw_rm_stats st;
		if (r == 0) {
			for (size_t i = 0; i < np; i++) {
				hw_tp tp;
				if (hw_rm_partition_at(s->rm, i, &tp) == 0 && hw_rm_partition_info(s->rm, tp, &v[k]) == 0)
					so[k++] = 0;
			}
			hw_rm_get_stats(s->rm, &st);
		} else {
			if (np)
				memcpy(&v[k], s->snap, np * sizeof(*v));
			for (size_t i = 0; i < np; i++)
				so[k + i] = r;
			k += np;
			st = s->snap_stats;
			pthread_mutex_unlock(&s->snap_lock);
		}
		if (sum)
			add_stats(sum, &st, r == 0);
	}
	*out = v;
	*cnt = k;
	if (shard_of)
		*shard_of = so;
	else
		free(so);
	return 0;
nomem:
	free(v);
	free(so);
	return -ENOMEM;
}

int hwd_shard_add_publish_poller(hwd_shard *s)
{
	return hw_reactor_add_poller(s->reactor, "snapshot", poll_publish, deadline_publish, s);
}
