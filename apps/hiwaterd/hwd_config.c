/* hwd_config.c — loading hiwaterd's configuration, in named phases:
 *
 *   1. arguments   --config FILE, --override k=v ..., --print-config[=markdown]
 *   2. parse and validate   the file, then the overrides, through hw_props
 *      with the schema (hwd_config_schema.c): an unknown key, a value of the
 *      wrong type or outside its range / enum / check fails here, naming
 *      file, line and key and what is valid (exit 2)
 *   3. fill   copy the validated values into hwd_config, deriving what
 *      follows from them (the controller's endpoint, default listen
 *      addresses); the few checks that need more than the key's own value
 *      (the cluster secret file, the controller's listen address) are here
 *   4. cross-key rules   a named list (hwd_config_rules.c)
 *
 * Every message names the key and where its value came from
 * (hw_props_where: "<file>:<line>", "--override", or the file and
 * "(default)"). Unknown keys fail the start, as the tests and README have
 * it, where Kafka only logs them: a misspelt key here silently keeps a
 * default that may lose data (a replication factor, a flush policy).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_logging.h"
#include "hw_netconf_check.h"
#include "hw_props.h"
#include "hw_wire_auth.h"
#include "hwd.h"
#include "hwd_config_int.h"
#include "hwd_config_schema.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hiwaterd --config server.properties [--override key=value ...]\n"
		"       hiwaterd --print-config[=markdown]     every key: type, default, valid values, unit, doc\n"
		"       hiwaterd --config F [--override ...] --print-config   check F, print the effective values\n"
		"\n"
		"Runs a hiwater node: a broker, the controller, or both (process.roles).\n"
		"Kafka property names and defaults; see README for hiwater's own keys.\n"
		"Exit status: 0 after a clean shutdown (SIGTERM/SIGINT), 2 on a bad\n"
		"configuration (the message names file, line and key), 1 on other errors.\n");
}

int hwd_cfg_err(const hw_props *p, const hwd_config *c, const char *key, const char *what)
{
	char w[PATH_MAX + 32];
	hw_props_where(p, key, w, sizeof(w));
	if (!strcmp(w, "default"))
		fprintf(stderr, "hiwaterd: %s: bad value for key '%s' (default): %s\n", c->path, key, what);
	else
		fprintf(stderr, "hiwaterd: %s: bad value for key '%s': %s\n", w, key, what);
	return -1;
}

/* ---- typed reads of validated keys (a failure here is a schema bug) ---- */

int hwd_cfg_str(const hw_props *p, const char *key, char *dst, size_t cap)
{
	char err[256];
	const char *s;
	if (hw_props_get_string(p, key, "", &s, err, sizeof(err))) {
		fprintf(stderr, "hiwaterd: %s\n", err);
		return -1;
	}
	if (strlen(s) >= cap) {
		char w[PATH_MAX + 32];
		hw_props_where(p, key, w, sizeof(w));
		fprintf(stderr, "hiwaterd: %s: bad value for key '%s': longer than %zu bytes\n", w, key, cap - 1);
		return -1;
	}
	snprintf(dst, cap, "%s", s);
	return 0;
}

int hwd_cfg_i64(const hw_props *p, const char *key, int64_t *out)
{
	char err[256];
	if (hw_props_get_int64(p, key, 0, out, err, sizeof(err))) {
		fprintf(stderr, "hiwaterd: %s\n", err);
		return -1;
	}
	return 0;
}

int hwd_cfg_i32(const hw_props *p, const char *key, int32_t *out)
{
	int64_t v;
	if (hwd_cfg_i64(p, key, &v))
		return -1;
	*out = (int32_t)v; /* int32 keys' ranges are within int32 (schema) */
	return 0;
}

int hwd_cfg_bool(const hw_props *p, const char *key, int *out)
{
	char err[256];
	if (hw_props_get_bool(p, key, 0, out, err, sizeof(err))) {
		fprintf(stderr, "hiwaterd: %s\n", err);
		return -1;
	}
	return 0;
}

int hwd_cfg_enum(const hw_props *p, const char *key, int *out)
{
	char err[256];
	if (hw_props_get_enum(p, key, NULL, 0, out, err, sizeof(err))) {
		fprintf(stderr, "hiwaterd: %s\n", err);
		return -1;
	}
	return 0;
}

/* ---- phase 1: arguments --------------------------------------------------- */

typedef struct cfg_args {
	const char *path;
	int print;          /* --print-config given */
	int markdown;       /* --print-config=markdown */
} cfg_args;

/* 0, 1 (help printed: exit 0), -1 (usage error printed). */
static int parse_args(int argc, char **argv, cfg_args *a)
{
	memset(a, 0, sizeof(*a));
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 1;
		} else if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			a->path = argv[++i];
		} else if (!strcmp(argv[i], "--override") && i + 1 < argc) {
			i++; /* applied after the file */
		} else if (!strcmp(argv[i], "--print-config")) {
			a->print = 1;
		} else if (!strcmp(argv[i], "--print-config=markdown")) {
			a->print = a->markdown = 1;
		} else {
			fprintf(stderr, "hiwaterd: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return -1;
		}
	}
	if (!a->path && !a->print) {
		fprintf(stderr, "hiwaterd: --config FILE is required\n");
		usage(stderr);
		return -1;
	}
	return 0;
}

/* ---- phase 2: parse and validate ------------------------------------------ */

static int load_props(hw_props **out, const char *path, int argc, char **argv)
{
	size_t ndefs;
	const hw_prop_def *defs = hwd_config_schema(&ndefs);
	char err[PATH_MAX + 512];
	hw_props *p = NULL;
	int rc = hw_props_create(&p, defs, ndefs, err, sizeof(err));
	if (rc == 0) {
		hw_props_defer_checks(p); /* an override may replace a bad line */
		rc = hw_props_load_file(p, path, err, sizeof(err));
	}
	for (int i = 1; rc == 0 && i < argc; i++)
		if (!strcmp(argv[i], "--override") && i + 1 < argc)
			rc = hw_props_set_arg(p, argv[++i], "--override", err, sizeof(err));
	if (rc == 0)
		rc = hw_props_validate(p, err, sizeof(err));
	if (rc == 0)
		rc = hw_props_check_required(p, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "hiwaterd: %s\n", err);
		hw_props_destroy(p);
		return -1;
	}
	*out = p;
	return 0;
}

/* ---- phase 3: fill -------------------------------------------------------- */

/* "ID@HOST:PORT[,...]" (validated by the schema) -> c->voters. */
static void fill_voters(const char *s, hwd_config *c)
{
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", s);
	c->n_voters = 0;
	for (char *save = NULL, *tok = strtok_r(tmp, ",", &save); tok && c->n_voters < HWD_MAX_VOTERS;
	     tok = strtok_r(NULL, ",", &save)) {
		hwd_neighbour *v = &c->voters[c->n_voters++];
		char *at = strchr(tok, '@');
		v->node = (int32_t)strtol(tok, NULL, 10);
		snprintf(v->ep, sizeof(v->ep), "udp:%s", at + 1);
	}
	c->controller_id = c->voters[0].node;
	snprintf(c->controller_ep, sizeof(c->controller_ep), "%s", c->voters[0].ep);
}

static int fill_identity(const hw_props *p, hwd_config *c)
{
	char voters[1024];
	int64_t cid, hcid;
	if (hwd_cfg_str(p, "process.roles", c->roles, sizeof(c->roles)) ||
	    hwd_cfg_i32(p, "node.id", &c->node_id) ||
	    hwd_cfg_str(p, "controller.quorum.voters", voters, sizeof(voters)) ||
	    hwd_cfg_str(p, "zookeeper.connect", c->zk_connect, sizeof(c->zk_connect)) ||
	    hwd_cfg_i32(p, "zookeeper.session.timeout.ms", &c->zk_session_timeout_ms) ||
	    hwd_cfg_i32(p, "zookeeper.connection.timeout.ms", &c->zk_connection_timeout_ms) ||
	    hwd_cfg_i64(p, "cluster.id", &cid) || hwd_cfg_i64(p, "hiwater.cluster.id", &hcid))
		return -1;
	c->is_broker = strstr(c->roles, "broker") != NULL;
	c->is_controller = strstr(c->roles, "controller") != NULL;
	if (c->zk_connection_timeout_ms < 0)
		c->zk_connection_timeout_ms = c->zk_session_timeout_ms;
	fill_voters(voters, c);
	c->self_voter = -1;
	for (int i = 0; i < c->n_voters; i++)
		if (c->voters[i].node == c->node_id)
			c->self_voter = i;
	if (c->is_controller && c->self_voter >= 0) {
		c->controller_id = c->node_id;
		snprintf(c->controller_ep, sizeof(c->controller_ep), "%s", c->voters[c->self_voter].ep);
	}
	c->cluster_id = (uint32_t)(hcid >= 0 ? hcid : cid);
	return 0;
}

/* Frame authentication (docs/security.md): the key is installed here,
 * before any transport or reactor exists. */
static int fill_auth(const hw_props *p, hwd_config *c)
{
	int mode;
	if (hwd_cfg_enum(p, "hiwater.auth", &mode) ||
	    hwd_cfg_str(p, "hiwater.cluster.secret.file", c->secret_file, sizeof(c->secret_file)))
		return -1;
	c->auth_none = mode == 1;
	if (c->auth_none) {
		hw_wire_auth_set_key(NULL, 0);
		return 0;
	}
	if (!c->secret_file[0])
		return hwd_cfg_err(p, c, "hiwater.cluster.secret.file",
				   "required (a 0600 file made by `hiwater cluster up`) unless hiwater.auth=none");
	uint8_t key[HW_WIRE_AUTH_KEY_LEN];
	char why[PATH_MAX + 128];
	if (hw_wire_auth_secret_load(c->secret_file, key, why, sizeof why))
		return hwd_cfg_err(p, c, "hiwater.cluster.secret.file", why);
	hw_wire_auth_set_key(key, sizeof key);
	memset(key, 0, sizeof key);
	return 0;
}

static int fill_dirs(const hw_props *p, hwd_config *c)
{
	char dirs[4096];
	const char *key = "log.dirs";
	if (hwd_cfg_str(p, "log.dirs", dirs, sizeof(dirs)))
		return -1;
	if (!dirs[0]) {
		key = "log.dir";
		if (hwd_cfg_str(p, "log.dir", dirs, sizeof(dirs)))
			return -1;
	}
	for (char *save = NULL, *tok = strtok_r(dirs, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (!*tok)
			continue;
		if (c->n_log_dirs == HWD_MAX_LOG_DIRS)
			return hwd_cfg_err(p, c, key, "at most 8 directories");
		snprintf(c->log_dirs[c->n_log_dirs++], PATH_MAX, "%s", tok);
	}
	if (!c->n_log_dirs)
		return hwd_cfg_err(p, c, key, "no directory");
	if (hwd_cfg_str(p, "metadata.log.dir", c->metadata_log_dir, sizeof(c->metadata_log_dir)))
		return -1;
	if (!c->metadata_log_dir[0])
		snprintf(c->metadata_log_dir, sizeof(c->metadata_log_dir), "%s", c->log_dirs[0]);
	return 0;
}

/* A udp endpoint key (or its alias when the key is empty), normalised to
 * "udp:HOST:PORT"; "" when both are empty. */
static int fill_udp_ep(const hw_props *p, const char *key, const char *alias, char *dst, size_t cap)
{
	char tmp[HWD_EP_MAX];
	if (hwd_cfg_str(p, key, tmp, sizeof(tmp)) || (!tmp[0] && alias && hwd_cfg_str(p, alias, tmp, sizeof(tmp))))
		return -1;
	if (hw_netconf_norm_udp_ep(tmp, dst, cap)) { /* the schema's check accepted it */
		fprintf(stderr, "hiwaterd: key '%s': cannot normalise '%s'\n", key, tmp);
		return -1;
	}
	return 0;
}

static int fill_endpoints(const hw_props *p, hwd_config *c)
{
	if (fill_udp_ep(p, "hiwater.control.listen", "hiwater.control.endpoint", c->control_listen,
			sizeof(c->control_listen)) ||
	    fill_udp_ep(p, "hiwater.data.listen", "hiwater.udp.endpoint", c->data_listen, sizeof(c->data_listen)) ||
	    fill_udp_ep(p, "hiwater.control.advertised", NULL, c->control_advertised,
			sizeof(c->control_advertised)) ||
	    fill_udp_ep(p, "hiwater.data.advertised", NULL, c->data_advertised, sizeof(c->data_advertised)))
		return -1;
	c->control_listen_given = c->control_listen[0] != 0;
	if (!c->control_listen[0])
		snprintf(c->control_listen, sizeof(c->control_listen), "%s",
			 c->is_controller ? c->controller_ep : "udp:127.0.0.1:0");
	if (!c->data_listen[0])
		snprintf(c->data_listen, sizeof(c->data_listen), "udp:127.0.0.1:0");
	return 0;
}

static int fill_dpdk(const hw_props *p, hwd_config *c)
{
	int transport;
	if (hwd_cfg_enum(p, "hiwater.transport", &transport) ||
	    hwd_cfg_str(p, "dpdk.eal.args", c->eal_args, sizeof(c->eal_args)) ||
	    hwd_cfg_str(p, "hiwater.dpdk.ip", c->dpdk_ip, sizeof(c->dpdk_ip)) ||
	    hwd_cfg_i32(p, "hiwater.dpdk.udp.port", &c->dpdk_udp_port) ||
	    hwd_cfg_str(p, "hiwater.dpdk.port", c->dpdk_port, sizeof(c->dpdk_port)) ||
	    hwd_cfg_i32(p, "hiwater.dpdk.mtu", &c->dpdk_mtu) ||
	    hwd_cfg_i32(p, "hiwater.cluster.brokers", &c->cluster_brokers) ||
	    hwd_cfg_i32(p, "hiwater.cluster.client.slots", &c->cluster_client_slots))
		return -1;
	c->transport_dpdk = transport == 1;
	return 0;
}

/* hiwater.neighbour.<id> / hiwater.control.neighbour.<id>: every set one. */
static int fill_routes(const hw_props *p, hwd_config *c)
{
	static const char *const prefix[2] = { "hiwater.neighbour.", "hiwater.control.neighbour." };
	for (int pass = 0; pass < 2; pass++) {
		size_t cur = 0;
		const char *key, *val;
		while (hw_props_next_set(p, prefix[pass], &cur, &key, &val)) {
			long node = strtol(key + strlen(prefix[pass]), NULL, 10);
			if (!(node >= 0 && node < HWD_NB_NODE_MAX) &&
			    !(node >= HWD_NB_CLIENT_BASE && node < HWD_NB_CLIENT_BASE + HWD_NB_CLIENTS))
				return hwd_cfg_err(p, c, key, "node id 0..255 or a client slot 1000..1063");
			hwd_neighbour *nb = pass ? &c->control_nb[c->n_control_nb++] : &c->data_nb[c->n_data_nb++];
			nb->node = (int32_t)node;
			if (!pass && !strncmp(val, "dpdk:", 5))
				snprintf(nb->ep, sizeof(nb->ep), "%s", val);
			else if (hw_netconf_norm_udp_ep(val, nb->ep, sizeof(nb->ep)))
				return hwd_cfg_err(p, c, key, "expected udp:HOST:PORT");
		}
	}
	return 0;
}

int hwd_config_load(int argc, char **argv, hwd_config *c)
{
	memset(c, 0, sizeof(*c));
	cfg_args a;
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	if (a.print && !a.path) {
		size_t n;
		const hw_prop_def *defs = hwd_config_schema(&n);
		return hw_props_print_schema(defs, n, a.markdown ? HW_PROPS_PRINT_MARKDOWN : HW_PROPS_PRINT_TSV,
					     stdout) ||
			       hwd_config_print_rules(a.markdown, stdout) || fflush(stdout)
			       ? -1
			       : 1;
	}
	snprintf(c->path, sizeof(c->path), "%s", a.path);
	hw_props *p = NULL;
	if (load_props(&p, a.path, argc, argv))
		return -1;
	rc = -1;
	if (fill_identity(p, c) || fill_auth(p, c) || fill_dirs(p, c) || fill_endpoints(p, c) ||
	    fill_dpdk(p, c) || fill_routes(p, c) || hwd_config_fill_engine(p, c) ||
	    hwd_config_fill_runtime(p, c) || hwd_config_fill_kafka(p, c) || hwd_config_check_rules(p, c))
		goto out;
	if (hw_logging_configure(c->log_level) < 0) /* validated by the schema */
		goto out;
	rc = 0;
	if (a.print) {
		printf("hiwaterd: effective configuration (%s):\n", a.path);
		hw_props_dump(p, stdout);
		rc = 1;
	}
out:
	hw_props_destroy(p);
	return rc;
}
