/* hw_cluster_auth.c — the cluster secret of a `hiwater cluster` directory
 * (docs/security.md "The cluster secret"): D/cluster.secret, mode 0600,
 * made once by `cluster up` and never overwritten (restarts keep the key;
 * `cluster down --purge` removes it with D), named in every node's
 * server.properties (hiwater.cluster.secret.file) and read by every CLI
 * command that talks to the cluster. `cluster up --config hiwater.auth=none`
 * is the explicit opt-out: no secret, unauthenticated frames.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "hw_cli.h"
#include "hw_cluster.h"
#include "hw_wire_auth.h"

int hw_cluster_auth_none(const hw_cluster *c)
{
	const char *v = hw_cli_kvs_get(&c->extra, "hiwater.auth");
	return v && !strcmp(v, "none");
}

void hw_cluster_secret_path(const hw_cluster *c, char *buf, size_t cap)
{
	const char *v = hw_cli_kvs_get(&c->extra, "hiwater.cluster.secret.file");
	if (v && *v)
		snprintf(buf, cap, "%s", v);
	else
		snprintf(buf, cap, "%s/cluster.secret", c->dir);
}

int hw_cluster_secret_ensure(const hw_cluster *c)
{
	char path[PATH_MAX];
	if (hw_cluster_auth_none(c))
		return 0;
	hw_cluster_secret_path(c, path, sizeof path);
	int rc = hw_wire_auth_secret_create(path);
	if (rc == -EEXIST)
		return 0;
	if (rc)
		hw_cli_err("creating the cluster secret %s: %s", path, strerror(-rc));
	return rc;
}

int hw_cluster_auth_install(const hw_cluster *c)
{
	char path[PATH_MAX], err[PATH_MAX + 128];
	uint8_t key[HW_WIRE_AUTH_KEY_LEN];
	if (hw_cluster_auth_none(c))
		return hw_wire_auth_set_key(NULL, 0);
	hw_cluster_secret_path(c, path, sizeof path);
	int rc = hw_wire_auth_secret_load(path, key, err, sizeof err);
	if (rc) {
		hw_cli_err("cluster secret: %s (frames are authenticated unless the cluster runs with "
			   "--config hiwater.auth=none)", err);
		return rc;
	}
	hw_wire_auth_set_key(key, sizeof key);
	memset(key, 0, sizeof key);
	return 0;
}
