/* hw_broker_memfs.h — an in-memory directory tree with in-memory partition
 * logs: the simulated disk under hw_broker_logs (hw_broker_logs.h) for the
 * deterministic harness (tests/engine/repl/hx.c) and seeded tests.
 *
 * Design note. A flat table of paths (directories, small files, and
 * directories that hold a log: a persistent hw_memstore, hw_memstore.h),
 * so a broker "restart" is a new hw_broker_logs over the same memfs: it
 * lists the dirs and finds the logs as a restarted process finds them on
 * disk. Every operation can be made to fail on one path with an errno
 * (hw_broker_memfs_fault), as a dying disk fails a directory; a log's disk
 * can die under it (hw_broker_memfs_fail_log: its writes fail, it counts
 * as failed). Single-threaded (the harness's); nothing here locks. */
#ifndef HW_BROKER_MEMFS_H
#define HW_BROKER_MEMFS_H
#include "hw_broker_logs.h"

#define HW_MEMFS_OPS(X) \
	X(LIST)         \
	X(READ)         \
	X(REPLACE)      \
	X(REMOVE)       \
	X(MKDIRS)       \
	X(RENAME)       \
	X(REMOVE_TREE)  \
	X(OPEN_LOG)
typedef enum hw_memfs_op {
#define HW_MEMFS_ENUM(n) HW_MEMFS_##n,
	HW_MEMFS_OPS(HW_MEMFS_ENUM)
#undef HW_MEMFS_ENUM
	HW_MEMFS_OP_COUNT
} hw_memfs_op;
const char *hw_memfs_op_name(int op);

typedef struct hw_broker_memfs hw_broker_memfs;

/* An empty tree ("/" exists). 0 and *out, or -ENOMEM. */
int hw_broker_memfs_create(hw_broker_memfs **out);
/* Free the tree and every log in it (NULL: no-op). */
void hw_broker_memfs_destroy(hw_broker_memfs *m);
/* Its hw_broker_fs and hw_broker_log_ops (ctx = m). */
hw_broker_fs hw_broker_memfs_fs(hw_broker_memfs *m);
hw_broker_log_ops hw_broker_memfs_log_ops(hw_broker_memfs *m);

/* From now on op on exactly `path` (for LIST and OPEN_LOG: the directory)
 * fails with -err; err 0 clears it. 0, or -ENOSPC (too many faults set). */
int hw_broker_memfs_fault(hw_broker_memfs *m, hw_memfs_op op, const char *path, int err);
/* The disk under the log in dir dies: its appends and polls fail with
 * -EIO, it counts as failed. 0 or -ENOENT (no log there). */
int hw_broker_memfs_fail_log(hw_broker_memfs *m, const char *dir);
/* What path is: 0 nothing, 1 a directory, 2 a file. */
int hw_broker_memfs_kind(hw_broker_memfs *m, const char *path);
/* Entries directly in dir whose names end with suffix ("" : all). */
int hw_broker_memfs_count(hw_broker_memfs *m, const char *dir, const char *suffix);
/* Logs in the tree (open or not). */
int hw_broker_memfs_logs(hw_broker_memfs *m);

#endif
