/* perf_mac.c — per-frame cost of the frame-authentication candidates
 * (docs/security.md "Choice of MAC"): AES-128-GCM used as GMAC (header and
 * payload as additional data, nothing encrypted), AES-256-GCM the same,
 * ChaCha20-Poly1305 the same, HMAC-SHA256 (truncated to 16 bytes on the
 * wire; truncation costs nothing). Each MAC runs over a frame split in two
 * segments (a 36-byte header and the payload referenced elsewhere), as the
 * zero-copy fetch path hands them over, with a fresh nonce per frame and
 * the context keyed once (what hw_wire_auth.c does). Then hiwater's own
 * frame MAC (hw_wire_auth_tag, AES-256-GMAC with the 21-byte nonce) with
 * each implementation (hw_wire_auth.h: OpenSSL's GCM, and hw_ghash.c's
 * VPCLMULQDQ GHASH where the CPU has it). The baseline is a memcpy of the
 * same bytes in the same run. 56000 bytes: perf/throughput's batches.
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
#include "hw_ghash.h"
#include "hw_wire_auth.h"

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
	static const size_t sizes[] = { 64, 1024, 16384, 56000 };
	static const char *const names[] = { "aes-128-gmac", "aes-256-gmac", "chacha20-poly1305", "hmac-sha256" };
	const EVP_CIPHER *ciphers[] = { EVP_aes_128_gcm(), EVP_aes_256_gcm(), EVP_chacha20_poly1305() };
	uint8_t *buf = malloc(56000 + 64), *dst = malloc(56000 + 64), tag[32];
	memset(buf, 0x5a, 56000 + 64);
	printf("%-22s %8s %10s %8s %8s\n", "mac", "bytes", "ns/frame", "GB/s", "x memcpy");
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		size_t plen = sizes[s] - (sizes[s] > 36 ? 36 : 0), fl = 36 + plen;
		long it = sizes[s] >= 16384 ? iters / (long)(sizes[s] / 2048) : iters;
		double t0 = now_ns();
		for (long i = 0; i < it; i++) {
			memcpy(dst, buf, fl);
			__asm__ volatile("" ::"r"(dst) : "memory");
		}
		double base = (now_ns() - t0) / (double)it;
		printf("%-22s %8zu %10.1f %8.2f %8s\n", "memcpy (baseline)", fl, base, (double)fl / base, "1.0");
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
			printf("%-22s %8zu %10.1f %8.2f %8.1f\n", names[k], fl, ns, (double)fl / ns, ns / base);
			EVP_CIPHER_CTX_free(c);
			EVP_MAC_CTX_free(mc);
			EVP_MAC_free(mac);
		}
		for (int impl = 0; impl < 2; impl++) {
			hw_wire_auth_set_impl(impl ? HW_WIRE_AUTH_IMPL_OPENSSL : HW_WIRE_AUTH_IMPL_AUTO);
			if (hw_wire_auth_set_key(key, sizeof key))
				return 1;
			if (!impl && !hw_ghash_available())
				continue;
			struct iovec iov[2] = { { buf, 36 }, { buf + 36, plen } };
			t0 = now_ns();
			for (long i = 0; i < it; i++) {
				buf[31] = (uint8_t)i; /* the sequence number: a fresh nonce */
				if (hw_wire_auth_tag(iov, 2, 7, tag))
					return 1;
			}
			double ns = (now_ns() - t0) / (double)it;
			char nm[40];
			snprintf(nm, sizeof nm, "hw:%s", hw_wire_auth_impl_name());
			printf("%-22s %8zu %10.1f %8.2f %8.1f\n", nm, fl, ns, (double)fl / ns, ns / base);
		}
	}
	free(buf);
	free(dst);
	return 0;
}
