/* hw_ctrl_store.h — where the controller keeps its metadata records.
 *
 * Design note. The controller's state changes are whole-entity records
 * (hw_ctrl_int.h, HW_CTRL_RECORDS: one broker, topic, topic config or
 * partition each), written before a change takes effect and replayed on
 * start ("last record wins"). Two stores hold them:
 *   - the metadata log (hw_ctrl_mlog.h), the default: one local file of the
 *     single embedded controller;
 *   - ZooKeeper (hw_ctrl_zk.h, `zookeeper.connect`): one znode per entity,
 *     every write a versioned multi-op guarded by the controller epoch
 *     znode, so a controller that lost its session or its epoch fails its
 *     writes (docs/controller-ha.md).
 * The controller reaches a store through this interface only; with
 * hw_ctrl_config.store NULL it opens the metadata log itself.
 *
 * Threading: the store's functions are called on the controller's thread.
 */
#ifndef HW_CTRL_STORE_H
#define HW_CTRL_STORE_H
#include <stddef.h>
#include <stdint.h>

/* Called once per stored record at load, in an order where a topic comes
 * before its configs and partitions. Non-zero stops the load. */
typedef int (*hw_ctrl_store_replay_fn)(void *arg, uint8_t type, const uint8_t *payload, size_t len);

typedef struct hw_ctrl_store_ops {
	/* Replay every stored record through fn. *records receives the number
	 * of records ever written (broker epochs are record numbers: they
	 * must keep growing across controllers). 0, fn's non-zero value, or
	 * -errno (store unreachable: -ENOTCONN; fenced: -ESTALE). */
	int (*load)(void *ctx, hw_ctrl_store_replay_fn fn, void *arg, uint64_t *records);
	/* Durably write one record; record_no is its number (1-based).
	 * 0, or -errno: -ENOTCONN (store unreachable: nothing written, the
	 * caller refuses the change), -ESTALE (fenced: another controller
	 * holds a newer epoch or our session ended; the caller must step
	 * down), -EIO/-ENOMEM/-EMSGSIZE. */
	int (*write)(void *ctx, uint8_t type, const uint8_t *payload, size_t len, uint64_t record_no);
} hw_ctrl_store_ops;

typedef struct hw_ctrl_store {
	const hw_ctrl_store_ops *ops;
	void *ctx;
} hw_ctrl_store;

#endif
