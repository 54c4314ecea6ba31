/* hiwater.c — entry point of the hiwater CLI: dispatch to subcommands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw_cli.h"
#include "hw_client_config.h"
#include "hw_logging.h"

static const char main_usage[] =
	"Usage: hiwater <command> [options]    (hiwater <command> --help for each)\n"
	"\n"
	"Commands:\n"
	"  cluster   run a local cluster: up, down, status, kill, start, stop, pause, resume\n"
	"  topic     create, describe, alter-config topics\n"
	"  produce   send lines from stdin as records (--acks 0|1|all)\n"
	"  consume   print records below the high watermark\n"
	"  bench     the acks=all latency/throughput benchmark (open or closed loop)\n"
	"  metrics   print the nodes' Prometheus metrics\n"
	"  top       a refreshing view of partitions: leader, ISR, HW, LEO, lag, rates, p99\n"
	"  fuzz-send hostile datagrams at a node (robustness tests)\n"
	"\n"
	"Every command takes --dir D: the cluster directory written by `cluster up`\n"
	"(default $HIWATER_CLUSTER_DIR or /tmp/hiwater-<uid>/cluster).\n"
	"`hiwater --print-client-config[=markdown]` prints the keys of --command-config.\n"
	"\n";

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{"cluster", hw_cmd_cluster}, {"topic", hw_cmd_topic},   {"produce", hw_cmd_produce},
		{"consume", hw_cmd_consume}, {"bench", hw_cmd_bench},       {"fuzz-send", hw_cmd_fuzz},
		{"metrics", hw_cmd_metrics}, {"top", hw_cmd_top},
	};
	/* Library modules (dpdk, net) log at INFO; a CLI shows warnings only
	 * unless HW_LOG asks for more. */
	if (!getenv("HW_LOG"))
		hw_logging_configure("warn");
	if (argc < 2) {
		fputs(main_usage, stderr);
		return HW_CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(main_usage, stdout);
		hw_cli_print_exit_codes(stdout);
		return HW_CLI_EXIT_OK;
	}
	if (!strcmp(argv[1], "--print-client-config") || !strcmp(argv[1], "--print-client-config=markdown"))
		return hw_client_config_print_schema(argv[1][21] == '=', stdout) || fflush(stdout)
			       ? HW_CLI_EXIT_ERROR
			       : HW_CLI_EXIT_OK;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	hw_cli_err("unknown command '%s' (try `hiwater --help`)", argv[1]);
	return HW_CLI_EXIT_USAGE;
}
