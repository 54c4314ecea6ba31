/* hw_cmd_fuzz_hostile.c — `hiwater fuzz-send --mode hostile`: decodable
 * frames with forged or absurd field values (docs/security.md "Attacks the
 * tests replay"), each kind built so the node MUST refuse it for one known
 * reason:
 *
 *   pstate-nomac     PARTITION_STATE "from the controller" (src 0) moving the
 *                    leadership to another broker at a huge leader epoch,
 *                    as an unauthenticated version-1 frame       -> NO_MAC
 *   pstate-badkey    the same, version 3 under a key that is not the
 *                    cluster's                                   -> BAD_MAC
 *   pstate-notctl    the same under the cluster key, but from a client id
 *                    (a key holder that is not the controller)
 *                                  -> hiwater_messages_rejected_total NOT_CONTROLLER
 *   pstate-path      under the cluster key from the controller's id, with
 *                    a topic name that is a relative path ("../../..")
 *                                  -> rejected BAD_TOPIC_NAME
 *   fetch-nomac      a follower FETCH "from replica R" at offset 2^40
 *                    (claims records nobody has), version 1  -> NO_MAC
 *   fetch-badkey     the same, wrong key                         -> BAD_MAC
 *   fetch-notsender  the same under the cluster key from a client id
 *                                  -> rejected REPLICA_NOT_SENDER
 *   fetch-stale      the same from replica R's own id, but at broker epoch
 *                    0, older than any the controller registers (a stale
 *                    incarnation of R)
 *                                  -> rejected STALE_BROKER_EPOCH by the
 *                                     partition's leader (others answer
 *                                     NOT_LEADER_OR_FOLLOWER, uncounted)
 *   incarnation      a frame from the controller's id with a far-future
 *                    incarnation (the mute-the-controller attack), wrong
 *                    key                                         -> BAD_MAC
 *
 * Every kind is sent round-robin (count / 9 each), paced so the receiver
 * sees them all. The counts per kind and per expected counter are printed
 * for the test to compare (tests/integration/it_forged.sh).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "hw_cli.h"
#include "hw_cluster.h"
#include "hw_wire.h"
#include "hw_wire_auth.h"

#define HOSTILE_KINDS(X)                                                               \
	X(pstate_nomac, "pstate-nomac", "NO_MAC")                                       \
	X(pstate_badkey, "pstate-badkey", "BAD_MAC")                                    \
	X(pstate_notctl, "pstate-notctl", "NOT_CONTROLLER")                             \
	X(pstate_path, "pstate-path", "WRONG_PEER")                                     \
	X(fetch_nomac, "fetch-nomac", "NO_MAC")                                         \
	X(fetch_badkey, "fetch-badkey", "BAD_MAC")                                      \
	X(fetch_notsender, "fetch-notsender", "REPLICA_NOT_SENDER")                     \
	X(fetch_stale, "fetch-stale", "STALE_BROKER_EPOCH")                             \
	X(incarnation, "incarnation", "BAD_MAC")
enum hostile_kind {
#define HK_ENUM(e, n, r) HK_##e,
	HOSTILE_KINDS(HK_ENUM)
#undef HK_ENUM
	HK__COUNT
};
static const char *const hk_name[] = {
#define HK_NAME(e, n, r) n,
	HOSTILE_KINDS(HK_NAME)
#undef HK_NAME
};
static const char *const hk_reason[] = {
#define HK_REASON(e, n, r) r,
	HOSTILE_KINDS(HK_REASON)
#undef HK_REASON
};

enum key_mode { KEY_NONE, KEY_WRONG, KEY_CLUSTER };

static void forged_pstate(hw_msg *m, int32_t src, int32_t dst, uint32_t topic_id, uint32_t part,
			  int32_t leader, int brokers, const char *topic)
{
	memset(m, 0, sizeof *m);
	m->type = HW_MSG_PARTITION_STATE;
	m->src = src;
	m->dst = dst;
	m->correlation_id = 0xbad0;
	hw_partition_state *s = &m->u.pstate;
	s->tp = (hw_tp){ topic_id, part };
	s->leader = leader;
	s->leader_epoch = 1000000;
	s->partition_epoch = 1000000;
	for (int i = 1; i <= brokers && i <= HW_MAX_RF; i++)
		s->replicas.id[s->replicas.n++] = i;
	s->isr.id[s->isr.n++] = leader;     /* everyone else out of the ISR */
	s->min_insync_replicas = 1;
	snprintf(s->topic, sizeof s->topic, "%s", topic);
}

static void forged_fetch(hw_msg *m, hw_fetch_part *fp, int32_t src, int32_t dst, uint32_t topic_id,
			 uint32_t part, int32_t replica, int64_t epoch)
{
	memset(m, 0, sizeof *m);
	memset(fp, 0, sizeof *fp);
	fp->tp = (hw_tp){ topic_id, part };
	fp->fetch_offset = (int64_t)1 << 40;
	fp->current_leader_epoch = -1;
	fp->last_fetched_epoch = -1;
	fp->log_start_offset = -1;
	fp->partition_max_bytes = 1024;
	m->type = HW_MSG_FETCH;
	m->src = src;
	m->dst = dst;
	m->correlation_id = 0xbad1;
	m->u.fetch = (hw_fetch_req){ .replica_id = replica, .replica_epoch = epoch, .min_bytes = 1,
				     .max_bytes = 1024, .n_parts = 1, .parts = fp };
}

/* Encode m under the key mode; restores the cluster key. Length or <0. */
static int encode_as(hw_wire_tx *tx, const hw_msg *m, enum key_mode km, const uint8_t *cluster_key,
		     uint8_t *buf, size_t cap)
{
	uint8_t wrong[HW_WIRE_AUTH_KEY_LEN];
	for (int i = 0; i < HW_WIRE_AUTH_KEY_LEN; i++)
		wrong[i] = (uint8_t)(cluster_key[i] ^ 0x5a ^ i);
	if (km == KEY_NONE)
		hw_wire_auth_set_key(NULL, 0);
	else if (km == KEY_WRONG)
		hw_wire_auth_set_key(wrong, sizeof wrong);
	int n = hw_wire_encode(tx, m, NULL, buf, cap);
	hw_wire_auth_set_key(cluster_key, HW_WIRE_AUTH_KEY_LEN);
	return n;
}

int hw_fuzz_hostile(const hw_cluster *c, int node, int fd, const struct sockaddr_in *to, int64_t count,
		    uint32_t topic_id, uint32_t partition)
{
	uint8_t key[HW_WIRE_AUTH_KEY_LEN];
	char err[600], sp[PATH_MAX];
	if (hw_cluster_auth_none(c)) {
		hw_cli_err("--mode hostile needs an authenticated cluster (this one runs hiwater.auth=none)");
		return HW_CLI_EXIT_USAGE;
	}
	hw_cluster_secret_path(c, sp, sizeof sp);
	if (hw_wire_auth_secret_load(sp, key, err, sizeof err)) {
		hw_cli_err("%s", err);
		return HW_CLI_EXIT_ERROR;
	}
	const int32_t client = HW_CLIENT_NODE_BASE + 63;
	const int32_t other = node % c->brokers + 1;             /* a broker that is not the target */
	hw_wire_tx real = { .cluster_id = c->cluster_id, .incarnation = hw_wire_new_incarnation() };
	hw_wire_tx as_ctl = { .cluster_id = c->cluster_id, .incarnation = hw_wire_new_incarnation() };
	hw_wire_tx as_replica = { .cluster_id = c->cluster_id, .incarnation = hw_wire_new_incarnation() };
	hw_wire_tx future = { .cluster_id = c->cluster_id, .incarnation = hw_wire_new_incarnation() + 0x40000000u };
	uint64_t sent[HK__COUNT] = { 0 };
	static uint8_t buf[4096];
	for (int64_t i = 0; i < count; i++) {
		int k = (int)(i % HK__COUNT);
		hw_msg m;
		hw_fetch_part fp;
		int n;
		switch (k) {
		case HK_pstate_nomac:
		case HK_pstate_badkey:
			forged_pstate(&m, 0, node, topic_id, partition, other, c->brokers, "forged");
			n = encode_as(&as_ctl, &m, k == HK_pstate_nomac ? KEY_NONE : KEY_WRONG, key, buf, sizeof buf);
			break;
		case HK_pstate_notctl:
			forged_pstate(&m, client, node, topic_id, partition, other, c->brokers, "forged");
			n = encode_as(&real, &m, KEY_CLUSTER, key, buf, sizeof buf);
			break;
		case HK_pstate_path:
			/* a fresh topic id: not one the broker hosts */
			forged_pstate(&m, 0, node, 0x7ff00000u + (uint32_t)(i & 0xff), 0, node, c->brokers,
				      "../../../../tmp/hw-forged");
			n = encode_as(&as_ctl, &m, KEY_CLUSTER, key, buf, sizeof buf);
			break;
		case HK_fetch_nomac:
		case HK_fetch_badkey:
			forged_fetch(&m, &fp, other, node, topic_id, partition, other, INT64_MAX / 2);
			n = encode_as(&real, &m, k == HK_fetch_nomac ? KEY_NONE : KEY_WRONG, key, buf, sizeof buf);
			break;
		case HK_fetch_notsender:
			forged_fetch(&m, &fp, client, node, topic_id, partition, other, INT64_MAX / 2);
			n = encode_as(&real, &m, KEY_CLUSTER, key, buf, sizeof buf);
			break;
		case HK_fetch_stale:
			/* its own sender state (as_replica): the target's replay
			 * window for the real replica is another transport's */
			forged_fetch(&m, &fp, other, node, topic_id, partition, other, 0);
			n = encode_as(&as_replica, &m, KEY_CLUSTER, key, buf, sizeof buf);
			break;
		default:
			forged_pstate(&m, 0, node, topic_id, partition, other, c->brokers, "forged");
			n = encode_as(&future, &m, KEY_WRONG, key, buf, sizeof buf);
			break;
		}
		if (n < 0) {
			hw_cli_err("encoding %s: %s", hk_name[k], strerror(-n));
			return HW_CLI_EXIT_ERROR;
		}
		if (sendto(fd, buf, (size_t)n, 0, (const struct sockaddr *)to, sizeof *to) == n)
			sent[k]++;
		if (i % 128 == 127) {
			struct timespec d = { 0, 1000000 };
			nanosleep(&d, NULL);
		}
	}
	memset(key, 0, sizeof key);
	uint64_t total = 0;
	for (int k = 0; k < HK__COUNT; k++) {
		printf("%-16s %-20s %" PRIu64 "\n", hk_name[k], hk_reason[k], sent[k]);
		total += sent[k];
	}
	printf("fuzz_sent=%" PRIu64 "\n", total);
	return HW_CLI_EXIT_OK;
}
