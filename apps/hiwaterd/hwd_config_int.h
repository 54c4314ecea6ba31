/* hwd_config_int.h — the phases of hwd_config_load (hwd_config.c) shared
 * by its files: hwd_config_fill.c (engine, runtime and Kafka-listener
 * keys into hwd_config) and hwd_config_rules.c (the cross-key rules).
 * Every function returns 0, or -1 after printing a message that names the
 * key and where its value came from. */
#ifndef HWD_CONFIG_INT_H
#define HWD_CONFIG_INT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "hw_props.h"
#include "hwd.h"

/* "hiwaterd: <file>:<line>: bad value for key 'k': what" (or
 * "--override: ...", "<file>: ... (default): ..."). Returns -1. */
int hwd_cfg_err(const hw_props *p, const hwd_config *c, const char *key, const char *what);

/* Typed reads of keys the schema validated (a failure is a schema bug,
 * printed). hwd_cfg_str refuses a value longer than cap - 1. */
int hwd_cfg_str(const hw_props *p, const char *key, char *dst, size_t cap);
int hwd_cfg_i32(const hw_props *p, const char *key, int32_t *out);
int hwd_cfg_i64(const hw_props *p, const char *key, int64_t *out);
int hwd_cfg_bool(const hw_props *p, const char *key, int *out);
int hwd_cfg_enum(const hw_props *p, const char *key, int *out); /* index in the schema's choices */

/* Phase 3, continued: the controller, replication and log keys; idle,
 * reactors, metrics, shutdown, log level; the Kafka listener, groups and
 * what DescribeConfigs reports. */
int hwd_config_fill_engine(const hw_props *p, hwd_config *c);
int hwd_config_fill_runtime(const hw_props *p, hwd_config *c);
int hwd_config_fill_kafka(const hw_props *p, hwd_config *c);

/* Phase 4: every cross-key rule (hwd_config_rules.c), first failure
 * printed. */
int hwd_config_check_rules(const hw_props *p, const hwd_config *c);
/* The rules, for --print-config: "# rule\tNAME\tKEY\tEXPECTED" lines, or a
 * Markdown table "### Rules across keys". 0 or -1. */
int hwd_config_print_rules(int markdown, FILE *out);

#endif
