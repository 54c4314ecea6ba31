/* hwd_route.h — where a received message is handled in hiwaterd: which
 * reactor, which role. Every decision reads the owner column of
 * HW_MSG_TABLE (engine/iface/hw_msg.h); this file only knows where in a
 * message its partitions are. Alone (no daemon state) so unit tests link
 * it without the daemon.
 *
 *   reactor  PARTITION rows: the reactor owning the partition(s)
 *            (hwd_shard_of); every other row: reactor 0, which carries
 *            the process roles (hwd_shard.h).
 *   role     on that reactor: PARTITION and NODE rows go to the broker
 *            role (which hands PARTITION rows to the reactor's replica
 *            manager), CONTROLLER rows to the controller role, VIEW rows to
 *            the broker role of a broker, else to the controller role.
 */
#ifndef HWD_ROUTE_H
#define HWD_ROUTE_H
#include <stddef.h>
#include <stdint.h>
#include "hw_msg.h"

/* The partitions a message names: n entries of `elem` bytes from `base`,
 * each starting with its hw_tp (hw_fetch_part, hw_fetch_resp_part,
 * hw_ofe_part, hw_ofe_resp_part; a single-partition message: its hw_tp). */
typedef struct hwd_parts {
	const uint8_t *base;
	size_t elem;
	uint16_t n;
	uint8_t many;  /* an array the router may split (hwd_route_set_parts) */
} hwd_parts;

/* 1 and *v for a PARTITION row, 0 for every other type. */
int hwd_route_parts(const hw_msg *m, hwd_parts *v);
/* Replace a split-able message's parts array (v.many). */
void hwd_route_set_parts(hw_msg *m, const void *parts, uint16_t n);

/* The reactor (0..n_reactors-1) that handles m; -1: its parts belong to
 * several reactors (split it); `self` for a PARTITION message naming no
 * partition (answered wherever it is). */
int hwd_route_reactor(const hw_msg *m, int n_reactors, int self);

#define HWD_ROLE_TABLE(X) X(NONE) X(BROKER) X(CONTROLLER)
typedef enum hwd_role {
#define HWD_ROLE_ENUM(n) HWD_ROLE_##n,
	HWD_ROLE_TABLE(HWD_ROLE_ENUM)
#undef HWD_ROLE_ENUM
	HWD_ROLE__COUNT
} hwd_role;
const char *hwd_role_name(int r); /* never NULL */

/* The role of reactor 0 that handles a message of `type` in a process
 * with (is_broker) or without the broker role; NONE: ignored (logged).
 * A type without a row goes to the broker role (whose replica manager
 * refuses it, counted there) or nowhere. */
hwd_role hwd_route_role(int type, int is_broker);

#endif
