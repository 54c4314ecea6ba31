/* hw_cli.h — the hiwater command-line tool: shared declarations.
 *
 * Design note. `hiwater` is one binary with subcommands (cluster, topic,
 * produce, consume, bench). Each subcommand is a function taking argc/argv
 * after its name and returning one of the exit codes below, so scripts can
 * tell "you typed it wrong" (2) from "the cluster is not there" (3) from
 * "the broker said no" (4) from "verification found lost records" (6).
 * Messages for people go to stderr prefixed "hiwater: "; data (offsets,
 * records, tables, JSON) goes to stdout.
 *
 * Local failures inside the tool use negative errno like the rest of
 * hiwater; only the subcommand entry points translate them to exit codes.
 */
#ifndef HW_CLI_H
#define HW_CLI_H
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* X(NAME, code, meaning) — the documented exit codes (hiwater --help). */
#define HW_CLI_EXIT_TABLE(X)                                                        \
	X(OK,            0, "success")                                              \
	X(ERROR,         1, "runtime failure (I/O, a process failed to start, ...)") \
	X(USAGE,         2, "bad command line or bad config value")                 \
	X(NO_CLUSTER,    3, "no cluster in the directory, or it does not answer")   \
	X(BROKER_ERROR,  4, "the controller or a broker answered with an error code") \
	X(TIMEOUT,       5, "an operation did not complete in time")                \
	X(VERIFY_FAILED, 6, "verification found lost, duplicated or misplaced records")

enum hw_cli_exit {
#define HW_CLI_EXIT_ENUM(n, c, m) HW_CLI_EXIT_##n = (c),
	HW_CLI_EXIT_TABLE(HW_CLI_EXIT_ENUM)
#undef HW_CLI_EXIT_ENUM
};

/* ---- messages */
void hw_cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void hw_cli_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 after --quiet: hw_cli_info prints nothing. */
extern int hw_cli_quiet;

/* ---- small parsers: 0 or -EINVAL (nothing written on error) */
int hw_cli_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
/* "10s", "500ms", "2m", "100us", or a plain number of seconds -> ns. */
int hw_cli_parse_duration_ns(const char *s, int64_t *out);
/* "16k", "1KiB", "1m", "1024" -> bytes. */
int hw_cli_parse_size(const char *s, int64_t *out);
/* "0", "1", "all"/"-1" -> 0, 1, -1. */
int hw_cli_parse_acks(const char *s, int16_t *out);

/* A list of key=value strings from repeated --config options. */
#define HW_CLI_MAX_KV 32
typedef struct hw_cli_kvs {
	int n;
	char key[HW_CLI_MAX_KV][64];
	char value[HW_CLI_MAX_KV][128];
} hw_cli_kvs;
/* Add "k=v". -EINVAL (no '=' or empty key), -E2BIG (too many / too long). */
int hw_cli_kvs_add(hw_cli_kvs *kv, const char *arg);
/* Value of key, or NULL. */
const char *hw_cli_kvs_get(const hw_cli_kvs *kv, const char *key);

/* ---- files and time */
/* Append a formatted string to buf (cap bytes) at *off and advance *off:
 * 0, or -ENOSPC once it does not fit (*off = cap: later appends fail too). */
int hw_cli_appendf(char *buf, size_t cap, size_t *off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* mkdir -p with mode (hw_file_mkdirs): 0 or -errno. */
int hw_cli_mkdirs(const char *path, int mode);
/* chmod(2): 0 or -errno. */
int hw_cli_chmod(const char *path, int mode);
/* Write a whole file atomically (tmp + rename). 0 or negative errno. */
int hw_cli_write_file(const char *path, const char *data, size_t len);
/* Read a whole file into a malloc'd NUL-terminated buffer. 0 or -errno. */
int hw_cli_read_file(const char *path, char **out, size_t *len_out);
/* CLOCK_MONOTONIC ns. */
int64_t hw_cli_now_ns(void);
/* Directory of the running executable (from /proc/self/exe). */
int hw_cli_self_dir(char *buf, size_t cap);

/* ---- subcommands: argv[0] is the subcommand name */
int hw_cmd_cluster(int argc, char **argv);
int hw_cmd_topic(int argc, char **argv);
int hw_cmd_produce(int argc, char **argv);
int hw_cmd_consume(int argc, char **argv);
int hw_cmd_bench(int argc, char **argv);
int hw_cmd_fuzz(int argc, char **argv);
int hw_cmd_metrics(int argc, char **argv);
int hw_cmd_top(int argc, char **argv);

/* Print the exit-code table (for --help texts). */
void hw_cli_print_exit_codes(void *file);

#endif
