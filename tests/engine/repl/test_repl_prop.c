/* test_repl_prop.c — property test over many seeds: random message loss,
 * duplication, delay (reordering), pauses, broker fencing and leader
 * changes and broker restarts (logs reopened: recovery), with the replication
 * invariants checked after every harness step:
 *   - HW <= LEO of every ISR member (the leader's committed ISR);
 *   - the leader is in its ISR;
 *   - HW (per leadership) and epochs (per replica) never go backwards;
 *   - every offset below the HW is identical on all ISR replicas, and
 *     committed data is never lost or changed (a reference copy of the
 *     longest committed prefix is compared with every leader and ISR member);
 *   - no acks=all acknowledgement is sent before the HW passed the batch;
 * Odd seeds reconcile followers with OffsetsForLeaderEpoch, even ones with
 * DivergingEpoch on the fetch path.
 *   - every delayed operation completes exactly once (purgatory accounting
 *     after every step; after healing, every produce answered exactly once);
 *   - liveness: after healing, every partition converges (all replicas in
 *     the ISR, identical logs).
 * Seeds: HW_TEST_SEED (first seed, default time) and HW_PROP_SEEDS (count,
 * default 500).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "hw_ctrl.h"
#include "hw_logging.h"
#include "hw_repl_int.h"
#include "hx.h"
#include "../../support/hw_test.h"

#define NODES 3
#define PARTS 2
/* broker.heartbeat.interval.ms, broker.session.timeout.ms and the auto
 * leader rebalance interval, scaled down so that a run of ~15 s of virtual
 * time sees brokers fenced by missed sessions (isolation, long pauses) and
 * preferred leaders elected back */
#define HB_MS 400
#define SESSION_MS 1600
#define REBALANCE_MS 3000

typedef struct prop {
	uint64_t seed;
	int32_t le[PARTS][NODES + 1], pe[PARTS][NODES + 1];
	int32_t cle[PARTS], cpe[PARTS];  /* the controller's epochs, last seen */
	int inc[NODES + 1];              /* process incarnation the le/pe/hw belong to */
	uint64_t elr_seen;               /* checks that saw a non-empty ELR */
	uint64_t ctl_restarts;
	uint64_t ctl[HW_CTRL_COUNTER_COUNT]; /* the controller's counters at the end */
	int64_t hw[PARTS][NODES + 1];
	uint8_t *ref[PARTS];
	size_t ref_len[PARTS];
	int64_t ref_hw[PARTS];
	long checks;
	uint64_t sig[PARTS];        /* data-state signature at the last byte check */
	hx_stats hs;
	uint64_t shrinks, expands, truncations;
	int failed;
	char why[256];
} prop;

#define FAILF(P, ...)                                                    \
	do {                                                             \
		if (!(P)->failed) {                                      \
			(P)->failed = 1;                                 \
			snprintf((P)->why, sizeof((P)->why), __VA_ARGS__); \
		}                                                        \
	} while (0)

static void check_controller(hx *h, prop *P, int p);

static void check(hx *h, void *arg)
{
	prop *P = arg;
	P->checks++;
	hx_stats hs;
	hx_get_stats(h, &hs);
	if (hs.ack_violations)
		FAILF(P, "acks=all acknowledged before the HW passed it");
	for (int n = 1; n <= NODES; n++) {
		hw_rm *rm = hx_rm(h, n);
		hw_purg_stats ps[2];
		hw_purg_get_stats(rm->produce_purg, &ps[0]);
		hw_purg_get_stats(rm->fetch_purg, &ps[1]);
		for (int k = 0; k < 2; k++) {
			uint64_t done = 0;
			for (int r = 0; r < HW_DOP_REASON_MAX; r++)
				done += ps[k].completed[r];
			if (ps[k].completed[HW_DOP_PENDING] || done + ps[k].live != ps[k].created)
				FAILF(P, "node %d purgatory %d accounting: created %" PRIu64 " done %" PRIu64
				      " live %" PRIu64, n, k, ps[k].created, done, ps[k].live);
		}
	}
	for (int n = 1; n <= NODES; n++) {
		/* a restarted process relearns its state (possibly from a
		 * delayed older push first): track it afresh */
		if (hx_incarnation(h, n) != P->inc[n]) {
			P->inc[n] = hx_incarnation(h, n);
			for (int q = 0; q < PARTS; q++)
				P->le[q][n] = P->pe[q][n] = -1, P->hw[q][n] = -1;
		}
	}
	for (int p = 0; p < PARTS; p++) {
		/* Byte comparisons only when some replica's data may have changed:
		 * any append or truncation moves one of these counters. */
		uint64_t sig = 1469598103934665603ull;
		hw_rm_part_info info[NODES + 1];
		for (int n = 1; n <= NODES; n++) {
			hw_rm_part_info l;
			hx_info(h, n, p, &l);
			info[n] = l;
			uint64_t v[6] = { (uint64_t)l.leo, (uint64_t)l.hw, (uint64_t)l.leader_epoch,
					  l.metrics[HW_PM_TRUNCATIONS], l.metrics[HW_PM_REPLICA_BYTES_APPENDED],
					  l.metrics[HW_PM_PRODUCE_BYTES] + ((uint64_t)l.role << 56) };
			for (int k = 0; k < 6; k++)
				sig = (sig ^ v[k]) * 1099511628211ull;
		}
		int bytes = sig != P->sig[p];
		P->sig[p] = sig;
		if (bytes || P->checks % 16 == 0)
			check_controller(h, P, p);
		for (int n = 1; n <= NODES; n++) {
			hw_rm_part_info l = info[n];
			if (l.role == HW_PART_NONE)
				continue;
			if (l.leader_epoch < P->le[p][n] || l.partition_epoch < P->pe[p][n])
				FAILF(P, "p%d node %d epochs went back: le %d->%d pe %d->%d", p, n, P->le[p][n],
				      l.leader_epoch, P->pe[p][n], l.partition_epoch);
			int new_leadership = l.leader_epoch != P->le[p][n];
			P->le[p][n] = l.leader_epoch;
			P->pe[p][n] = l.partition_epoch;
			if (l.role != HW_PART_LEADER) {
				P->hw[p][n] = -1;
				continue;
			}
			if (!new_leadership && P->hw[p][n] >= 0 && l.hw < P->hw[p][n])
				FAILF(P, "p%d leader %d HW went back %" PRId64 " -> %" PRId64, p, n, P->hw[p][n], l.hw);
			P->hw[p][n] = l.hw;
			if (!hw_idset_has(&l.isr, n))
				FAILF(P, "p%d leader %d not in its ISR", p, n);
			if (l.hw > l.leo)
				FAILF(P, "p%d leader %d HW %" PRId64 " > LEO %" PRId64, p, n, l.hw, l.leo);
			if (!bytes)
				continue;
			size_t llen;
			uint8_t *ld = hx_read_all(h, n, p, l.hw, &llen);
			/* committed data never changes or disappears */
			size_t cmp = llen < P->ref_len[p] ? llen : P->ref_len[p];
			if (cmp && memcmp(ld, P->ref[p], cmp) != 0)
				FAILF(P, "p%d leader %d committed bytes differ from the reference", p, n);
			const hw_partition_state *cs = hx_ctl_state(h, p);
			int current = cs->leader == n && cs->leader_epoch == l.leader_epoch;
			if (current && l.hw < P->ref_hw[p] && llen < P->ref_len[p]) {
				/* the current leader's HW may lag after an election, but its
				 * log must hold everything committed (a deposed leader that
				 * does not know it yet may not) */
				size_t alen;
				uint8_t *all = hx_read_all(h, n, p, INT64_MAX, &alen);
				size_t c2 = alen < P->ref_len[p] ? alen : P->ref_len[p];
				if (c2 < P->ref_len[p] || memcmp(all, P->ref[p], c2) != 0)
					FAILF(P, "p%d leader %d lost committed data (has %zu of %zu bytes)", p, n,
					      alen, P->ref_len[p]);
				free(all);
			}
			if (llen > P->ref_len[p]) {
				P->ref[p] = realloc(P->ref[p], llen);
				memcpy(P->ref[p], ld, llen);
				P->ref_len[p] = llen;
				P->ref_hw[p] = l.hw;
			}
			for (int i = 0; i < l.isr.n; i++) {
				int m = l.isr.id[i];
				if (m == n || m < 1 || m > NODES)
					continue;
				hw_store *s = hx_store(h, m, p);
				if (!s)
					continue;
				int64_t mleo = s->ops->log_end_offset(s);
				if (mleo < l.hw)
					FAILF(P, "p%d ISR member %d LEO %" PRId64 " < leader %d HW %" PRId64, p, m,
					      mleo, n, l.hw);
				size_t mlen;
				uint8_t *md = hx_read_all(h, m, p, l.hw, &mlen);
				if ((mlen != llen || (llen && memcmp(md, ld, llen) != 0)) && getenv("HX_DEBUG") && !P->failed) {
					for (int q = 0; q < 2; q++) {
						hw_store *x = hx_store(h, q ? m : n, p);
						const hw_epoch_cache *c = x->ops->epochs(x);
						fprintf(stderr, "node %d leo %" PRId64 " epochs:", q ? m : n, x->ops->log_end_offset(x));
						for (size_t e = 0; e < c->n; e++)
							fprintf(stderr, " (%d,%" PRId64 ")", c->v[e].epoch, c->v[e].start_offset);
						fprintf(stderr, "\n");
					}
				}
				if (mlen != llen || (llen && memcmp(md, ld, llen) != 0))
					FAILF(P, "p%d ISR member %d differs from leader %d below HW %" PRId64, p, m, n,
					      l.hw);
				free(md);
			}
			free(ld);
		}
	}
}

/* The controller's side (docs/replication.md "Eligible leader replicas"):
 * epochs only grow; the leader is in the ISR; the ELR is disjoint from the
 * ISR, inside the assignment, empty while the ISR holds min ISR; and every
 * ELR member holds all committed data (it left the ISR while the HW could
 * not move), so electing it loses no acknowledged record. */
static void check_controller(hx *h, prop *P, int p)
{
	const hw_partition_state *cs = hx_ctl_state(h, p);
	if (cs->leader_epoch < P->cle[p] || cs->partition_epoch < P->cpe[p])
		FAILF(P, "p%d controller epochs went back: le %d->%d pe %d->%d", p, P->cle[p], cs->leader_epoch,
		      P->cpe[p], cs->partition_epoch);
	P->cle[p] = cs->leader_epoch;
	P->cpe[p] = cs->partition_epoch;
	if (cs->leader >= 0 && !hw_idset_has(&cs->isr, cs->leader))
		FAILF(P, "p%d controller leader %d not in ISR", p, cs->leader);
	if (cs->elr.n && cs->isr.n >= cs->min_insync_replicas)
		FAILF(P, "p%d ELR of %d kept with ISR %d >= min ISR %d", p, cs->elr.n, cs->isr.n,
		      cs->min_insync_replicas);
	for (int i = 0; i < cs->elr.n; i++) {
		int m = cs->elr.id[i];
		if (hw_idset_has(&cs->isr, m) || !hw_idset_has(&cs->replicas, m))
			FAILF(P, "p%d ELR member %d in the ISR or not a replica", p, m);
		if (m < 1 || m > NODES || !P->ref_len[p] || !hx_store(h, m, p))
			continue; /* a restarting process: its log is closed */
		size_t len;
		uint8_t *d = hx_read_all(h, m, p, INT64_MAX, &len);
		if (len < P->ref_len[p] || memcmp(d, P->ref[p], P->ref_len[p]) != 0)
			FAILF(P, "p%d ELR member %d lacks committed data (%zu of %zu bytes)", p, m, len,
			      P->ref_len[p]);
		free(d);
	}
	P->elr_seen += cs->elr.n > 0;
}

static void tweak(int node, hw_rm_config *c, void *arg)
{
	(void)node;
	/* odd seeds reconcile with OffsetsForLeaderEpoch, even ones on fetch */
	c->truncate_via_offsets_for_epoch = (int32_t)(*(uint64_t *)arg & 1);
	c->replica_lag_time_max_ms = 2000;
	c->replica_fetch_wait_max_ms = 100;
	c->replica_fetch_backoff_ms = 100;
	c->alter_partition_retry_ms = 200;
}

static int run_seed(uint64_t seed, prop *P)
{
	memset(P, 0, sizeof(*P));
	P->seed = seed;
	for (int p = 0; p < PARTS; p++)
		for (int n = 0; n <= NODES; n++)
			P->hw[p][n] = -1, P->le[p][n] = -1, P->pe[p][n] = -1;
	for (int p = 0; p < PARTS; p++)
		P->cle[p] = P->cpe[p] = -1;
	hx_opts o = { .nodes = NODES, .seed = seed, .tweak = tweak, .arg = &P->seed,
		      .heartbeat_interval_ms = HB_MS, .session_timeout_ms = SESSION_MS,
		      .rebalance_ms = REBALANCE_MS };
	hx *h = hx_create(&o);
	hx_set_step_hook(h, check, P);
	uint64_t r0 = hx_rand(h);
	int drop = (int)(r0 % 8), dup = (int)((r0 >> 8) % 8), dmax = (int)((r0 >> 16) % 20);
	hx_net_faults(h, drop, dup, 0, dmax);
	int reps0[3] = { 1, 2, 3 }, reps1[3] = { 2, 3, 1 };
	hx_ctl_create(h, 0, reps0, 3, 1 + (int)((r0 >> 24) % 2));
	hx_ctl_create(h, 1, reps1, 3, 1 + (int)((r0 >> 26) % 3));
	int paused = 0, fenced = 0;
	int64_t resume_at = 0, unfence_at = 0;
	for (int step = 0; step < 250 && !P->failed; step++) {
		uint64_t r = hx_rand(h);
		int part = (int)(r % PARTS);
		int act = (int)((r >> 8) % 100);
		if (act < 60) {
			int leader = hx_ctl_leader(h, part);
			if ((r >> 16) % 10 == 0)
				leader = 1 + (int)((r >> 20) % NODES); /* maybe the wrong node */
			if (leader >= 1) {
				static const int acks[3] = { 0, 1, -1 };
				hx_produce(h, &(hx_produce_req){ .node = leader, .part = part,
						.acks = acks[(r >> 24) % 3], .nrec = 1 + (int)((r >> 28) % 3),
						.timeout_ms = 200 + (int32_t)((r >> 32) % 2000) });
			}
		} else if (act < 70 && !paused) {
			paused = 1 + (int)((r >> 16) % NODES);
			hx_pause(h, paused, 1);
			resume_at = hx_now(h) + (int64_t)((r >> 20) % 4000);
		} else if (act < 78 && !fenced) {
			/* cut off: its heartbeats stop reaching the controller,
			 * which fences it once the session expires */
			fenced = 1 + (int)((r >> 16) % NODES);
			hx_isolate(h, fenced, 1);
			unfence_at = hx_now(h) + 500 + (int64_t)((r >> 20) % 4000);
		} else if (act < 90) {
			int leader = hx_ctl_leader(h, part);
			if (leader >= 1)
				hx_consume(h, leader, part, (int64_t)((r >> 16) % 8), 50);
		} else if (act < 93 && !paused && ((r >> 12) & 1)) {
			/* broker crash and restart over the same log: state rebuilt
			 * from it; the controller sees a new incarnation (unclean) */
			int n = 1 + (int)((r >> 16) % NODES);
			hx_restart(h, n);
		} else if (act < 93) {
			/* controlled shutdown of the leader: the controller moves
			 * its leaderships, then it restarts cleanly (keeps ELR) */
			int leader = hx_ctl_leader(h, part);
			if (leader >= 1 && leader != fenced && leader != paused)
				hx_ctl_shutdown(h, leader, 0);
		} else if (act < 95) {
			/* controller restart: it replays its metadata records and
			 * gives every broker a fresh session */
			for (int c = 0; c < HW_CTRL_COUNTER_COUNT; c++)
				P->ctl[c] += hw_ctrl_counter_get(hx_ctl(h), (hw_ctrl_counter)c);
			hx_ctl_restart(h);
			P->ctl_restarts++;
		}
		if (paused && hx_now(h) >= resume_at) {
			hx_pause(h, paused, 0);
			paused = 0;
		}
		if (fenced && hx_now(h) >= unfence_at) {
			hx_isolate(h, fenced, 0); /* its next heartbeat unfences it */
			fenced = 0;
		}
		hx_run_until(h, hx_now(h) + 5 + (int64_t)((r >> 40) % 100));
	}
	/* heal and let every timeout pass: every produce is answered exactly once */
	if (paused)
		hx_pause(h, paused, 0);
	if (fenced)
		hx_isolate(h, fenced, 0);
	hx_net_faults(h, 0, 0, 0, 0);
	hx_run_until(h, hx_now(h) + 5000);
	/* liveness: once healed, every partition converges — all replicas in
	 * the ISR with identical logs */
	for (int p = 0; p < PARTS; p++) {
		const hw_partition_state *cs = hx_ctl_state(h, p);
		if (cs->leader < 1) {
			FAILF(P, "p%d has no leader after healing", p);
			continue;
		}
		hw_rm_part_info l;
		hx_info(h, cs->leader, p, &l);
		if (l.role != HW_PART_LEADER || l.isr.n != NODES)
			FAILF(P, "p%d not converged after healing: leader %d role %d ISR size %d", p,
			      cs->leader, l.role, l.isr.n);
		size_t ll;
		uint8_t *ld = hx_read_all(h, cs->leader, p, INT64_MAX, &ll);
		for (int n = 1; n <= NODES; n++) {
			size_t nl;
			uint8_t *nd = hx_read_all(h, n, p, INT64_MAX, &nl);
			if (nl != ll || (ll && memcmp(nd, ld, ll) != 0))
				FAILF(P, "p%d node %d log differs from the leader's after healing", p, n);
			free(nd);
		}
		free(ld);
	}
	int unanswered = 0;
	int multi = hx_answer_check(h, &unanswered);
	if (multi || unanswered)
		FAILF(P, "%d produce requests answered more than once, %d never", multi, unanswered);
	for (int n = 1; n <= NODES; n++) {
		hw_rm_stats st;
		hw_rm_get_stats(hx_rm(h, n), &st);
		if (st.delayed_produce)
			FAILF(P, "node %d: %" PRIu64 " DelayedProduce still parked after all timeouts", n,
			      st.delayed_produce);
	}
	hx_get_stats(h, &P->hs);
	for (int n = 1; n <= NODES; n++)
		for (int p = 0; p < PARTS; p++) {
			hw_rm_part_info l;
			hx_info(h, n, p, &l);
			P->shrinks += l.metrics[HW_PM_ISR_SHRINKS];
			P->expands += l.metrics[HW_PM_ISR_EXPANDS];
			P->truncations += l.metrics[HW_PM_TRUNCATIONS];
		}
	for (int c = 0; c < HW_CTRL_COUNTER_COUNT; c++)
		P->ctl[c] += hw_ctrl_counter_get(hx_ctl(h), (hw_ctrl_counter)c);
	hx_destroy(h);
	for (int p = 0; p < PARTS; p++)
		free(P->ref[p]);
	return P->failed;
}

/* The meson test running this binary: the log-store variant is another. */
static const char *test_name(void)
{
	const char *st = getenv("HX_STORE");
	return st && strcmp(st, "log") == 0 ? "repl_prop_log" : "repl_prop";
}

static void test_properties(void **state)
{
	(void)state;
	uint64_t base = hw_test_seed_value(0, NULL);
	const char *e = getenv("HW_PROP_SEEDS");
	int n = e ? atoi(e) : 500;
	long checks = 0;
	int fails = 0;
	uint64_t acked = 0, dropped = 0, dups = 0, shrinks = 0, expands = 0, truncs = 0, elr = 0;
	uint64_t ctl[HW_CTRL_COUNTER_COUNT] = { 0 }, ctl_restarts = 0;
	for (int i = 0; i < n; i++) {
		prop P;
		uint64_t seed = base + (uint64_t)i;
		if (run_seed(seed, &P)) {
			printf("FAIL seed %" PRIu64 ": %s\n", seed, P.why);
			hw_test_repro(test_name(), seed, "HW_PROP_SEEDS=1");
			fails++;
		}
		checks += P.checks;
		acked += P.hs.acks_all_ok;
		dropped += P.hs.dropped;
		dups += P.hs.duplicated;
		shrinks += P.shrinks;
		expands += P.expands;
		truncs += P.truncations;
		elr += P.elr_seen;
		ctl_restarts += P.ctl_restarts;
		for (int c = 0; c < HW_CTRL_COUNTER_COUNT; c++)
			ctl[c] += P.ctl[c];
		if ((i + 1) % 100 == 0 || i + 1 == n)
			printf("%d/%d seeds, %ld invariant checks, %d failures (acks=all acked %" PRIu64
			       ", msgs dropped %" PRIu64 " duplicated %" PRIu64 ", ISR shrinks %" PRIu64
			       " expands %" PRIu64 ", truncations %" PRIu64 ")\n", i + 1, n, checks, fails,
			       acked, dropped, dups, shrinks, expands, truncs);
	}
	printf("controller: %" PRIu64 " restarts, %" PRIu64 " brokers fenced, %" PRIu64 " controlled shutdowns, %" PRIu64
	       " unclean shutdowns; elections: %" PRIu64 " clean, %" PRIu64 " from the ELR, %" PRIu64
	       " unclean, %" PRIu64 " preferred; %" PRIu64 " checks saw an ELR\n",
	       ctl_restarts, ctl[HW_CTRL_C_BROKERS_FENCED], ctl[HW_CTRL_C_CONTROLLED_SHUTDOWNS],
	       ctl[HW_CTRL_C_UNCLEAN_SHUTDOWNS], ctl[HW_CTRL_C_ELECTIONS_CLEAN], ctl[HW_CTRL_C_ELECTIONS_ELR],
	       ctl[HW_CTRL_C_ELECTIONS_UNCLEAN], ctl[HW_CTRL_C_ELECTIONS_PREFERRED], elr);
	assert_int_equal(fails, 0);
	if (n >= 100) {
		/* the runs did go through what the properties are about */
		assert_true(ctl[HW_CTRL_C_BROKERS_FENCED] > 0);
		assert_true(ctl[HW_CTRL_C_CONTROLLED_SHUTDOWNS] > 0);
		assert_true(ctl[HW_CTRL_C_ELECTIONS_ELR] > 0);
		assert_true(elr > 0);
		assert_true(ctl_restarts > 0);
	}
}

int main(void)
{
	if (!getenv("HW_LOG"))
		hw_logging_configure("error");
	hw_test_seed(test_name());
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_properties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
