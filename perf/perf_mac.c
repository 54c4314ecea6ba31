/* perf_mac.c — per-frame cost of the frame-authentication candidates
 * (docs/security.md "Choice of MAC"): AES-128-GCM used as GMAC (header and
 * payload as additional data, nothing encrypted), AES-256-GCM the same,
 * ChaCha20-Poly1305 the same, HMAC-SHA256 (truncated to 16 bytes on the
 * wire; truncation costs nothing). Each MAC runs over a frame split in two
 * segments (a 36-byte header and the payload referenced elsewhere), as the
 * zero-copy fetch path hands them over, with a fresh nonce per frame and
 * the context keyed once (what hw_wire_auth.c does). The baseline is a
 * memcpy of the same bytes in the same run.
 *
 * Usage: perf_mac [--iters N]     prints ns/frame and GB/s per size.
 * Exit 0, or 1 when OpenSSL refuses a call.
 */
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint8_t key[32] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
			   17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 };

/* One AEAD-as-MAC frame: nonce, two AAD segments, tag. 0 or -1. */
static int aead_frame(EVP_CIPHER_CTX *c, const uint8_t *hdr, size_t hl, const uint8_t *pl,
		      size_t plen, uint64_t n, uint8_t tag[16])
{
	uint8_t iv[12] = { 0 };
	int outl;
	memcpy(iv + 4, &n, 8);
	if (EVP_EncryptInit_ex(c, NULL, NULL, NULL, iv) != 1 ||
	    EVP_EncryptUpdate(c, NULL, &outl, hdr, (int)hl) != 1 ||
	    EVP_EncryptUpdate(c, NULL, &outl, pl, (int)plen) != 1 ||
	    EVP_EncryptFinal_ex(c, tag, &outl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_GET_TAG, 16, tag) != 1)
		return -1;
	return 0;
}

static int hmac_frame(EVP_MAC_CTX *c, const uint8_t *hdr, size_t hl, const uint8_t *pl,
		      size_t plen, uint64_t n, uint8_t tag[32])
{
	size_t outl;
	if (EVP_MAC_init(c, NULL, 0, NULL) != 1 || EVP_MAC_update(c, (uint8_t *)&n, 8) != 1 ||
	    EVP_MAC_update(c, hdr, hl) != 1 || EVP_MAC_update(c, pl, plen) != 1 ||
	    EVP_MAC_final(c, tag, &outl, 32) != 1)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	long iters = 200000;
	if (argc == 3 && !strcmp(argv[1], "--iters"))
		iters = atol(argv[2]);
	static const size_t sizes[] = { 64, 1024, 16384 };
	static const char *const names[] = { "aes-128-gmac", "aes-256-gmac", "chacha20-poly1305", "hmac-sha256" };
	const EVP_CIPHER *ciphers[] = { EVP_aes_128_gcm(), EVP_aes_256_gcm(), EVP_chacha20_poly1305() };
	uint8_t *buf = malloc(16384 + 64), *dst = malloc(16384 + 64), tag[32];
	memset(buf, 0x5a, 16384 + 64);
	printf("%-18s %8s %10s %8s %8s\n", "mac", "bytes", "ns/frame", "GB/s", "x memcpy");
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		size_t plen = sizes[s] - (sizes[s] > 36 ? 36 : 0), fl = 36 + plen;
		long it = sizes[s] >= 16384 ? iters / 8 : iters;
		double t0 = now_ns();
		for (long i = 0; i < it; i++) {
			memcpy(dst, buf, fl);
			__asm__ volatile("" ::"r"(dst) : "memory");
		}
		double base = (now_ns() - t0) / (double)it;
		printf("%-18s %8zu %10.1f %8.2f %8s\n", "memcpy (baseline)", fl, base, (double)fl / base, "1.0");
		for (int k = 0; k < 4; k++) {
			EVP_CIPHER_CTX *c = NULL;
			EVP_MAC *mac = NULL;
			EVP_MAC_CTX *mc = NULL;
			if (k < 3) {
				c = EVP_CIPHER_CTX_new();
				if (!c || EVP_EncryptInit_ex(c, ciphers[k], NULL, NULL, NULL) != 1 ||
				    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) != 1 ||
				    EVP_EncryptInit_ex(c, NULL, NULL, key, NULL) != 1)
					return 1;
			} else {
				OSSL_PARAM p[] = { OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)"SHA256", 0),
						   OSSL_PARAM_construct_end() };
				mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
				mc = mac ? EVP_MAC_CTX_new(mac) : NULL;
				if (!mc || EVP_MAC_init(mc, key, 32, p) != 1)
					return 1;
			}
			t0 = now_ns();
			for (long i = 0; i < it; i++) {
				int rc = k < 3 ? aead_frame(c, buf, 36, buf + 36, plen, (uint64_t)i, tag)
					       : hmac_frame(mc, buf, 36, buf + 36, plen, (uint64_t)i, tag);
				if (rc)
					return 1;
			}
			double ns = (now_ns() - t0) / (double)it;
			printf("%-18s %8zu %10.1f %8.2f %8.1f\n", names[k], fl, ns, (double)fl / ns, ns / base);
			EVP_CIPHER_CTX_free(c);
			EVP_MAC_CTX_free(mc);
			EVP_MAC_free(mac);
		}
	}
	free(buf);
	free(dst);
	return 0;
}
