/* hw_broker_logs.h — a broker's partition logs on its log dirs: what
 * Kafka's LogManager does at start-up and for deleted topics
 * (docs/logdirs.md "Start-up: recovery and deleted logs").
 *
 * Design note. One hw_broker_logs per broker process. At start-up
 * (hw_broker_logs_recover, on the main thread) every log dir is listed:
 * a directory "<topic>-<partition>" is a partition log, opened (recovered)
 * and kept until a reactor's replica manager claims it; a "*-delete"
 * directory is a deletion a crash interrupted, removed. A dir that cannot
 * be listed is offline (as Kafka's LogManager.loadLogs), unless none can
 * be: then recovery fails. A log that fails to open with an I/O error
 * takes its dir offline too (Kafka's LogManager.loadLogs); any other
 * error (corrupt data recovery cannot cut off, no memory) fails the
 * start. Later any reactor asks for its partitions (hw_broker_logs_open):
 * the recovered log, once its partition.metadata shows the same topic id
 * (else it was a deleted topic's of the same name: deleted, never
 * served), or a new log in the online dir holding the fewest — for a
 * partition that is not new only while no dir is offline since start-up
 * (Kafka's LogManager.getOrCreateLog: its log may be in that dir, an
 * empty one must not stand in for it). A refused partition is an offline
 * replica (hw_broker_logs_offline_replicas). A deleted topic's log is renamed to
 * "<dir>.<hex>-delete" and that is removed (hw_broker_logs_delete). A
 * recovered log the controller's metadata no longer assigns here is a
 * stray: renamed "<dir>.<hex>-stray" and kept (hw_broker_logs_check_strays).
 *
 * The logs list is shared by every reactor: each entry point locks it. The
 * directories go through hw_broker_fs (hw_broker_disk.h), the logs through
 * hw_broker_log_ops: the daemon gives the file system and engine/log's
 * io_uring log, the deterministic harness memory (hw_broker_memfs.h). */
#ifndef HW_BROKER_LOGS_H
#define HW_BROKER_LOGS_H
#include <stdint.h>
#include "hw_admin_msg.h"
#include "hw_broker_disk.h"
#include "hw_clock.h"
#include "hw_store.h"
#include "hw_types.h"

#define HW_BROKER_MAX_LOG_DIRS 16

/* How partition logs are opened and closed. */
typedef struct hw_broker_log_ops {
	/* Open (creating if needed) and recover the log of a partition of
	 * `topic` in directory dir, for reactor `reactor` (-1: start-up
	 * recovery on the main thread; adopt hands it over later). 0 and
	 * *out, or -errno (nothing opened). */
	int (*open)(void *ctx, const char *dir, const char *topic, int reactor, hw_store **out);
	/* From now on reactor `reactor` alone uses s (its owner, its
	 * completion wake-ups). Never fails (problems are logged). */
	void (*adopt)(void *ctx, hw_store *s, int reactor);
	/* Flush s per its policy: 0 or -EIO. */
	int (*flush)(void *ctx, hw_store *s);
	/* Close s (flush per policy, release). reactor >= 0: the calling
	 * reactor takes it over first. */
	void (*close)(void *ctx, hw_store *s, int reactor);
	/* 1 if s failed on an I/O error (sticky: its dir is offline), else 0. */
	int (*failed)(void *ctx, hw_store *s);
	void *ctx;
} hw_broker_log_ops;

typedef struct hw_broker_logs_config {
	const char *const *dirs;        /* log.dirs (copied) */
	int n_dirs;                     /* 1..HW_BROKER_MAX_LOG_DIRS */
	hw_broker_fs fs;                /* list, mkdirs, rename, remove_tree, read, replace needed */
	hw_broker_log_ops log;
	hw_clock *clock;                /* names "<dir>.<hex>-delete" */
} hw_broker_logs_config;

typedef struct hw_broker_logs hw_broker_logs;

/* 0 and *out, -EINVAL (no dirs, too many, a NULL op or clock, a dir path
 * too long) or -ENOMEM. Nothing is touched on disk yet. */
int hw_broker_logs_create(const hw_broker_logs_config *c, hw_broker_logs **out);
/* Close every log no replica manager claimed (the claimed ones are their
 * replica managers' to close) and free (NULL: no-op). */
void hw_broker_logs_destroy(hw_broker_logs *bl);

/* Create every log dir (mkdir -p). 0, or the fs's -errno for the first dir
 * that failed, its index in *failed (may be NULL). */
int hw_broker_logs_make_dirs(hw_broker_logs *bl, int *failed);
/* Start-up recovery (see the design note), once, before any open. 0,
 * -ENOMEM, a log open's non-I/O -errno (-EBADMSG, -EUCLEAN, -EINVAL), or
 * the fs's -errno of listing the first dir (or -EIO) when every dir is
 * offline. */
int hw_broker_logs_recover(hw_broker_logs *bl);

/* Reactor `reactor`'s store of partition tp of `topic`: the recovered log
 * (claimed now; a stale one is deleted first), or a new one. is_new: the
 * controller created the partition and changed nothing since (Kafka's
 * LeaderAndIsr isNew; docs/logdirs.md "Start-up: recovery and deleted
 * logs"). 0 and *out, -EINVAL (topic not a legal name), -EIO (every dir
 * offline; or tp's recovered log is in a dir offline since start-up; or
 * tp is not new, has no log here and a dir is offline since start-up:
 * then tp is an offline replica from now on), -ENOMEM, or the open's
 * -errno. */
int hw_broker_logs_open(hw_broker_logs *bl, int reactor, hw_tp tp, const char *topic, int is_new, hw_store **out);
/* The topic of s was deleted (called by the reactor that uses s): forget
 * s, close it, rename its directory "<dir>.<hex>-delete" and remove that.
 * 0, -ENOENT (not ours: closed anyway), the rename's -errno (the directory
 * stays) or remove_tree's (the "-delete" directory stays, removed at the
 * next start). */
int hw_broker_logs_delete(hw_broker_logs *bl, hw_store *s);

/* ---- stray logs (docs/logdirs.md "Stray logs"; Kafka's
 * LogManager.findStrayReplicas). A recovered log no replica manager claimed
 * may belong to a topic deleted while this broker was away and since
 * forgotten by the controller (a compacted metadata log, a ZooKeeper
 * failover), or to a partition no longer assigned here: nothing would ever
 * claim or delete it. Once registered, the broker asks the controller about
 * the topics of such logs and moves aside the ones its answer does not
 * assign to this broker. Logs in offline dirs, claimed, refused or already
 * kept are never candidates. */
#define HW_BROKER_STRAY_SUFFIX "-stray"
/* Up to cap distinct topic names (out) of the recovered logs the stray
 * check has yet to decide: their number (0: nothing left to check). */
int hw_broker_logs_unchecked_topics(hw_broker_logs *bl, hw_topic_name *out, int cap);
/* The controller's metadata of some topics (an answer to a METADATA naming
 * them, error NONE): every candidate log of a topic answered with
 * UNKNOWN_TOPIC_OR_PARTITION, with another topic id in its
 * partition.metadata, with no such partition, or whose partition's
 * replicas do not contain broker_id is closed (by reactor `reactor`) and
 * its directory renamed "<dir>.<hex>-stray" and kept, as Kafka does (never
 * served; one found at start is left alone). The others are kept for
 * their replica managers. Topics answered with another error decide
 * nothing. The number of logs moved aside. */
int hw_broker_logs_check_strays(hw_broker_logs *bl, int reactor, int32_t broker_id, const hw_topic_meta *topics,
				int n_topics);
/* The controller pushed tp's deletion while its recovered log is still
 * unclaimed (no replica manager holds the partition, so none deletes it):
 * the log whose partition.metadata names tp's topic id is deleted as by
 * hw_broker_logs_delete. 0, -ENOENT (no such log, or it is in an offline
 * dir: left alone), or the rename's / remove_tree's -errno. */
int hw_broker_logs_delete_recovered(hw_broker_logs *bl, int reactor, hw_tp tp, const char *topic);

/* Logs known (recovered or created, not deleted). */
int hw_broker_logs_count(hw_broker_logs *bl);
/* Offline log dirs (docs/logdirs.md): a dir is offline when it could not
 * be listed at start-up or one of its logs failed to load then, or while
 * one of its logs failed. */
int hw_broker_logs_offline_dirs(hw_broker_logs *bl);
int hw_broker_logs_dir_offline(hw_broker_logs *bl, int d);
/* The offline replicas: the logs in offline dirs and the partitions
 * refused a log (hw_broker_logs_open -EIO); their number. The first cap
 * of those whose topic id is known (from partition.metadata at recovery,
 * or claimed or refused) go to out[] (may be NULL), their count to
 * *n_listed (may be NULL). */
int hw_broker_logs_offline_replicas(hw_broker_logs *bl, hw_tp *out, int cap, int *n_listed);
/* Flush every log. 0, or -EIO if any failed (each logged). */
int hw_broker_logs_flush(hw_broker_logs *bl);
/* The directory of the log of (topic, partition) into buf: 0, or -ENOENT. */
int hw_broker_logs_dir_of(hw_broker_logs *bl, const char *topic, uint32_t partition, char *buf, size_t cap);

#endif
