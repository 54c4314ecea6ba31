/* hwd_config_rules.c — phase 4 of hwd_config_load: the rules that relate
 * several keys, as one named list. Kafka's own (KafkaConfig.validateValues,
 * GroupCoordinatorConfig) are marked so; the others are what hiwater's
 * roles and idle loop need. Each rule names the key it reports and says
 * what is expected; its predicate reads the filled hwd_config.
 */
#include <stdio.h>
#include <string.h>
#include "hw_netaddr.h"
#include "hwd.h"
#include "hwd_config_int.h"

typedef struct cfg_rule {
	const char *name;   /* what the rule is, for the list below */
	const char *key;    /* the key the message names */
	const char *want;   /* what is expected */
	int (*ok)(const hwd_config *c);
} cfg_rule;

static int session_outlasts_heartbeat(const hwd_config *c)
{
	return c->session_timeout_ms > c->heartbeat_interval_ms;
}

static int fetch_wait_within_lag(const hwd_config *c)
{
	return c->rm.replica_fetch_wait_max_ms <= c->rm.replica_lag_time_max_ms;
}

static int group_session_bounds(const hwd_config *c)
{
	return c->group.max_session_timeout_ms >= c->group.min_session_timeout_ms;
}

static int idle_sleep_bounds(const hwd_config *c)
{
	return c->idle_sleep_max_us == 0 || c->idle_sleep_max_us >= c->idle_sleep_min_us;
}

static int zk_for_several_voters(const hwd_config *c)
{
	return !(c->n_voters > 1 && c->is_controller && !c->zk_connect[0]);
}

static int controller_is_a_voter(const hwd_config *c)
{
	return !c->is_controller || c->self_voter >= 0;
}

static int broker_is_not_a_voter(const hwd_config *c)
{
	return c->is_controller || c->self_voter < 0;
}

/* A controller listens on its voter address, or on the wildcard host with
 * the voter's port. */
static int controller_listens_on_voter(const hwd_config *c)
{
	if (!c->is_controller || !c->control_listen_given || c->self_voter < 0)
		return 1;
	const char *l = c->control_listen, *v = c->controller_ep;
	return !strcmp(l, v) || (hw_netaddr_is_wildcard(l) && !strcmp(strrchr(l, ':'), strrchr(v, ':')));
}

static int dpdk_has_eal_args(const hwd_config *c)
{
	return !(c->transport_dpdk && c->is_broker && !c->eal_args[0]);
}

static const cfg_rule rules[] = {
	{ "session outlasts heartbeat", "broker.session.timeout.ms", "larger than broker.heartbeat.interval.ms",
	  session_outlasts_heartbeat },
	{ "Kafka: fetch wait within lag", "replica.fetch.wait.max.ms",
	  "at most replica.lag.time.max.ms (Kafka's rule: a parked fetch must not outlast the ISR lag)",
	  fetch_wait_within_lag },
	{ "Kafka: group session bounds", "group.max.session.timeout.ms", "at least group.min.session.timeout.ms",
	  group_session_bounds },
	{ "idle sleep bounds", "hiwater.idle.sleep.max.us",
	  "0 (automatic) or at least hiwater.idle.sleep.min.us", idle_sleep_bounds },
	{ "several voters need ZooKeeper", "controller.quorum.voters",
	  "several voters need zookeeper.connect (the embedded controller is a single voter)",
	  zk_for_several_voters },
	{ "a controller is a voter", "controller.quorum.voters", "a controller's node.id must be the voter's id",
	  controller_is_a_voter },
	{ "a broker is not a voter", "node.id", "a broker-only node cannot have the controller's id",
	  broker_is_not_a_voter },
	{ "a controller listens on its voter address", "hiwater.control.listen",
	  "must be controller.quorum.voters' address, or 0.0.0.0 with its port, on the controller",
	  controller_listens_on_voter },
	{ "dpdk needs EAL arguments", "dpdk.eal.args", "required with hiwater.transport=dpdk", dpdk_has_eal_args },
};

int hwd_config_print_rules(int markdown, FILE *out)
{
	if (markdown && fputs("\n### Rules across keys\n\n| rule | key | expected |\n|---|---|---|\n", out) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (fprintf(out, markdown ? "| %s | `%s` | %s |\n" : "# rule\t%s\t%s\t%s\n", rules[i].name,
			    rules[i].key, rules[i].want) < 0)
			return -1;
	return 0;
}

int hwd_config_check_rules(const hw_props *p, const hwd_config *c)
{
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (!rules[i].ok(c))
			return hwd_cfg_err(p, c, rules[i].key, rules[i].want);
	return 0;
}
