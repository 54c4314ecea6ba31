#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_assert.h"
#include "hw_logging.h"
#include "hw_purg.h"

struct hw_purg {
	const char *name;
	hw_wheel *wheel;
	hw_purg_stats st;
};

const char *hw_dop_reason_name(int r)
{
	static const char *const names[] = {
#define HW_DOP_REASON_NAME(n) #n,
		HW_DOP_REASON_TABLE(HW_DOP_REASON_NAME)
#undef HW_DOP_REASON_NAME
	};
	return r >= 0 && r < HW_DOP_REASON_MAX ? names[r] : "UNKNOWN_REASON";
}

hw_purg *hw_purg_create(const char *name, hw_wheel *wheel)
{
	if (!wheel)
		return NULL;
	hw_purg *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->name = name;
	p->wheel = wheel;
	return p;
}

void hw_purg_destroy(hw_purg *p) { free(p); }

static void unref(hw_dop *op)
{
	HW_ASSERT(op->refs > 0);
	if (--op->refs == 0)
		op->ops->free(op);
}

static void on_timer(hw_timer *t, void *arg)
{
	(void)t;
	hw_dop *op = arg;
	hw_purg_complete(op->purg, op, HW_DOP_EXPIRED);
}

void hw_dop_init(hw_dop *op, const hw_dop_ops *ops)
{
	op->ops = ops;
	op->purg = NULL;
	op->refs = 1; /* the owner's, dropped at completion */
	op->reason = HW_DOP_PENDING;
	hw_timer_init(&op->timer, on_timer, op);
}

int hw_purg_complete(hw_purg *p, hw_dop *op, int reason)
{
	if (op->reason != HW_DOP_PENDING)
		return 0;
	HW_ASSERT(reason > HW_DOP_PENDING && reason < HW_DOP_REASON_MAX);
	op->reason = (uint8_t)reason;
	hw_wheel_cancel(p->wheel, &op->timer);
	p->st.completed[reason]++;
	HW_ASSERT(p->st.live > 0);
	p->st.live--;
	op->ops->on_complete(op, reason);
	unref(op);
	return 1;
}

/* Drop completed ops from the list, keeping order. */
static void compact(hw_purg *p, hw_purg_key *k)
{
	uint32_t j = 0;
	for (uint32_t i = 0; i < k->n; i++) {
		hw_dop *op = k->v[i].op;
		if (op->reason == HW_DOP_PENDING) {
			k->v[j++] = k->v[i];
		} else {
			p->st.watched--;
			unref(op);
		}
	}
	k->n = j;
}

static int watch(hw_purg *p, hw_purg_key *k, hw_dop *op, int hint)
{
	if (k->n == k->cap) {
		if (!k->scanning)
			compact(p, k);
		if (k->n == k->cap) {
			uint32_t cap = k->cap ? k->cap * 2 : 4;
			hw_purg_watch *v = realloc(k->v, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			k->v = v;
			k->cap = cap;
		}
	}
	k->v[k->n].op = op;
	k->v[k->n].hint = hint;
	k->n++;
	op->refs++;
	p->st.watched++;
	return 0;
}

int hw_purg_try_complete_else_watch(hw_purg *p, hw_dop *op, int64_t deadline_ms,
				    hw_purg_key *const *keys, int nkeys)
{
	op->purg = p;
	p->st.created++;
	p->st.live++;
	if (op->ops->try_complete(op, -1)) {
		hw_purg_complete(p, op, HW_DOP_SATISFIED);
		return 1;
	}
	/* hold a reference across the loop: a watch failure completes the op */
	op->refs++;
	int rc = 0;
	for (int i = 0; i < nkeys && !rc; i++)
		rc = watch(p, keys[i], op, i);
	if (rc) {
		HW_LOG(WARN, "repl", "purgatory %s: cannot watch (%d), forcing completion", p->name, rc);
		hw_purg_complete(p, op, HW_DOP_FORCED);
		unref(op);
		return rc;
	}
	/* re-check: state may have changed between the first check and the watch */
	if (op->ops->try_complete(op, -1)) {
		hw_purg_complete(p, op, HW_DOP_SATISFIED);
		unref(op);
		return 1;
	}
	hw_wheel_add(p->wheel, &op->timer, deadline_ms);
	unref(op);
	return 0;
}

size_t hw_purg_check_and_complete(hw_purg *p, hw_purg_key *k)
{
	size_t done = 0;
	/* on_complete may watch new ops on this very key (a follower's next
	 * fetch), so iterate by index over the entries present at the start */
	uint32_t n = k->n;
	k->scanning++;
	for (uint32_t i = 0; i < n; i++) {
		hw_dop *op = k->v[i].op;
		if (op->reason == HW_DOP_PENDING && op->ops->try_complete(op, k->v[i].hint))
			done += (size_t)hw_purg_complete(p, op, HW_DOP_SATISFIED);
	}
	k->scanning--;
	if (!k->scanning)
		compact(p, k);
	return done;
}

size_t hw_purg_force_all(hw_purg *p, hw_purg_key *k)
{
	size_t done = 0;
	uint32_t n = k->n;
	k->scanning++;
	for (uint32_t i = 0; i < n; i++)
		done += (size_t)hw_purg_complete(p, k->v[i].op, HW_DOP_FORCED);
	k->scanning--;
	if (!k->scanning)
		compact(p, k);
	return done;
}

void hw_purg_key_release(hw_purg *p, hw_purg_key *k)
{
	compact(p, k);
	HW_ASSERT(k->n == 0); /* live ops must be force-completed first */
	free(k->v);
	memset(k, 0, sizeof(*k));
}

void hw_purg_get_stats(const hw_purg *p, hw_purg_stats *out) { *out = p->st; }
