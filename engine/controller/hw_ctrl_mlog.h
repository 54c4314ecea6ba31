/* hw_ctrl_mlog.h — the controller's metadata log: an append-only file of
 * checksummed records, replayed on start.
 *
 * Design note. The controller's state is small and changes rarely (broker
 * registrations, topic creations, partition changes), so it is kept as a
 * log of whole-entity records: each record carries the complete new state
 * of one broker, topic or partition, and replay simply applies them in
 * order ("last record wins"). That makes replay idempotent and a record
 * self-describing. When replay finds many more records than entities, the
 * controller writes a compacted copy (one record per entity) to a temporary
 * file and installs it with rename (hw_mlog_install), so the log's size
 * stays proportional to the metadata, not to its history.
 *
 * File format (all integers little-endian):
 *   header:  8 bytes "HWMLOG01"
 *   record:  u32 len  (bytes of type + payload, 1..HW_MLOG_MAX_RECORD)
 *            u32 crc  (CRC-32C of type + payload: lib/crc32c hw_crc32c)
 *            u8  type
 *            payload (len - 1 bytes)
 * A crash may leave a torn last record (short, or a checksum mismatch): on
 * open, replay stops at the first record that is not whole and correct, and
 * the file is truncated there — such a record never took effect, because
 * the controller applies a change only after its record is durable. A bad
 * record FOLLOWED by a valid one is not a torn tail but corruption of
 * records that took effect (docs/security.md "Faults"): open refuses
 * (-EUCLEAN, the offset logged) rather than forget everything after it —
 * forgetting topics would let their ids be handed out again.
 *
 * Not thread-safe; owned by the controller.
 */
#ifndef HW_CTRL_MLOG_H
#define HW_CTRL_MLOG_H
#include <stddef.h>
#include <stdint.h>

#define HW_MLOG_MAX_RECORD (1u << 20)

typedef struct hw_mlog hw_mlog;

/* Called for every whole record during open, in file order. A non-zero
 * return stops the replay and is returned by hw_mlog_open. */
typedef int (*hw_mlog_replay_fn)(void *arg, uint8_t type, const uint8_t *payload, size_t len);

/* Open (creating if missing) and replay. *torn_bytes receives how many tail
 * bytes were truncated. Returns 0, -ENOMEM, -EBADMSG (the header is not
 * ours), -EUCLEAN (a corrupt record with valid ones after it; logged with
 * both offsets), -errno from open/read/ftruncate, or the callback's non-zero
 * value. */
int hw_mlog_open(const char *path, int fsync_each, hw_mlog_replay_fn fn, void *arg,
		 hw_mlog **out, uint64_t *records, uint64_t *torn_bytes);

/* Append one record and (if fsync_each) fdatasync it. On failure the file is
 * truncated back to where it was. Returns 0, -EMSGSIZE (payload too large),
 * -errno from write/fdatasync. */
int hw_mlog_append(hw_mlog *l, uint8_t type, const void *payload, size_t len);

/* fdatasync now. 0 or -errno. */
int hw_mlog_sync(hw_mlog *l);

/* Replace the file at `path` with the one at `tmp_path` (already synced):
 * rename, then fsync the directory. 0 or -errno. */
int hw_mlog_install(const char *tmp_path, const char *path);

/* Current file size in bytes. */
uint64_t hw_mlog_size(const hw_mlog *l);

void hw_mlog_close(hw_mlog *l);

#endif
