/* hw_names.h — names that come from the wire and become file names.
 *
 * One rule for topic names, shared by the controller (which creates
 * topics) and every broker (which turns a name from PARTITION_STATE into a
 * log directory): Kafka's Topic.validate — 1..249 characters of
 * [a-zA-Z0-9._-], not "." or ".." (docs/security.md). Reentrant. */
#ifndef HW_NAMES_H
#define HW_NAMES_H
#include <stddef.h>

/* 1 when the first strnlen(s, max_len + 1) bytes of s are a legal Kafka
 * topic name no longer than max_len (at most 249, Kafka's limit), else 0.
 * s must be NUL-terminated within max_len + 1 bytes to be legal. */
int hw_topic_name_legal(const char *s, size_t max_len);

#endif
