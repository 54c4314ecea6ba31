/* hw_log_clean_map.c — the cleaner's key -> latest offset map (Kafka's
 * SkimpyOffsetMap, with whole keys instead of digests): open addressing
 * with linear probing over 64-bit FNV-1a hashes, keys copied into one
 * growing arena, doubling at 50% load, refusing to grow past max_bytes
 * (what bounds a pass's dirty range: log.cleaner.dedupe.buffer.size). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_log_clean_int.h"

typedef struct slot {
	uint64_t hash;     /* 0: empty (a real hash of 0 is stored as 1) */
	size_t key_off;    /* in arena */
	uint32_t key_len;
	int64_t value;
} slot;

struct hw_clean_map {
	slot *slots;
	size_t nslots, count;
	uint8_t *arena;
	size_t arena_len, arena_cap;
	size_t max_bytes;
};

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ull;
	}
	return h ? h : 1;
}

hw_clean_map *hw_clean_map_new(size_t max_bytes)
{
	hw_clean_map *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->max_bytes = max_bytes < 4096 ? 4096 : max_bytes;
	m->nslots = 64;
	m->slots = calloc(m->nslots, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return NULL;
	}
	return m;
}

void hw_clean_map_free(hw_clean_map *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m->arena);
	free(m);
}

size_t hw_clean_map_count(const hw_clean_map *m) { return m->count; }

static slot *find(const hw_clean_map *m, uint64_t h, const uint8_t *key, size_t len)
{
	size_t mask = m->nslots - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		slot *s = &m->slots[i];
		if (!s->hash || (s->hash == h && s->key_len == len &&
				 (len == 0 || memcmp(m->arena + s->key_off, key, len) == 0)))
			return s;
	}
}

static int grow(hw_clean_map *m)
{
	size_t n = m->nslots * 2;
	slot *v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < m->nslots; i++) {
		slot *s = &m->slots[i];
		if (!s->hash)
			continue;
		for (size_t j = s->hash & (n - 1);; j = (j + 1) & (n - 1))
			if (!v[j].hash) {
				v[j] = *s;
				break;
			}
	}
	free(m->slots);
	m->slots = v;
	m->nslots = n;
	return 0;
}

int hw_clean_map_put(hw_clean_map *m, const uint8_t *key, size_t len, int64_t value)
{
	if (len > UINT32_MAX)
		return -ENOSPC;
	uint64_t h = fnv1a(key, len);
	slot *s = find(m, h, key, len);
	if (s->hash) {
		s->value = value;
		return 0;
	}
	size_t need_arena = m->arena_len + len;
	size_t need_slots = (m->count + 1) * 2 > m->nslots ? m->nslots * 2 : m->nslots;
	if (need_arena + need_slots * sizeof(slot) > m->max_bytes)
		return -ENOSPC;
	if (need_arena > m->arena_cap) {
		size_t cap = m->arena_cap ? m->arena_cap : 4096;
		while (cap < need_arena)
			cap *= 2;
		uint8_t *a = realloc(m->arena, cap);
		if (!a)
			return -ENOMEM;
		m->arena = a;
		m->arena_cap = cap;
	}
	if (need_slots != m->nslots) {
		if (grow(m) < 0)
			return -ENOMEM;
		s = find(m, h, key, len);
	}
	if (len)
		memcpy(m->arena + m->arena_len, key, len);
	s->hash = h;
	s->key_off = m->arena_len;
	s->key_len = (uint32_t)len;
	s->value = value;
	m->arena_len += len;
	m->count++;
	return 0;
}

int64_t hw_clean_map_get(const hw_clean_map *m, const uint8_t *key, size_t len)
{
	const slot *s = find(m, fnv1a(key, len), key, len);
	return s->hash ? s->value : -1;
}
