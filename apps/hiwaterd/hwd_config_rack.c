/* hwd_config_rack.c — the rack keys of hiwaterd (docs/racks.md):
 * broker.rack (Kafka's, default empty: no rack) and replica.selector.class
 * (Kafka's, default empty: consumers read from the leader only; or
 * RackAwareReplicaSelector under Kafka's class name). Split from
 * hwd_config.c, which declares the keys in its schema. */
#include <stdio.h>
#include <string.h>
#include "hw_props.h"
#include "hwd.h"

int hwd_config_rack(const hw_props *p, hwd_config *c,
		    int (*key_err)(const hw_props *p, const hwd_config *c, const char *key, const char *what))
{
	const char *sv;
	char err[256];
	if (hw_props_get_string(p, "broker.rack", "", &sv, err, sizeof(err)))
		goto bad;
	if (strlen(sv) >= sizeof(c->rm.rack))
		return key_err(p, c, "broker.rack", "longer than 63 characters");
	snprintf(c->rm.rack, sizeof(c->rm.rack), "%s", sv);
	if (hw_props_get_string(p, "replica.selector.class", "", &sv, err, sizeof(err)))
		goto bad;
	if (!sv[0])
		c->rm.replica_selector = HW_RM_SELECTOR_LEADER;
	else if (!strcmp(sv, HW_RM_RACK_AWARE_SELECTOR_CLASS))
		c->rm.replica_selector = HW_RM_SELECTOR_RACK_AWARE;
	else
		return key_err(p, c, "replica.selector.class",
			       "expected empty (leader only) or " HW_RM_RACK_AWARE_SELECTOR_CLASS);
	return 0;
bad:
	fprintf(stderr, "hiwaterd: %s\n", err);
	return -1;
}
