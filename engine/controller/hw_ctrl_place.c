/* hw_ctrl_place.c — replica placement (hw_ctrl_place.h, docs/racks.md
 * "Rack-aware placement"). Follows kafka.admin.AdminUtils: the ZooKeeper-era
 * placement that `kafka-reassign-partitions --generate` still uses, chosen
 * over KRaft's StripedReplicaPlacer because hiwater's rack-unaware placement
 * already was AdminUtils' and because, with its start index and shift fixed
 * (here from the topic id), it is deterministic and can be compared with
 * Kafka's output; StripedReplicaPlacer makes the same promises (racks
 * distinct while RF <= racks, leaders balanced) with random shuffles. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_ctrl_place.h"

static const char *rack_or_empty(const char *r)
{
	return r ? r : "";
}

static int cmp_broker(const void *a, const void *b)
{
	const hw_place_broker *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

static int cmp_rack_then_id(const void *a, const void *b)
{
	const hw_place_broker *x = a, *y = b;
	int c = strcmp(rack_or_empty(x->rack), rack_or_empty(y->rack));
	return c ? c : (x->id > y->id) - (x->id < y->id);
}

int hw_place_rack_alternated(const hw_place_broker *b, int n, int32_t *out)
{
	if (n < 1)
		return 0;
	hw_place_broker *s = malloc((size_t)n * sizeof(*s));
	int *rack_start = malloc((size_t)(n + 1) * sizeof(int));
	int *taken = calloc((size_t)n, sizeof(int));
	if (!s || !rack_start || !taken) {
		free(s);
		free(rack_start);
		free(taken);
		return -ENOMEM;
	}
	memcpy(s, b, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_rack_then_id);
	/* racks as runs of the sorted array: rack r is s[rack_start[r] ..
	 * rack_start[r+1]) */
	int racks = 0;
	for (int i = 0; i < n; i++)
		if (i == 0 || strcmp(rack_or_empty(s[i].rack), rack_or_empty(s[i - 1].rack)))
			rack_start[racks++] = i;
	rack_start[racks] = n;
	/* one broker of each rack in turn; a rack that ran out is skipped */
	int k = 0;
	for (int r = 0; k < n; r = (r + 1) % racks) {
		int len = rack_start[r + 1] - rack_start[r];
		if (taken[r] < len)
			out[k++] = s[rack_start[r] + taken[r]++].id;
	}
	free(s);
	free(rack_start);
	free(taken);
	return racks;
}

/* Kafka's replicaIndex: the follower j of a partition whose first replica
 * is at `first`, at a shift that never lands on the first replica. */
static int replica_index(int first, int second_shift, int j, int n)
{
	int shift = 1 + (second_shift + j) % (n - 1);
	return (first + shift) % n;
}

static void assign_unaware(const int32_t *ids, int n, int partitions, int rf, int start, int shift,
			   hw_idset *out)
{
	for (int p = 0; p < partitions; p++) {
		if (p > 0 && p % n == 0)
			shift++;
		int first = (p + start) % n;
		hw_idset *r = &out[p];
		r->n = 0;
		r->id[r->n++] = ids[first];
		for (int j = 0; j < rf - 1; j++)
			r->id[r->n++] = ids[replica_index(first, shift, j, n)];
	}
}

/* The rack index of broker id in the alternated list's racks. */
static int rack_no(const hw_place_broker *b, int n, int32_t id, const char **racks, int n_racks)
{
	for (int i = 0; i < n; i++)
		if (b[i].id == id)
			for (int r = 0; r < n_racks; r++)
				if (!strcmp(racks[r], rack_or_empty(b[i].rack)))
					return r;
	return -1;
}

static int assign_aware(const hw_place_broker *b, int n, int partitions, int rf, int start, int shift,
			hw_idset *out)
{
	int32_t *list = malloc((size_t)n * sizeof(int32_t));
	int *rack_of = malloc((size_t)n * sizeof(int));
	const char **racks = malloc((size_t)n * sizeof(char *));
	uint8_t *rack_has = malloc((size_t)n);
	if (!list || !rack_of || !racks || !rack_has) {
		free(list);
		free(rack_of);
		free(racks);
		free(rack_has);
		return -ENOMEM;
	}
	int n_racks = hw_place_rack_alternated(b, n, list);
	/* the racks by their first appearance: the alternated list starts
	 * with one broker of each */
	for (int r = 0; r < n_racks; r++)
		for (int i = 0; i < n; i++)
			if (b[i].id == list[r])
				racks[r] = rack_or_empty(b[i].rack);
	for (int i = 0; i < n; i++)
		rack_of[i] = rack_no(b, n, list[i], racks, n_racks);
	for (int p = 0; p < partitions; p++) {
		if (p > 0 && p % n == 0)
			shift++;
		int first = (p + start) % n;
		hw_idset *r = &out[p];
		memset(rack_has, 0, (size_t)n);
		r->n = 0;
		r->id[r->n++] = list[first];
		rack_has[rack_of[first]] = 1;
		int racks_with = 1;
		int k = 0;
		for (int j = 0; j < rf - 1; j++) {
			for (;;) {
				int i = replica_index(first, shift * n_racks, k++, n);
				int rk = rack_of[i];
				int broker_has = 0;
				for (int q = 0; q < r->n; q++)
					broker_has |= r->id[q] == list[i];
				int rack_taken = rack_has[rk];
				/* Kafka: skip a broker whose rack has a replica while
				 * some rack has none, and a broker that has one while
				 * some broker has none */
				if ((!rack_taken || racks_with == n_racks) && (!broker_has || r->n == n)) {
					r->id[r->n++] = list[i];
					if (!rack_taken) {
						rack_has[rk] = 1;
						racks_with++;
					}
					break;
				}
			}
		}
	}
	free(list);
	free(rack_of);
	free(racks);
	free(rack_has);
	return 0;
}

int hw_place_assign(const hw_place_broker *b, int n, int partitions, int rf, int start_index,
		    int replica_shift, hw_idset *out)
{
	if (n < 1 || rf < 1 || rf > n || rf > HW_MAX_RF || partitions < 1 || start_index < 0 || replica_shift < 0)
		return -EINVAL;
	int with_rack = 0;
	for (int i = 0; i < n; i++)
		with_rack += rack_or_empty(b[i].rack)[0] != 0;
	if (with_rack && with_rack != n)
		return -ENOTSUP;
	hw_place_broker *s = malloc((size_t)n * sizeof(*s));
	int32_t *ids = malloc((size_t)n * sizeof(int32_t));
	if (!s || !ids) {
		free(s);
		free(ids);
		return -ENOMEM;
	}
	memcpy(s, b, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_broker);
	for (int i = 0; i < n; i++)
		ids[i] = s[i].id;
	int rc = 0;
	if (with_rack)
		rc = assign_aware(s, n, partitions, rf, start_index % n, replica_shift % n, out);
	else
		assign_unaware(ids, n, partitions, rf, start_index % n, n > 1 ? replica_shift % (n - 1) : 0, out);
	free(s);
	free(ids);
	return rc;
}

int hw_place_check_manual(const hw_idset *parts, int n_parts, const int32_t *registered, int n_registered,
			  char *err, size_t cap)
{
	if (n_parts < 1) {
		snprintf(err, cap, "the replica assignment has no partitions");
		return -EINVAL;
	}
	for (int p = 0; p < n_parts; p++) {
		const hw_idset *s = &parts[p];
		if (s->n < 1) {
			snprintf(err, cap, "partition %d has no replicas", p);
			return -EINVAL;
		}
		if (s->n != parts[0].n) {
			snprintf(err, cap, "partition %d has %d replicas, partition 0 has %d: all partitions need the "
				 "same replication factor", p, s->n, parts[0].n);
			return -EINVAL;
		}
		for (int i = 0; i < s->n; i++) {
			for (int j = 0; j < i; j++)
				if (s->id[j] == s->id[i]) {
					snprintf(err, cap, "partition %d lists broker %d twice", p, s->id[i]);
					return -EINVAL;
				}
			int known = 0;
			for (int k = 0; k < n_registered; k++)
				known |= registered[k] == s->id[i];
			if (!known) {
				snprintf(err, cap, "partition %d: broker %d is not registered", p, s->id[i]);
				return -EINVAL;
			}
		}
	}
	return 0;
}
