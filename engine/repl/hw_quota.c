/* hw_quota.c — sampled byte-rate quota (see hw_quota.h for the design
 * note; Kafka SampledStat + SimpleRate + ReplicationQuotaManager). */
#include <errno.h>
#include <string.h>
#include "hw_quota.h"

int hw_quota_init(hw_quota *q, int64_t bound, int samples, int64_t window_ms)
{
	memset(q, 0, sizeof(*q));
	q->bound = HW_QUOTA_UNLIMITED;
	q->samples = 1;
	q->window_ms = 1000;
	if (bound < 0 || samples < 1 || samples > HW_QUOTA_MAX_SAMPLES || window_ms < 1)
		return -EINVAL;
	q->bound = bound;
	q->samples = samples;
	q->window_ms = window_ms;
	return 0;
}

int hw_quota_set_bound(hw_quota *q, int64_t bound)
{
	if (bound < 0)
		return -EINVAL;
	q->bound = bound;
	return 0;
}

void hw_quota_record(hw_quota *q, int64_t bytes, int64_t now_ms)
{
	if (bytes < 0)
		return;
	if (q->used == 0) {
		q->cur = 0;
		q->used = 1;
		q->s[0] = (hw_quota_sample){ now_ms, 0 };
	} else if (now_ms - q->s[q->cur].start_ms >= q->window_ms) {
		/* the current sample is complete: start the next (the oldest
		 * once the ring is full) */
		q->cur = (q->cur + 1) % q->samples;
		if (q->cur >= q->used)
			q->used = q->cur + 1;
		q->s[q->cur] = (hw_quota_sample){ now_ms, 0 };
	}
	q->s[q->cur].bytes += bytes;
	q->recorded_bytes += (uint64_t)bytes;
}

/* Discard samples older than the whole window; sum the rest and compute the
 * elapsed time the rate is taken over (Kafka SimpleRate.windowSize). */
static void measure(hw_quota *q, int64_t now_ms, int64_t *total, int64_t *elapsed_ms)
{
	int64_t sum = 0, oldest = now_ms;
	int64_t expire = (int64_t)q->samples * q->window_ms;
	for (int i = 0; i < q->used; i++) {
		if (now_ms - q->s[i].start_ms >= expire)
			q->s[i] = (hw_quota_sample){ now_ms, 0 };
		sum += q->s[i].bytes;
		if (q->s[i].start_ms < oldest)
			oldest = q->s[i].start_ms;
	}
	int64_t el = now_ms - oldest;
	*total = sum;
	*elapsed_ms = el < q->window_ms ? q->window_ms : el; /* SimpleRate: >= one window */
}

double hw_quota_rate(hw_quota *q, int64_t now_ms)
{
	if (q->used == 0)
		return 0.0;
	int64_t total, el;
	measure(q, now_ms, &total, &el);
	return (double)total * 1000.0 / (double)el;
}

int hw_quota_exceeded(hw_quota *q, int64_t now_ms)
{
	if (q->bound == HW_QUOTA_UNLIMITED || q->used == 0)
		return 0;
	int64_t total, el;
	measure(q, now_ms, &total, &el);
	/* total / (el / 1000) > bound; doubles are exact up to 2^53 bytes*ms */
	return (double)total * 1000.0 > (double)q->bound * (double)el;
}

int64_t hw_quota_wait_ms(hw_quota *q, int64_t now_ms)
{
	if (!hw_quota_exceeded(q, now_ms))
		return 0;
	if (q->bound == 0)
		return q->window_ms * q->samples; /* only expiry can help */
	int64_t total, el;
	measure(q, now_ms, &total, &el);
	/* smallest elapsed e with total * 1000 <= bound * e */
	double need = (double)total * 1000.0 / (double)q->bound;
	int64_t e = (int64_t)need;
	if ((double)e < need)
		e++;
	int64_t w = e - el;
	return w < 1 ? 1 : w;
}
