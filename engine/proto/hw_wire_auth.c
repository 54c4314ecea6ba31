/* hw_wire_auth.c — the version-3 frame MAC (AES-256-GCM as GMAC) and the
 * cluster secret file. Design note in hw_wire_auth.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "hw_ghash.h"
#include "hw_wire.h"
#include "hw_wire_auth.h"
#include "hw_wire_io.h"

#define IV_LEN (HW_WIRE_AUTH_SALT_LEN + 1 + 4 * 4)

static uint8_t g_key[HW_WIRE_AUTH_KEY_LEN];
static int g_on;
/* The implementation asked for (hw_wire_auth_set_impl) and the one the
 * installed key uses: HW_WIRE_AUTH_IMPL_GHASH = hw_ghash.c's GHASH plus one
 * AES block per frame (g_gh holds the hash key's powers), OPENSSL = its
 * GCM, which each thread's context then is. */
static int g_impl_want = HW_WIRE_AUTH_IMPL_AUTO;
static int g_impl = HW_WIRE_AUTH_IMPL_OPENSSL;
static hw_ghash_key g_gh;
static uint32_t g_salt;
/* Bumped on every key change so each thread re-keys its context lazily. */
static atomic_uint g_gen;

static _Thread_local EVP_CIPHER_CTX *tl_ctx;
static _Thread_local unsigned tl_gen;
static pthread_key_t tl_free_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;

static void tl_free(void *p)
{
	EVP_CIPHER_CTX_free(p);
}

static void tl_init(void)
{
	(void)pthread_key_create(&tl_free_key, tl_free);
}

static uint32_t new_salt(void)
{
	uint32_t s = 0;
	if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s)
		s = (uint32_t)getpid() * 2654435761u ^ hw_wire_new_incarnation();
	return s;
}

/* GCM's hash key H = AES_K(0^128) into g_gh. 0, or -EIO (OpenSSL). */
static int ghash_key_set(void)
{
	static const uint8_t zero[16];
	uint8_t h[16];
	int outl = 0, rc = -EIO;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	if (c && EVP_EncryptInit_ex(c, EVP_aes_256_ecb(), NULL, g_key, NULL) == 1 &&
	    EVP_CIPHER_CTX_set_padding(c, 0) == 1 && EVP_EncryptUpdate(c, h, &outl, zero, 16) == 1 && outl == 16) {
		hw_ghash_key_init(&g_gh, h);
		rc = 0;
	}
	EVP_CIPHER_CTX_free(c);
	OPENSSL_cleanse(h, sizeof h);
	return rc;
}

#define X(name, str) str,
static const char *const impl_names[] = { HW_WIRE_AUTH_IMPLS(X) };
#undef X

void hw_wire_auth_set_impl(int impl)
{
	g_impl_want = impl;
}

const char *hw_wire_auth_impl_name(void)
{
	return g_on && g_impl >= 0 && g_impl < HW_WIRE_AUTH_IMPL_COUNT ? impl_names[g_impl] : "none";
}

int hw_wire_auth_set_key(const uint8_t *key, size_t len)
{
	if (key && len != HW_WIRE_AUTH_KEY_LEN)
		return -EINVAL;
	if (key) {
		memcpy(g_key, key, HW_WIRE_AUTH_KEY_LEN);
		g_salt = new_salt();
		g_impl = HW_WIRE_AUTH_IMPL_OPENSSL;
		if (g_impl_want != HW_WIRE_AUTH_IMPL_OPENSSL && hw_ghash_available() && ghash_key_set() == 0)
			g_impl = HW_WIRE_AUTH_IMPL_GHASH;
	} else {
		OPENSSL_cleanse(g_key, sizeof g_key);
		OPENSSL_cleanse(&g_gh, sizeof g_gh);
	}
	g_on = key != NULL;
	/* release: the key bytes above are visible to a thread that sees the
	 * new generation (acquire in ctx_get) */
	atomic_fetch_add_explicit(&g_gen, 1, memory_order_release);
	return 0;
}

int hw_wire_auth_on(void)
{
	return g_on;
}

uint32_t hw_wire_auth_salt(void)
{
	return g_salt;
}


/* This thread's context keyed with the current key; NULL without a key or
 * when OpenSSL fails. */
static EVP_CIPHER_CTX *ctx_get(void)
{
	/* acquire: pairs with the release in hw_wire_auth_set_key */
	unsigned gen = atomic_load_explicit(&g_gen, memory_order_acquire);
	if (!g_on)
		return NULL;
	if (tl_ctx && tl_gen == gen)
		return tl_ctx;
	if (!tl_ctx) {
		pthread_once(&tl_once, tl_init);
		tl_ctx = EVP_CIPHER_CTX_new();
		if (!tl_ctx)
			return NULL;
		(void)pthread_setspecific(tl_free_key, tl_ctx);
	}
	if (g_impl == HW_WIRE_AUTH_IMPL_GHASH) {
		/* one AES block per frame: the tag's mask E_K(J0) */
		if (EVP_EncryptInit_ex(tl_ctx, EVP_aes_256_ecb(), NULL, g_key, NULL) != 1 ||
		    EVP_CIPHER_CTX_set_padding(tl_ctx, 0) != 1)
			return NULL;
	} else if (EVP_EncryptInit_ex(tl_ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
		   EVP_CIPHER_CTX_ctrl(tl_ctx, EVP_CTRL_AEAD_SET_IVLEN, IV_LEN, NULL) != 1 ||
		   EVP_EncryptInit_ex(tl_ctx, NULL, NULL, g_key, NULL) != 1)
		return NULL;
	tl_gen = gen;
	return tl_ctx;
}

/* Nonce from the header: salt, stream (flags bits 4..7), src, dst,
 * incarnation, seq (header offsets in hw_wire.h). */
static void make_iv(const uint8_t *hdr, uint32_t salt, uint8_t iv[IV_LEN])
{
	hw_be32_put(iv, salt);
	iv[4] = (uint8_t)(hdr[3] >> HW_WIRE_STREAM_SHIFT);
	memcpy(iv + 5, hdr + 16, 16);      /* src, dst, incarnation, seq */
}

/* GCM with no plaintext, spelled out (NIST SP 800-38D, 7.1): J0 =
 * GHASH(IV || pad || 0^64 || [len(IV)]_64) for an IV other than 96 bits,
 * S = GHASH(A || pad || [len(A)]_64 || 0^64), tag = E_K(J0) xor S. */
static int tag_ghash(EVP_CIPHER_CTX *c, const struct iovec *iov, int n, const uint8_t iv[IV_LEN],
		     const uint8_t sb[4], uint8_t tag[HW_WIRE_AUTH_TAG_LEN])
{
	uint8_t lens[16] = { 0 }, j0[16], ek[16], s[16];
	hw_ghash g;
	hw_ghash_init(&g, &g_gh);
	hw_ghash_update(&g, iv, IV_LEN);
	hw_ghash_pad(&g);
	hw_be32_put(lens + 12, IV_LEN * 8);
	hw_ghash_update(&g, lens, 16);
	hw_ghash_final(&g, j0);
	int outl = 0;
	if (EVP_EncryptUpdate(c, ek, &outl, j0, 16) != 1 || outl != 16)
		return -EIO;
	uint64_t alen = 4;
	hw_ghash_init(&g, &g_gh);
	for (int i = 0; i < n; i++) {
		hw_ghash_update(&g, iov[i].iov_base, iov[i].iov_len);
		alen += iov[i].iov_len;
	}
	hw_ghash_update(&g, sb, 4);
	hw_ghash_pad(&g);
	memset(lens, 0, sizeof lens);
	hw_be32_put(lens, (uint32_t)(alen >> 29));
	hw_be32_put(lens + 4, (uint32_t)(alen << 3));
	hw_ghash_update(&g, lens, 16);
	hw_ghash_final(&g, s);
	for (int i = 0; i < HW_WIRE_AUTH_TAG_LEN; i++)
		tag[i] = ek[i] ^ s[i];
	/* the unmasked hash would give away H (it is a polynomial in H over
	 * known bytes): leave neither it nor the mask on the stack */
	OPENSSL_cleanse(s, sizeof s);
	OPENSSL_cleanse(ek, sizeof ek);
	OPENSSL_cleanse(&g, sizeof g);
	return 0;
}

int hw_wire_auth_tag(const struct iovec *iov, int n, uint32_t salt, uint8_t tag[HW_WIRE_AUTH_TAG_LEN])
{
	if (n < 1 || iov[0].iov_len < HW_WIRE_HDR_LEN)
		return -EINVAL;
	EVP_CIPHER_CTX *c = ctx_get();
	if (!c)
		return g_on ? -EIO : -EINVAL;
	uint8_t iv[IV_LEN], sb[4];
	hw_be32_put(sb, salt);
	int outl;
	make_iv(iov[0].iov_base, salt, iv);
	if (g_impl == HW_WIRE_AUTH_IMPL_GHASH)
		return tag_ghash(c, iov, n, iv, sb, tag);
	if (EVP_EncryptInit_ex(c, NULL, NULL, NULL, iv) != 1)
		return -EIO;
	for (int i = 0; i < n; i++)
		if (iov[i].iov_len &&
		    EVP_EncryptUpdate(c, NULL, &outl, iov[i].iov_base, (int)iov[i].iov_len) != 1)
			return -EIO;
	if (EVP_EncryptUpdate(c, NULL, &outl, sb, 4) != 1 || EVP_EncryptFinal_ex(c, tag, &outl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, HW_WIRE_AUTH_TAG_LEN, tag) != 1)
		return -EIO;
	return 0;
}

int hw_wire_auth_verify(const uint8_t *frame, size_t len)
{
	if (!g_on || len < HW_WIRE_HDR_LEN + HW_WIRE_AUTH_TRAILER)
		return -EBADMSG;
	const uint8_t *tr = frame + len - HW_WIRE_AUTH_TRAILER;
	uint32_t salt = hw_be32_get(tr);
	struct iovec iov = { .iov_base = (void *)frame, .iov_len = len - HW_WIRE_AUTH_TRAILER };
	uint8_t tag[HW_WIRE_AUTH_TAG_LEN];
	if (hw_wire_auth_tag(&iov, 1, salt, tag))
		return -EBADMSG;
	return CRYPTO_memcmp(tag, tr + HW_WIRE_AUTH_SALT_LEN, HW_WIRE_AUTH_TAG_LEN) ? -EBADMSG : 0;
}

int hw_wire_auth_seal(hw_wr *w)
{
	uint8_t tag[HW_WIRE_AUTH_TAG_LEN];
	uint32_t salt = g_salt;
	w->max += HW_WIRE_AUTH_TRAILER;
	int rc;
	if (w->iov) {
		hw_wr_flush_seg(w);
		if (w->err)
			return w->err;
		rc = hw_wire_auth_tag(w->iov, w->n_iov, salt, tag);
	} else {
		struct iovec one = { .iov_base = w->buf, .iov_len = w->pos };
		rc = hw_wire_auth_tag(&one, 1, salt, tag);
	}
	if (rc)
		return rc == -EINVAL ? -EIO : rc;
	hw_wr_u32(w, salt);
	hw_wr_bytes(w, tag, sizeof tag);
	hw_wr_flush_seg(w);
	return w->err;
}

/* ---- the secret file */

int hw_wire_auth_secret_create(const char *path)
{
	uint8_t key[HW_WIRE_AUTH_KEY_LEN];
	char hex[2 * HW_WIRE_AUTH_KEY_LEN + 2];
	if (getrandom(key, sizeof key, 0) != (ssize_t)sizeof key)
		return -EIO;
	for (size_t i = 0; i < sizeof key; i++)
		snprintf(hex + 2 * i, 3, "%02x", key[i]);
	hex[2 * HW_WIRE_AUTH_KEY_LEN] = '\n';
	OPENSSL_cleanse(key, sizeof key);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, hex, 2 * HW_WIRE_AUTH_KEY_LEN + 1);
	int rc = w == 2 * HW_WIRE_AUTH_KEY_LEN + 1 ? 0 : w < 0 ? -errno : -EIO;
	if (!rc && fsync(fd))
		rc = -errno;
	close(fd);
	OPENSSL_cleanse(hex, sizeof hex);
	if (rc)
		unlink(path);
	return rc;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

int hw_wire_auth_secret_load(const char *path, uint8_t key[HW_WIRE_AUTH_KEY_LEN], char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	char buf[2 * HW_WIRE_AUTH_KEY_LEN + 8];
	ssize_t n = -1;
	int rc = 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		rc = -EPERM;
	} else if (st.st_mode & 077) {
		snprintf(err, errlen, "%s: mode %03o lets others read it (must be 0600)", path,
			 (unsigned)(st.st_mode & 0777));
		rc = -EPERM;
	} else if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "%s: owned by uid %u, not by us (uid %u)", path, (unsigned)st.st_uid,
			 (unsigned)geteuid());
		rc = -EPERM;
	} else {
		n = read(fd, buf, sizeof buf);
	}
	close(fd);
	if (rc)
		return rc;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	if (n != 2 * HW_WIRE_AUTH_KEY_LEN) {
		snprintf(err, errlen, "%s: expected %d hex digits", path, 2 * HW_WIRE_AUTH_KEY_LEN);
		OPENSSL_cleanse(buf, sizeof buf);
		return -EINVAL;
	}
	for (int i = 0; i < HW_WIRE_AUTH_KEY_LEN; i++) {
		int hi = hexval(buf[2 * i]), lo = hexval(buf[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			snprintf(err, errlen, "%s: expected %d hex digits", path, 2 * HW_WIRE_AUTH_KEY_LEN);
			OPENSSL_cleanse(buf, sizeof buf);
			return -EINVAL;
		}
		key[i] = (uint8_t)(hi << 4 | lo);
	}
	OPENSSL_cleanse(buf, sizeof buf);
	return 0;
}
