/* hwd_config_schema.h — every key hiwaterd understands, as one table
 * (hwd_config_schema.c): name, type, default, validator (range / enum /
 * check), unit, importance, doc and README group. `hiwaterd
 * --print-config` prints it; apps/hiwaterd/README.md's key tables are
 * generated from it (ci/gen-config-doc). */
#ifndef HWD_CONFIG_SCHEMA_H
#define HWD_CONFIG_SCHEMA_H
#include <stddef.h>
#include "hw_props.h"
#include "hw_types.h"

/* Per-node route keys hiwater.neighbour.<id> / hiwater.control.neighbour.<id>
 * take ids 0..HWD_NB_NODE_MAX-1 (nodes) and HWD_NB_CLIENT_BASE.. +
 * HWD_NB_CLIENTS-1 (client slots of a local cluster). */
#define HWD_NB_NODE_MAX    256
#define HWD_NB_CLIENT_BASE HW_CLIENT_NODE_BASE
#define HWD_NB_CLIENTS     64

/* The schema, in declaration order (groups contiguous). Never NULL. */
const hw_prop_def *hwd_config_schema(size_t *n);

#endif
