/* hw_wire_auth.h — frame authentication (frame version 3): a keyed MAC
 * under the per-cluster secret over every frame's header and payload.
 *
 * Design note (docs/security.md "Frame authentication", docs/wire.md
 * "Version 3"). The MAC is AES-256-GCM used as GMAC: header, payload and
 * salt are GCM's additional data, nothing is encrypted (the payload stays
 * where it is, in place, and record bytes sent by reference are
 * authenticated through their iovec without a copy). perf/perf_mac
 * measured it against ChaCha20-Poly1305 and HMAC-SHA256 (README,
 * dependency list). A version-3 frame is
 *
 *     36-byte header (version 3) | payload | u32 salt | 16-byte tag
 *
 * with payload_len counting the payload only. The GCM nonce (21 bytes,
 * GHASHed to the counter block by GCM) is salt, stream, src, dst,
 * incarnation and seq: unique as long as no two senders share (src,
 * stream, incarnation, salt) — the incarnation is strictly increasing in a
 * process (hw_wire_new_incarnation: every sender context of a process has
 * its own) and renewed when seq wraps, and the salt is 32 random bits per
 * process (drawn when the key is installed), so two processes with the
 * same node id started in the same millisecond collide only with
 * probability 2^-32.
 *
 * The key is process-wide (set once at start-up, before reactors start):
 * NULL = `hiwater.auth=none`, in which case encoders emit versions 1/2 and
 * decoders accept only those. With a key, encoders emit version 3 only and
 * decoders drop versions 1/2 (NO_MAC) and frames whose tag does not verify
 * (BAD_MAC) before any field of the body is looked at, so the replay
 * window (hw_wire_replay_check, called on decoded frames) is only ever
 * moved by authenticated frames. Every thread keeps its own keyed OpenSSL
 * context (created on first use, freed at thread exit).
 */
#ifndef HW_WIRE_AUTH_H
#define HW_WIRE_AUTH_H
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define HW_WIRE_AUTH_KEY_LEN  32
#define HW_WIRE_AUTH_TAG_LEN  16
#define HW_WIRE_AUTH_SALT_LEN 4
#define HW_WIRE_AUTH_TRAILER  (HW_WIRE_AUTH_SALT_LEN + HW_WIRE_AUTH_TAG_LEN)
#define HW_WIRE_VERSION_AUTH  3

/* Install (key != NULL, len == HW_WIRE_AUTH_KEY_LEN) or remove (key ==
 * NULL) the process-wide key. Not thread-safe against concurrent encoders:
 * call before any reactor starts (tests may switch between cases). 0, or
 * -EINVAL for a bad length. */
int hw_wire_auth_set_key(const uint8_t *key, size_t len);

/* Which code computes the tags (the same tags either way):
 *   GHASH    hw_ghash.c's VPCLMULQDQ GHASH and one AES block per frame
 *            (libcrypto), where the CPU has it (hw_ghash_available);
 *   OPENSSL  libcrypto's AES-256-GCM, with the MACed bytes as its AAD.
 * AUTO (the default) takes GHASH where it runs, else OPENSSL. */
#define HW_WIRE_AUTH_IMPLS(X) \
	X(HW_WIRE_AUTH_IMPL_GHASH, "ghash-vpclmulqdq") \
	X(HW_WIRE_AUTH_IMPL_OPENSSL, "openssl-gcm")
enum {
#define X(name, str) name,
	HW_WIRE_AUTH_IMPLS(X)
#undef X
	HW_WIRE_AUTH_IMPL_COUNT,
	HW_WIRE_AUTH_IMPL_AUTO = HW_WIRE_AUTH_IMPL_COUNT
};

/* Ask for an implementation (AUTO or OPENSSL; GHASH means AUTO): takes
 * effect at the next hw_wire_auth_set_key. For tests and perf_mac; the
 * same rules as hw_wire_auth_set_key (before any reactor starts). */
void hw_wire_auth_set_impl(int impl);

/* The name of the implementation the installed key uses ("none" without
 * a key). */
const char *hw_wire_auth_impl_name(void);

/* 1 when a key is installed (frames are version 3), 0 under auth=none. */
int hw_wire_auth_on(void);

/* This process's nonce salt (random, drawn by hw_wire_auth_set_key). */
uint32_t hw_wire_auth_salt(void);

/* The tag over iov[0..n) followed by the 4 salt bytes (big-endian), with
 * the nonce taken from the frame header at iov[0] (which must hold the
 * whole 36-byte header). 0, -EINVAL (no key, short header), -EIO (OpenSSL
 * refused). */
int hw_wire_auth_tag(const struct iovec *iov, int n, uint32_t salt, uint8_t tag[HW_WIRE_AUTH_TAG_LEN]);

/* Verify a flat version-3 frame of `len` bytes (header, payload, trailer).
 * 0 when the tag verifies; -EBADMSG when it does not (or no key, or too
 * short). Constant-time comparison. */
int hw_wire_auth_verify(const uint8_t *frame, size_t len);

/* Internal to engine/proto (hw_wire.c's encoder): append salt and tag to
 * the frame the writer holds (header already patched), restoring the 20
 * bytes of frame limit the encoder held back. Flat mode MACs buf in place;
 * gather mode MACs the iov entries, record bytes where they are. 0, or
 * -EMSGSIZE (no room for the trailer), -EIO (OpenSSL). */
struct hw_wr;
int hw_wire_auth_seal(struct hw_wr *w);

/* ---- the secret file (docs/security.md "The cluster secret") ----------
 * 64 hex digits (and an optional newline): the 32-byte key. */

/* Create `path` with mode 0600 (O_EXCL: never overwrite) holding a fresh
 * random key. 0, -EEXIST, or another negative errno. */
int hw_wire_auth_secret_create(const char *path);

/* Read the key from `path`, refusing a file that is not a regular file
 * owned by the caller's effective uid with no group/other permission bits.
 * 0, or a negative errno with a human-readable reason in err:
 * -ENOENT/-EACCES (cannot open), -EPERM (mode or owner), -EINVAL (not 64
 * hex digits). */
int hw_wire_auth_secret_load(const char *path, uint8_t key[HW_WIRE_AUTH_KEY_LEN], char *err, size_t errlen);

#endif
