/* hw_rig_client.h — the CLI's way into a `--rig netns` cluster (hw_rig.h):
 * the client namespace, D/bootstrap and D/client.properties. */
#ifndef HW_RIG_CLIENT_H
#define HW_RIG_CLIENT_H
#include <stddef.h>
#include "hw_client.h"

/* D/bootstrap ("HOST:PORT") into buf. 0, -errno (message printed). */
int hw_rig_client_bootstrap(const hw_cluster *c, char *buf, size_t cap);

/* Enter c's client namespace (for the rest of the process) and open the
 * cluster from its bootstrap address and client.properties, with_data /
 * n_producers as hw_client_open_producers. 0 and *out; -ENOENT (no rig
 * namespace), or the open's errors (message printed). */
int hw_rig_client_open(hw_client **out, const hw_cluster *c, int with_data, int n_producers);

#endif
