/* hw_memstore.h — an in-memory hw_store: the deterministic harness's disk.
 *
 * Design note. One contiguous byte buffer holds the batches back to back
 * plus an index (base, last, epoch, position) per batch, so a read is a
 * binary search and a pointer into the buffer — the same "whole batches,
 * contiguous" shape the io_uring log returns. It implements hw_store's
 * contract exactly (see hw_store.h); durable_end_offset equals the LEO
 * (page-cache policy) unless a test holds it back (hw_memstore_hold_durable). Fault injection
 * (append errors) lets tests drive KAFKA_STORAGE_ERROR paths.
 *
 * "close" frees the store unless it was created `persistent`: then close
 * only detaches it, so a test can restart a replica manager over the same
 * log (a broker restart) and free it later with hw_memstore_free().
 */
#ifndef HW_MEMSTORE_H
#define HW_MEMSTORE_H
#include "hw_store.h"

/* 0 and *out, or -ENOMEM. The log starts empty at offset 0. */
int hw_memstore_create(int persistent, hw_store **out);
/* Free a persistent store (no-op for NULL). */
void hw_memstore_free(hw_store *s);

/* Test knobs, for a memstore only (another store aborts: HW_ASSERT).
 * fail_appends: the next n appends fail with -EIO. */
void hw_memstore_fail_appends(hw_store *s, int n);
/* The disk died (docs/logdirs.md): from now on every append fails with
 * -EIO, every poll returns -EIO, and the durable end stays where it is
 * (already held, or the LEO now): bytes appended and not yet durable never
 * will be. */
void hw_memstore_fail_writes(hw_store *s);
/* hold = 1: the durable end stops where the LEO is now (a slow write or
 * fsync); 0: it catches up with the LEO again. */
void hw_memstore_hold_durable(hw_store *s, int hold);
/* Number of batches held. */
size_t hw_memstore_batch_count(hw_store *s);
/* Fault injection: flip a byte of batch i's records, as a bad disk would
 * (docs/security.md "Faults"). 0 or -ENOENT. */
int hw_memstore_corrupt_batch(hw_store *s, size_t i);

#endif
