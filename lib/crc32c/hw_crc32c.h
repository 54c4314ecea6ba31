/* hw_crc32c.h — CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78).
 *
 * Design note
 * -----------
 * Kafka's RecordBatch v2 carries a CRC-32C over attributes..end of batch, and
 * the log re-checks it on every recovery scan, so this sits on the hot path of
 * produce validation and of log recovery. Two implementations are exposed:
 *
 *  - hw_crc32c_sw: portable slicing-by-8 (eight 256-entry tables, one 64-bit
 *    load per step, byte-at-a-time head/tail), any CPU, any alignment;
 *  - hw_crc32c_hw: the SSE4.2 CRC32 instruction (_mm_crc32_u64 on 8-byte
 *    words). It is compiled with __attribute__((target("sse4.2"))) so the
 *    library builds without -msse4.2 and runs on CPUs lacking it: the CPU is
 *    checked once at load time (__builtin_cpu_supports) and, if SSE4.2 is
 *    missing or this is not x86-64, hw_crc32c_hw returns the software result.
 *
 *  - hw_crc32c_fold: carry-less multiply folding on 512-bit registers
 *    (VPCLMULQDQ with AVX-512, checked at load time like SSE4.2): sixteen
 *    16-byte chunks folded 256 bytes ahead per step, the last 16 bytes and
 *    the tail through the CRC32 instruction. The three crc32q chains of
 *    hw_crc32c_hw run at ~8 bytes per cycle; a replicated byte is checked
 *    about four times (client, leader, two followers): 5% of a throughput
 *    row's CPU on the crc32q chains, about 3% with this path (perf/README.md
 *    "Throughput"), which pays from ~512 bytes.
 *
 * hw_crc32c picks the folding path for 512 bytes and more where the CPU has
 * it, else the SSE4.2 path when available. All paths give identical results
 * (tested against the RFC 3720 B.4 vectors, a bit-at-a-time reference and
 * each other).
 *
 * Semantics match Kafka's org.apache.kafka.common.utils.Crc32C.compute and
 * zlib's crc32(): the crc argument and the result are the *finished* CRC
 * (pre- and post-inverted internally). Start with 0; chain by passing the
 * previous result: hw_crc32c(hw_crc32c(0, a, n), b, m) == CRC of a||b.
 * Example: hw_crc32c(0, "123456789", 9) == 0xE3069283.
 *
 * Why not DPDK's rte_hash_crc or ISA-L
 * ------------------------------------
 * - rte_hash_crc(data, len, init) (rte_hash_crc.h) is a CRC-32C *hash*: no
 *   pre/post inversion (callers must pass ~0 and invert the result themselves
 *   to get the standard CRC), a uint32_t length, and it reads the input with
 *   plain *(const uint64_t *) casts (misaligned loads: undefined behaviour
 *   that UBSan flags on unaligned batch buffers). Its algorithm choice is a
 *   `static` variable set by a constructor in every translation unit that
 *   includes the header, and the header drags in rte_log/rte_cpuflags. lib/
 *   is DPDK-free by design (the engine and its tests must build and run
 *   without EAL), so depending on DPDK here for ~40 lines is a bad trade.
 *   (rte_hash_crc_4byte etc. are the fixed-width building blocks of the same
 *   hash; rte_net_crc only offers CRC-32 Ethernet and CRC-16 CCITT.)
 * - ISA-L's crc32_iscsi is faster (3-way interleaved PCLMUL folding) but ISA-L
 *   is not a dependency of hiwater and is not in the Debian package list the
 *   CI installs. The folding path above is the same method, written here
 *   in ~80 lines against the bit-at-a-time reference (test_crc32c).
 */
#ifndef HW_CRC32C_H
#define HW_CRC32C_H
#include <stddef.h>
#include <stdint.h>

/* CRC-32C of buf[0..len) continuing from crc (0 to start). Uses SSE4.2 if
 * the CPU has it, else the table-driven path. buf may be NULL iff len == 0.
 * Never fails. Thread-safe (tables are built before main runs). */
uint32_t hw_crc32c(uint32_t crc, const void *buf, size_t len);

/* The portable slicing-by-8 implementation. Same contract as hw_crc32c. */
uint32_t hw_crc32c_sw(uint32_t crc, const void *buf, size_t len);

/* The SSE4.2 implementation; returns hw_crc32c_sw's result when the CPU lacks
 * SSE4.2 or the build target is not x86-64. Same contract as hw_crc32c. */
uint32_t hw_crc32c_hw(uint32_t crc, const void *buf, size_t len);

/* The folding implementation (any length: under 256 bytes, or without
 * VPCLMULQDQ/AVX-512, it returns hw_crc32c_hw's result). Same contract as
 * hw_crc32c. */
uint32_t hw_crc32c_fold(uint32_t crc, const void *buf, size_t len);

/* 1 if hw_crc32c_fold really folds with VPCLMULQDQ on this CPU, else 0. */
int hw_crc32c_fold_available(void);

/* 1 if hw_crc32c_hw really uses the CRC32 instruction on this CPU, else 0. */
int hw_crc32c_hw_available(void);

#endif
