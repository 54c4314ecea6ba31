/* test_ctrl_place.c — replica placement (docs/racks.md "Rack-aware
 * placement"): hw_place_assign against Kafka's own expected assignments
 * (AdminTest / AdminRackAwareTest vectors) and against a line-by-line
 * transliteration of AdminUtils.assignReplicasToBrokersRackAware on random
 * broker/rack layouts; the rack properties (distinct racks while RF <=
 * racks, as even as possible above); the controller creating topics over
 * registered racks and checking explicit assignments. */
#include <errno.h>
#include "ctrl_harness.h"
#include "hw_ctrl_place.h"

/* ---- the oracle: AdminUtils (Kafka 3.x core/src/main/scala/kafka/admin),
 * transliterated with its maps and sets as arrays ---- */

typedef struct kbroker {
	int id;
	char rack[8];
} kbroker;

/* getInverseMap + getRackAlternatedBrokerList */
static int k_alternated(const kbroker *b, int n, int *out, char racks[][8])
{
	int n_racks = 0;
	for (int i = 0; i < n; i++) { /* racks = brokersIteratorByRack.keys.toArray.sorted */
		int seen = 0;
		for (int r = 0; r < n_racks; r++)
			seen |= !strcmp(racks[r], b[i].rack);
		if (!seen)
			strcpy(racks[n_racks++], b[i].rack);
	}
	for (int i = 0; i < n_racks; i++)
		for (int j = i + 1; j < n_racks; j++)
			if (strcmp(racks[j], racks[i]) < 0) {
				char t[8];
				strcpy(t, racks[i]);
				strcpy(racks[i], racks[j]);
				strcpy(racks[j], t);
			}
	int used[64] = { 0 };
	int size = 0, rack_index = 0;
	while (size < n) {
		/* rackIterator.next(): the smallest unused id of that rack */
		int best = -1;
		for (int i = 0; i < n; i++)
			if (!used[i] && !strcmp(b[i].rack, racks[rack_index]) && (best < 0 || b[i].id < b[best].id))
				best = i;
		if (best >= 0) {
			used[best] = 1;
			out[size++] = b[best].id;
		}
		rack_index = (rack_index + 1) % n_racks;
	}
	return n_racks;
}

static int k_replica_index(int first, int second_shift, int replica_index, int n)
{
	int shift = 1 + (second_shift + replica_index) % (n - 1);
	return (first + shift) % n;
}

static const char *k_rack(const kbroker *b, int n, int id)
{
	for (int i = 0; i < n; i++)
		if (b[i].id == id)
			return b[i].rack;
	return NULL;
}

static void k_assign_rack_aware(const kbroker *b, int n, int n_partitions, int rf, int start_index,
				int next_replica_shift, hw_idset *ret)
{
	int arranged[64];
	char racks[64][8];
	int num_racks = k_alternated(b, n, arranged, racks);
	int current = 0;
	for (int p = 0; p < n_partitions; p++) {
		if (current > 0 && current % n == 0)
			next_replica_shift += 1;
		int first = (current + start_index) % n;
		int leader = arranged[first];
		hw_idset buf = { .n = 1, .id = { leader } };
		const char *racks_with[64] = { k_rack(b, n, leader) };
		int n_racks_with = 1;
		int k = 0;
		for (int j = 0; j < rf - 1; j++) {
			int done = 0;
			while (!done) {
				int broker = arranged[k_replica_index(first, next_replica_shift * num_racks, k, n)];
				const char *rack = k_rack(b, n, broker);
				int has_rack = 0, has_broker = 0;
				for (int q = 0; q < n_racks_with; q++)
					has_rack |= !strcmp(racks_with[q], rack);
				for (int q = 0; q < buf.n; q++)
					has_broker |= buf.id[q] == broker;
				if ((!has_rack || n_racks_with == num_racks) && (!has_broker || buf.n == n)) {
					buf.id[buf.n++] = broker;
					if (!has_rack)
						racks_with[n_racks_with++] = rack;
					done = 1;
				}
				k += 1;
			}
		}
		ret[current++] = buf;
	}
}

/* ---- helpers ---- */

static void to_place(const kbroker *k, int n, hw_place_broker *b)
{
	for (int i = 0; i < n; i++)
		b[i] = (hw_place_broker){ .id = k[i].id, .rack = k[i].rack };
}

static void expect_parts(const hw_idset *got, int np, const int (*want)[3], int rf)
{
	for (int p = 0; p < np; p++) {
		assert_int_equal(got[p].n, rf);
		for (int i = 0; i < rf; i++)
			if (got[p].id[i] != want[p][i])
				fail_msg("partition %d replica %d: %d, Kafka %d", p, i, got[p].id[i], want[p][i]);
	}
}

/* ---- Kafka's own vectors ---- */

static void test_kafka_vectors(void **state)
{
	(void)state;
	/* AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers */
	kbroker kb[6] = { { 0, "rack1" }, { 1, "rack3" }, { 2, "rack3" }, { 3, "rack2" }, { 4, "rack2" },
			  { 5, "rack1" } };
	hw_place_broker b[6];
	to_place(kb, 6, b);
	int32_t alt[6];
	assert_int_equal(hw_place_rack_alternated(b, 6, alt), 3);
	const int32_t want_alt[6] = { 0, 3, 1, 5, 4, 2 };
	assert_memory_equal(alt, want_alt, sizeof alt);
	assert_int_equal(hw_place_rack_alternated(b, 5, alt), 3); /* without broker 5 */
	const int32_t want_alt5[5] = { 0, 3, 1, 4, 2 };
	assert_memory_equal(alt, want_alt5, sizeof want_alt5);
	hw_idset out[10];
	assert_int_equal(hw_place_assign(b, 6, 7, 3, 0, 0, out), 0);
	static const int want7[7][3] = { { 0, 3, 1 }, { 3, 1, 5 }, { 1, 5, 4 }, { 5, 4, 2 },
					 { 4, 2, 0 }, { 2, 0, 3 }, { 0, 4, 2 } };
	expect_parts(out, 7, want7, 3);

	/* AdminTest.testReplicaAssignment: rack-unaware, brokers 0..4 */
	hw_place_broker u[5];
	for (int i = 0; i < 5; i++)
		u[i] = (hw_place_broker){ .id = 4 - i, .rack = "" }; /* any order */
	assert_int_equal(hw_place_assign(u, 5, 10, 3, 0, 0, out), 0);
	static const int want10[10][3] = { { 0, 1, 2 }, { 1, 2, 3 }, { 2, 3, 4 }, { 3, 4, 0 }, { 4, 0, 1 },
					   { 0, 2, 3 }, { 1, 3, 4 }, { 2, 4, 0 }, { 3, 0, 1 }, { 4, 1, 2 } };
	expect_parts(out, 10, want10, 3);

	/* some brokers with a rack, others without: Kafka refuses */
	b[2].rack = "";
	assert_int_equal(hw_place_assign(b, 6, 1, 3, 0, 0, out), -ENOTSUP);
	assert_int_equal(hw_place_assign(b, 6, 1, 7, 0, 0, out), -EINVAL); /* rf > brokers */
}

/* ---- random layouts against the oracle, and the rack properties ---- */

static void test_random_layouts(void **state)
{
	(void)state;
	seed_init("test_ctrl_place");
	for (int round = 0; round < 400; round++) {
		int n = 2 + (int)below(11);                  /* 2..12 brokers */
		int n_racks = 1 + (int)below((uint64_t)(n < 5 ? n : 5));
		kbroker kb[12];
		int id = (int)below(3);
		for (int i = 0; i < n; i++) {
			kb[i].id = id;
			id += 1 + (int)below(3);             /* sparse ids */
			snprintf(kb[i].rack, sizeof kb[i].rack, "r%d", (int)below((uint64_t)n_racks));
		}
		/* shuffle the registration order: placement must not depend on it */
		for (int i = n - 1; i > 0; i--) {
			int j = (int)below((uint64_t)i + 1);
			kbroker t = kb[i];
			kb[i] = kb[j];
			kb[j] = t;
		}
		int rf = 1 + (int)below((uint64_t)(n < HW_MAX_RF ? n : HW_MAX_RF));
		int np = 1 + (int)below(30);
		int start = (int)below((uint64_t)n), shift = (int)below((uint64_t)n);
		hw_place_broker b[12];
		to_place(kb, n, b);
		hw_idset got[30], want[30];
		assert_int_equal(hw_place_assign(b, n, np, rf, start, shift, got), 0);
		k_assign_rack_aware(kb, n, np, rf, start, shift, want);
		char racks_real[12][8];
		int alt[12];
		int racks = k_alternated(kb, n, alt, racks_real);
		for (int p = 0; p < np; p++) {
			if (got[p].n != want[p].n ||
			    memcmp(got[p].id, want[p].id, (size_t)got[p].n * sizeof got[p].id[0])) {
				char g[64], k[64];
				fail_msg("round %d (%d brokers, %d racks, rf %d, start %d, shift %d) partition %d: "
					 "%s, Kafka %s", round, n, racks, rf, start, shift, p,
					 hw_ctrl_idset_str(&got[p], g, sizeof g), hw_ctrl_idset_str(&want[p], k, sizeof k));
			}
			/* racks: distinct while there are racks without a replica;
			 * above that each rack holds floor or ceil of rf / racks
			 * (exact when every rack has enough brokers) */
			int per_rack[12] = { 0 };
			for (int i = 0; i < rf; i++)
				for (int r = 0; r < racks; r++)
					per_rack[r] += !strcmp(k_rack(kb, n, got[p].id[i]), racks_real[r]);
			int distinct = 0;
			for (int r = 0; r < racks; r++)
				distinct += per_rack[r] > 0;
			assert_int_equal(distinct, rf < racks ? rf : racks);
		}
	}
}

/* ---- the controller: racks from registration, explicit assignments ---- */

static void reg_rack(world *w, int32_t id, const char *rack)
{
	hw_broker_register_req r = { .broker_id = id, .incarnation_id = rnd() | 1, .previous_broker_epoch = -1,
				     .metadata_offset = -1 };
	snprintf(r.control_ep, sizeof(r.control_ep), "udp:127.0.0.1:%d", 9100 + id);
	snprintf(r.rack, sizeof(r.rack), "%s", rack);
	hw_broker_heartbeat_resp resp;
	assert_int_equal(hw_ctrl_register(w->ctrl, &r, &resp), 0);
	w->epoch[id] = resp.broker_epoch;
	assert_int_equal(hb(w, id, 0).is_fenced, 0);
}

static int16_t create_assigned(world *w, const char *name, const hw_idset *a, uint32_t n, int parts, int rf,
			       char *msg)
{
	hw_create_topic_req r = { .partitions = parts, .replication_factor = (int16_t)rf, .n_assignments = n,
				  .assignments = a };
	snprintf(r.name, sizeof(r.name), "%s", name);
	hw_create_topic_resp resp;
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	if (msg)
		snprintf(msg, HW_ERRMSG_MAX, "%s", resp.error_message);
	return resp.error;
}

static void test_controller_racks(void **state)
{
	(void)state;
	world *w = world_new(1);
	static const char *rk[7] = { "", "a", "b", "c", "a", "b", "c" };
	for (int id = 1; id <= 6; id++)
		reg_rack(w, id, rk[id]);
	uint32_t tid = create(w, "spread", 12, 3, "2", NULL);
	int leaders[7] = { 0 };
	for (uint32_t p = 0; p < 12; p++) {
		hw_partition_state s = part(w, tid, p);
		assert_int_equal(s.replicas.n, 3);
		int seen[3] = { 0 };
		for (int i = 0; i < 3; i++)
			seen[rk[s.replicas.id[i]][0] - 'a']++;
		assert_true(seen[0] == 1 && seen[1] == 1 && seen[2] == 1); /* one replica per rack */
		leaders[s.leader]++;
	}
	for (int id = 1; id <= 6; id++)
		assert_int_equal(leaders[id], 2);                         /* leaders balanced */
	/* RF 5 over 3 racks: 2, 2, 1 */
	tid = create(w, "wide", 6, 5, NULL, NULL);
	for (uint32_t p = 0; p < 6; p++) {
		hw_partition_state s = part(w, tid, p);
		int seen[3] = { 0 };
		for (int i = 0; i < 5; i++)
			seen[rk[s.replicas.id[i]][0] - 'a']++;
		for (int r = 0; r < 3; r++)
			assert_true(seen[r] == 1 || seen[r] == 2);
	}

	/* explicit assignments: taken as given (leader first), checked */
	hw_idset a[2] = { { .n = 3, .id = { 1, 2, 3 } }, { .n = 3, .id = { 2, 3, 1 } } };
	char msg[HW_ERRMSG_MAX];
	assert_int_equal(create_assigned(w, "manual", a, 2, -1, -1, msg), HW_ERR_NONE);
	hw_ctrl_topic_info ti;
	assert_int_equal(hw_ctrl_topic_find(w->ctrl, "manual", &ti), 0);
	hw_partition_state s = part(w, ti.id, 1);
	assert_true(set_is(&s.replicas, 3, 2, 3, 1));
	assert_int_equal(s.leader, 2);
	assert_true(set_is(&s.isr, 3, 2, 3, 1));
	hw_idset dup[1] = { { .n = 2, .id = { 1, 1 } } };
	assert_int_equal(create_assigned(w, "dup", dup, 1, -1, -1, msg), HW_ERR_INVALID_REPLICA_ASSIGNMENT);
	assert_non_null(strstr(msg, "twice"));
	hw_idset unknown[1] = { { .n = 2, .id = { 1, 9 } } };
	assert_int_equal(create_assigned(w, "unknown", unknown, 1, -1, -1, msg), HW_ERR_INVALID_REPLICA_ASSIGNMENT);
	assert_non_null(strstr(msg, "broker 9"));
	hw_idset uneven[2] = { { .n = 2, .id = { 1, 2 } }, { .n = 3, .id = { 1, 2, 3 } } };
	assert_int_equal(create_assigned(w, "uneven", uneven, 2, -1, -1, msg), HW_ERR_INVALID_REPLICA_ASSIGNMENT);
	assert_int_equal(create_assigned(w, "both", a, 2, 2, -1, msg), HW_ERR_INVALID_REQUEST);

	/* the racks survive a controller restart (metadata log replay) and
	 * are in METADATA_RESP */
	hw_ctrl_destroy(w->ctrl);
	w->ctrl = NULL;
	world_open(w);
	hw_metadata_req mq = { 0 };
	hw_msg m = { .type = HW_MSG_METADATA, .src = 1000, .dst = 0, .correlation_id = 5, .u.other = &mq };
	int from = w->net.n;
	assert_int_equal(hw_ctrl_on_msg(w->ctrl, &m), 0);
	assert_true(w->net.n > from);
	assert_int_equal(w->net.msgs[w->net.n - 1].m.type, HW_MSG_METADATA_RESP);
	assert_int_equal(w->net.msgs[w->net.n - 1].n_racks, 6);

	/* a broker without a rack among racked ones: Kafka refuses to place */
	reg_and_unfence(w, 7);
	hw_create_topic_req r = { .partitions = 1, .replication_factor = 3 };
	snprintf(r.name, sizeof(r.name), "mixed");
	hw_create_topic_resp resp;
	assert_int_equal(hw_ctrl_create_topic(w->ctrl, &r, &resp), 0);
	assert_int_equal(resp.error, HW_ERR_INVALID_REPLICA_ASSIGNMENT);
	assert_non_null(strstr(resp.error_message, "rack information"));
	world_free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kafka_vectors),
		cmocka_unit_test(test_random_layouts),
		cmocka_unit_test(test_controller_racks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
