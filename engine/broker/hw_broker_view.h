/* hw_broker_view.h — a broker's answer to METADATA and DESCRIBE_TOPIC
 * (docs/kafka.md, docs/wire.md): every partition it knows, with the
 * controller's state where this process runs the controller too (combined
 * mode) and its replica managers' HW / LEO / log start, sorted by topic and
 * partition, filtered by the requested names (an unknown name answered
 * UNKNOWN_TOPIC_OR_PARTITION), with the cluster's brokers and, for a client
 * that bootstrapped here, the controller's control endpoint.
 *
 * Build a view (add_controller, add_replicas), answer, free. Pure: the
 * answer goes out through hw_net; nothing else is touched. */
#ifndef HW_BROKER_VIEW_H
#define HW_BROKER_VIEW_H
#include <stddef.h>
#include <stdint.h>
#include "hw_admin_msg.h"
#include "hw_ctrl.h"
#include "hw_net.h"
#include "hw_rm.h"

typedef struct hw_broker_view_part {
	char topic[HW_TOPIC_NAME_MAX];
	uint32_t topic_id;
	hw_partition_meta pm;
} hw_broker_view_part;

typedef struct hw_broker_view {
	hw_broker_view_part *v;
	size_t n, cap;
} hw_broker_view;

/* Who answers, and the cluster as it knows it. */
typedef struct hw_broker_view_src {
	int32_t node_id;
	int32_t controller_id;
	const char *controller_ep;       /* its control endpoint */
	int32_t controller_epoch;        /* highest seen, 0: none */
	const hw_broker_info *brokers;   /* the last metadata probe's */
	int n_brokers;                   /* <= HW_BROKER_VIEW_MAX_BROKERS */
} hw_broker_view_src;
#define HW_BROKER_VIEW_MAX_BROKERS 64

/* Every partition of the controller's topics (HW/LEO/log start -1 until a
 * replica manager adds them). 0 or -ENOMEM. */
int hw_broker_view_add_controller(hw_broker_view *v, const hw_ctrl *ctrl);
/* The replica managers' partitions: their offsets on the controller's
 * entries, or new entries from what the replica manager knows. 0 or -ENOMEM. */
int hw_broker_view_add_replicas(hw_broker_view *v, const hw_rm_part_info *infos, size_t n);
/* Answer request m (METADATA or DESCRIBE_TOPIC, its n_names topic names;
 * 0: every topic) to m->src through net. Sorts the view. 0, -ENOMEM,
 * -EINVAL (n_brokers out of range), or the send's -errno. */
int hw_broker_view_answer(hw_broker_view *v, const hw_broker_view_src *src, const hw_msg *m, uint16_t n_names,
			  const hw_topic_name *names, hw_net *net);
void hw_broker_view_free(hw_broker_view *v);

#endif
