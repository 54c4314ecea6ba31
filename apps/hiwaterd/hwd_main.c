/* hwd_main.c — hiwaterd: a hiwater broker, controller, or both.
 *
 *   hiwaterd --config server.properties [--override key=value ...]
 *   hiwaterd --print-config[=markdown]  (every key: type, default, valid values, unit, doc)
 *   hiwaterd --print-metrics-table    (docs/metrics.md: every metric family)
 *
 * Exit status: 0 after a clean shutdown, 2 for a bad configuration (the
 * message names file, line and key), 1 for any other failure. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "hwd.h"
#include "hwd_metric_defs.h"
#include "hwd_node.h"

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--print-metrics-table"))
		return hwd_metrics_print_table(stdout) < 0 || fflush(stdout) ? 1 : 0;
	static hwd_config cfg;
	int rc = hwd_config_load(argc, argv, &cfg);
	if (rc == 1)
		return 0;
	if (rc < 0)
		return 2;
	static hwd_node node;
	rc = hwd_node_init(&node, &cfg);
	if (rc < 0) {
		fprintf(stderr, "hiwaterd: node %d: start failed: %s\n", cfg.node_id, strerror(-rc));
		hwd_node_fini(&node);
		return rc == -ENOTSUP ? 2 : 1;
	}
	int code = hwd_node_run(&node);
	hwd_node_fini(&node);
	printf("hiwaterd: node %d stopped\n", cfg.node_id);
	return code;
}
