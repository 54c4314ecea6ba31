/* hw_rig_client.c — a CLI command on a `--rig netns` cluster directory:
 * enter the client namespace, then open the cluster exactly as a client on
 * another host would, from D/bootstrap and D/client.properties (what
 * `--bootstrap-server` and `--command-config` give; apps/hiwater/README.md).
 * hw_client_open_producers calls this for a rig directory, so every
 * subcommand (topic, produce, consume, bench) goes through it. */
#include "hw_rig_client.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_client_config.h"
#include "hw_rig.h"

int hw_rig_client_bootstrap(const hw_cluster *c, char *buf, size_t cap)
{
	char path[PATH_MAX], *text;
	snprintf(path, sizeof(path), "%s/bootstrap", c->dir);
	int rc = hw_cli_read_file(path, &text, NULL);
	if (rc) {
		hw_cli_err("%s: %s (run `hiwater cluster up` again to write it)", path, strerror(-rc));
		return rc;
	}
	text[strcspn(text, "\r\n")] = 0;
	snprintf(buf, cap, "%s", text);
	free(text);
	return buf[0] ? 0 : -EINVAL;
}

int hw_rig_client_open(hw_client **out, const hw_cluster *c, int with_data, int n_producers)
{
	/* before any socket or the EAL: they belong to the namespace they
	 * are made in */
	int rc = hw_rig_enter_client(c);
	if (rc)
		return rc;
	char boot[64], props[PATH_MAX];
	if ((rc = hw_rig_client_bootstrap(c, boot, sizeof(boot))))
		return rc;
	hw_rig_client_properties_path(c, props, sizeof(props));
	hw_client_config cfg;
	char err[512];
	if ((rc = hw_client_config_load(&cfg, props, err, sizeof(err)))) {
		hw_cli_err("rig: %s", err);
		return rc;
	}
	return hw_client_open_bootstrap(out, boot, &cfg, with_data, n_producers);
}
