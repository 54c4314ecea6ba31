/* hw_broker_disk.h — the broker's files in its log dirs (docs/logdirs.md,
 * docs/replication.md "Fencing and controlled shutdown"):
 *   - the clean-shutdown file, <first log dir>/.hiwater_cleanshutdown,
 *     "broker.epoch=N\n": read and removed at start (so only a completed
 *     clean shutdown writes a new one, and a crash later leaves none, as
 *     Kafka's CleanShutdownFileHandler), written at a clean stop;
 *   - partition directories named <topic>-<partition>, as Kafka's;
 *   - where a new partition's log goes: the online log dir holding the
 *     fewest partition logs (Kafka's choice).
 * File access goes through hw_broker_fs, so the daemon gives POSIX files
 * (hw_broker_posix_fs) and a test or the harness gives memory
 * (hw_broker_memfs.h). */
#ifndef HW_BROKER_DISK_H
#define HW_BROKER_DISK_H
#include <stddef.h>
#include <stdint.h>

#define HW_BROKER_CLEAN_SHUTDOWN_FILE ".hiwater_cleanshutdown"

typedef struct hw_broker_fs {
	/* Up to cap-1 bytes of path into buf, NUL-terminated: the byte count,
	 * or -errno (-ENOENT: no such file). */
	int (*read)(void *ctx, const char *path, char *buf, size_t cap);
	/* Replace path with buf[0..n) atomically and durably (a temporary,
	 * fsync, rename, fsync of the directory). 0 or -errno. */
	int (*replace)(void *ctx, const char *path, const void *buf, size_t n);
	/* Remove path durably (fsync of the directory). 0 or -errno. */
	int (*remove)(void *ctx, const char *path);
	/* The directory operations of the partition logs (hw_broker_logs.h);
	 * may be NULL where only the files above are used. */
	/* Call fn(arg, name) for every entry of directory dir except "." and
	 * ".." (in no particular order); fn returning nonzero stops the walk
	 * with that value. 0, fn's value, or -errno (-ENOENT: no such dir). */
	int (*list)(void *ctx, const char *dir, int (*fn)(void *arg, const char *name), void *arg);
	/* mkdir -p path. 0 or -errno. */
	int (*mkdirs)(void *ctx, const char *path);
	/* Rename directory from to `to` (same parent) durably (fsync of the
	 * parent). 0 or -errno (then nothing moved). */
	int (*rename)(void *ctx, const char *from, const char *to);
	/* Remove the tree at path (depth first, symlinks not followed). 0 or
	 * -errno (part of it may be left). */
	int (*remove_tree)(void *ctx, const char *path);
	void *ctx;
} hw_broker_fs;

/* The file system (POSIX calls; hw_broker_posixfs.c), ctx unused. */
extern const hw_broker_fs hw_broker_posix_fs;

/* Read and remove log_dir's clean-shutdown file: the broker epoch it
 * records, or -1 (none, unreadable or malformed: a crash). A failed removal
 * is logged. */
int64_t hw_broker_take_clean_shutdown(const hw_broker_fs *fs, const char *log_dir);
/* Record broker epoch `epoch` (>= 0) in log_dir's clean-shutdown file.
 * 0, -EINVAL (epoch < 0), -ENAMETOOLONG, or the fs's -errno. */
int hw_broker_record_clean_shutdown(const hw_broker_fs *fs, const char *log_dir, int64_t epoch);

/* A partition directory's topic id, in its file "partition.metadata"
 * ("version: 0\ntopic_id: <id>\n", Kafka's file of that name with
 * hiwater's 32-bit id): a log recovered under a topic's name may be a
 * deleted topic's of the same name whose deletion this broker missed
 * (docs/kafka.md "DeleteTopics"). Claiming dir for topic_id: 1 when the
 * file names another id (the log is stale: delete it), 0 when it names
 * this one or is absent or unreadable (then written), or the fs's -errno
 * when writing it failed (the log is still usable). */
#define HW_BROKER_PARTITION_META_FILE "partition.metadata"
int hw_broker_partition_meta_claim(const hw_broker_fs *fs, const char *dir, uint32_t topic_id);
/* The topic id dir's "partition.metadata" names: 0 and *topic_id, -ENOENT
 * (absent, unreadable or not that format) or -ENAMETOOLONG. */
int hw_broker_partition_meta_read(const hw_broker_fs *fs, const char *dir, uint32_t *topic_id);

/* A partition directory's name "<topic>-<partition>" with a legal topic
 * name (letters, digits, '.', '_', '-'; shorter than cap) and a partition
 * <= 2^20. 0 with topic and *part, or -EINVAL. */
int hw_broker_parse_partition_dir(const char *name, char *topic, size_t cap, uint32_t *part);

/* Where a new partition log goes: the index of the online dir (offline[d]
 * == 0) holding the fewest of the existing logs, whose directories are
 * log_paths[0..n_logs) ("<dir>/<topic>-<partition>"); ties to the first.
 * -EIO when every dir is offline. */
int hw_broker_place_log(const char *const *dirs, const int *offline, int n_dirs, const char *const *log_paths,
			size_t n_logs);

#endif
