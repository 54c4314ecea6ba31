/* hw_ctrl_place.h — replica placement at topic creation (docs/racks.md
 * "Rack-aware placement"): Kafka's AdminUtils.assignReplicasToBrokers,
 * rack-unaware and rack-aware (the rack-alternated broker list), and the
 * checks of an explicit assignment (`--replica-assignment`). Pure functions
 * of their inputs: the unit tests compare them with a transliteration of
 * Kafka's algorithm. */
#ifndef HW_CTRL_PLACE_H
#define HW_CTRL_PLACE_H
#include <stdint.h>
#include "hw_types.h"

typedef struct hw_place_broker {
	int32_t id;
	const char *rack;          /* "" or NULL: none */
} hw_place_broker;

/* Kafka's getRackAlternatedBrokerList: the racks sorted by name, the
 * brokers of each rack sorted by id, then one broker of each rack in turn
 * ("rack1: 0 5, rack2: 3 4, rack3: 1 2" -> 0 3 1 5 4 2). Every broker must
 * have a rack. Writes n ids to out; returns the number of distinct racks. */
int hw_place_rack_alternated(const hw_place_broker *b, int n, int32_t *out);

/* Assign rf replicas to each of `partitions` partitions over the n brokers
 * (any order; sorted by id inside). Without racks: AdminUtils'
 * rack-unaware assignment; with a rack on every broker: the rack-aware one
 * (replicas in distinct racks while there are racks without one, then
 * spread as evenly as possible). start_index and replica_shift are Kafka's
 * random startIndex / nextReplicaShift (reduced modulo n here); the
 * controller derives them from the topic id.
 * 0; -EINVAL (rf < 1, rf > n, rf > HW_MAX_RF, n < 1, partitions < 1);
 * -ENOTSUP when some brokers have a rack and others none (Kafka: "Not all
 * brokers have rack information for replica rack aware assignment"). */
int hw_place_assign(const hw_place_broker *b, int n, int partitions, int rf, int start_index,
		    int replica_shift, hw_idset *out);

/* Check an explicit assignment as Kafka's controller does
 * (ReplicationControlManager.validateManualPartitionAssignment): every
 * partition has the same replica count >= 1, no broker twice in one
 * partition, every broker registered (ids in registered[0..n_registered)).
 * 0, or -EINVAL with a message in err. */
int hw_place_check_manual(const hw_idset *parts, int n_parts, const int32_t *registered, int n_registered,
			  char *err, size_t cap);

#endif
