/* hw_wheel.c — hierarchical timing wheel (see hw_wheel.h for the contract).
 *
 * How it works. Level k has `n` buckets of width tick_k = tick * n^k; it
 * covers the window [cur_k, cur_k + n*tick_k) where cur_k is the wheel clock
 * rounded down to a multiple of tick_k. A timer with expiry e goes to the
 * lowest level whose window contains e, in bucket (e / tick_k) % n. Within a
 * window each slot (e / tick_k) maps to a distinct bucket, and a bucket is
 * processed before the window slides past its slot, so a bucket only ever
 * holds timers of one slot.
 *
 * Each non-empty bucket sits once in a min-heap keyed by its processing
 * time ("key"), as Kafka's SystemTimer keeps TimerTaskLists in a DelayQueue.
 * The key is the first instant of the bucket's slot, slot*tick_k (for a
 * level-0 bucket partly fired, target+1: see below), so it is <= every
 * expiry in the bucket. advance_to(target) pops buckets in key order while
 * key <= target; ties go to the coarser level, so a cascade lands in a
 * level-0 bucket before that bucket is processed.
 *   - level k >= 1: the clock moves to the key and the timers are
 *     re-inserted; they now fit a finer level (the cascade) or are due. A
 *     timer reaches level k only if it did not fit level k-1, so its slot
 *     is past the clock's: such keys are always > the clock.
 *   - level 0: the list is sorted by expiry (when tick > 1), the prefix with
 *     expiry <= target moves to the due list, and a remainder (only when
 *     target falls inside the slot) stays with key target+1.
 * Firing a due timer moves the clock up to its expiry, so callbacks see
 * now == expiry. The clock never passes the end of the level-0 slot being
 * processed, and no other pending bucket's slot lies before it, so a bucket
 * still holds only one slot.
 *
 * Due timers wait on a list (`due`) that is a bucket outside the heap, so a
 * callback that cancels a not-yet-fired due timer just unlinks it: nothing
 * cancelled before its callback runs can fire. A timer is unlinked (not
 * pending) before its callback runs, so the callback may re-arm it.
 *
 * Cancel is O(1): unlink from the bucket list. An emptied bucket stays in
 * the heap until its key comes (Kafka does the same); it then pops empty.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hw_wheel.h"

typedef struct wheel_bucket {
	hw_timer *head, *tail;
	int64_t key;      /* processing time while in the heap */
	int heap_idx;     /* index in w->heap, -1 when not in it */
	int level;        /* -1 for the due list */
} wheel_bucket;

typedef struct wheel_level {
	int64_t tick;        /* width of one bucket */
	uint64_t span;       /* n * tick, or UINT64_MAX when that overflows */
	wheel_bucket *b;     /* n buckets */
} wheel_level;

#define HW_WHEEL_MAX_LEVELS 64

struct hw_wheel {
	int64_t tick;
	int n;
	int nlevels;
	int64_t now;
	size_t count;                 /* pending timers (buckets + due) */
	int in_advance;               /* advance_to is running (no nesting) */
	wheel_level lv[HW_WHEEL_MAX_LEVELS];
	wheel_bucket due;
	wheel_bucket **heap;          /* min-heap on key */
	int heap_len, heap_cap;
};

/* ---- bucket lists ------------------------------------------------------ */

static void list_append(wheel_bucket *b, hw_timer *t)
{
	t->next = NULL;
	t->prev = b->tail;
	if (b->tail)
		b->tail->next = t;
	else
		b->head = t;
	b->tail = t;
	t->bucket = b;
}

static void list_unlink(hw_timer *t)
{
	wheel_bucket *b = t->bucket;
	if (t->prev)
		t->prev->next = t->next;
	else
		b->head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	else
		b->tail = t->prev;
	t->next = t->prev = NULL;
	t->bucket = NULL;
}

/* ---- bucket heap -------------------------------------------------------- */

static void heap_set(hw_wheel *w, int i, wheel_bucket *b)
{
	w->heap[i] = b;
	b->heap_idx = i;
}

/* Order: key, then coarser level first (cascade before processing). */
static int before(const wheel_bucket *a, const wheel_bucket *b)
{
	return a->key < b->key || (a->key == b->key && a->level > b->level);
}

static void heap_up(hw_wheel *w, int i)
{
	wheel_bucket *b = w->heap[i];
	while (i > 0) {
		int p = (i - 1) / 2;
		if (!before(b, w->heap[p]))
			break;
		heap_set(w, i, w->heap[p]);
		i = p;
	}
	heap_set(w, i, b);
}

static void heap_down(hw_wheel *w, int i)
{
	wheel_bucket *b = w->heap[i];
	for (;;) {
		int c = 2 * i + 1;
		if (c >= w->heap_len)
			break;
		if (c + 1 < w->heap_len && before(w->heap[c + 1], w->heap[c]))
			c++;
		if (!before(w->heap[c], b))
			break;
		heap_set(w, i, w->heap[c]);
		i = c;
	}
	heap_set(w, i, b);
}

/* Capacity is reserved when a level is added, so this cannot fail. */
static void heap_push(hw_wheel *w, wheel_bucket *b)
{
	heap_set(w, w->heap_len++, b);
	heap_up(w, b->heap_idx);
}

static wheel_bucket *heap_pop(hw_wheel *w)
{
	wheel_bucket *top = w->heap[0];
	top->heap_idx = -1;
	if (--w->heap_len > 0) {
		heap_set(w, 0, w->heap[w->heap_len]);
		heap_down(w, 0);
	}
	return top;
}

/* ---- levels ------------------------------------------------------------- */

static int64_t floor_to(int64_t v, int64_t step) /* v >= 0 */
{
	return v - v % step;
}

static int add_level(hw_wheel *w)
{
	int k = w->nlevels;
	if (k == HW_WHEEL_MAX_LEVELS)
		return -ENOMEM;
	int64_t tick = k == 0 ? w->tick : w->lv[k - 1].tick * w->n;
	int cap = (k + 1) * w->n;
	if (cap > w->heap_cap) {
		wheel_bucket **h = realloc(w->heap, (size_t)cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		w->heap = h;
		w->heap_cap = cap;
	}
	wheel_bucket *b = calloc((size_t)w->n, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (int i = 0; i < w->n; i++) {
		b[i].heap_idx = -1;
		b[i].level = k;
	}
	w->lv[k].tick = tick;
	w->lv[k].span = (uint64_t)tick > UINT64_MAX / (uint64_t)w->n / 2
				? UINT64_MAX
				: (uint64_t)tick * (uint64_t)w->n;
	w->lv[k].b = b;
	w->nlevels = k + 1;
	return 0;
}

/* The highest level needs no level above it once its window covers every
 * int64 time from the clock on. */
static int level_is_top(const wheel_level *l)
{
	return l->span > (uint64_t)INT64_MAX;
}

/* Place a not-pending timer whose callback is set. */
static int insert(hw_wheel *w, hw_timer *t)
{
	int64_t e = t->expires;
	if (e <= w->now) {
		list_append(&w->due, t);
		w->count++;
		return 0;
	}
	for (int k = 0;; k++) {
		if (k == w->nlevels) {
			int rc = add_level(w);
			if (rc)
				return rc;
		}
		wheel_level *l = &w->lv[k];
		int64_t cur = floor_to(w->now, l->tick);
		/* e > now >= cur, so the unsigned difference is exact. */
		if ((uint64_t)e - (uint64_t)cur >= l->span && !level_is_top(l))
			continue;
		int64_t slot = e / l->tick;
		wheel_bucket *b = &l->b[slot % w->n];
		/* Level 0: the slot may be the clock's own (key <= now), it is
		 * processed on the next advance_to. Level k >= 1: e >=
		 * cur_{k-1} + tick_k >= cur_k + tick_k (it did not fit level k-1),
		 * so the key is > now. */
		int64_t key = slot * l->tick;
		if (b->heap_idx < 0) {
			b->key = key;
			heap_push(w, b);
		}
		/* Else b holds (or held, if emptied by cancel) this same slot,
		 * and its key is <= e (the one-slot-per-bucket invariant). */
		assert(b->key <= e);
		list_append(b, t);
		w->count++;
		return 0;
	}
}

/* ---- public API ---------------------------------------------------------- */

hw_wheel *hw_wheel_create(int64_t tick, int wheel_size, int64_t start)
{
	if (tick < 1 || wheel_size < 2 || start < 0)
		return NULL;
	hw_wheel *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->tick = tick;
	w->n = wheel_size;
	w->now = start;
	w->due.heap_idx = -1;
	w->due.level = -1;
	if (add_level(w) != 0) {
		hw_wheel_destroy(w);
		return NULL;
	}
	return w;
}

static void drop_list(wheel_bucket *b)
{
	while (b->head)
		list_unlink(b->head);
}

void hw_wheel_destroy(hw_wheel *w)
{
	if (!w)
		return;
	drop_list(&w->due);
	for (int k = 0; k < w->nlevels; k++) {
		for (int i = 0; i < w->n; i++)
			drop_list(&w->lv[k].b[i]);
		free(w->lv[k].b);
	}
	free(w->heap);
	free(w);
}

void hw_timer_init(hw_timer *t, hw_timer_fn fn, void *arg)
{
	memset(t, 0, sizeof(*t));
	t->fn = fn;
	t->arg = arg;
}

int hw_wheel_cancel(hw_wheel *w, hw_timer *t)
{
	if (!t || !t->bucket)
		return 0;
	list_unlink(t);
	w->count--;
	return 1;
}

int hw_wheel_add(hw_wheel *w, hw_timer *t, int64_t expires)
{
	if (!w || !t || !t->fn)
		return -EINVAL;
	hw_wheel_cancel(w, t);
	t->expires = expires;
	return insert(w, t);
}

/* Stable merge sort of a NULL-terminated list by expiry (prev ignored). */
static hw_timer *sort_by_expiry(hw_timer *h)
{
	if (!h || !h->next)
		return h;
	hw_timer *slow = h, *fast = h->next;
	while (fast && fast->next) {
		slow = slow->next;
		fast = fast->next->next;
	}
	hw_timer *b = slow->next;
	slow->next = NULL;
	hw_timer *a = sort_by_expiry(h);
	b = sort_by_expiry(b);
	hw_timer head = { 0 }, *tail = &head;
	while (a && b) {
		if (b->expires < a->expires) {
			tail->next = b;
			b = b->next;
		} else {
			tail->next = a;
			a = a->next;
		}
		tail = tail->next;
	}
	tail->next = a ? a : b;
	return head.next;
}

/* Cascade: take a popped level >= 1 bucket's timers out and re-insert them
 * at the new clock; they land on finer levels or the due list. */
static void cascade_bucket(hw_wheel *w, wheel_bucket *b)
{
	hw_timer *t = b->head;
	size_t n = 0;
	b->head = b->tail = NULL;
	while (t) {
		hw_timer *next = t->next;
		t->next = t->prev = NULL;
		t->bucket = NULL;
		n++;
		/* Re-insertion lands strictly below this level or on the due
		 * list, where every level already exists: cannot fail. */
		int rc = insert(w, t);
		assert(rc == 0);
		(void)rc;
		t = next;
	}
	w->count -= n; /* insert() counted each again */
}

/* A popped level-0 bucket: timers with expiry <= target go to the due list
 * in expiry order; the rest (only if target is inside the slot) stay, with
 * the bucket re-queued at target+1 (<= their expiries). */
static void expire_bucket(hw_wheel *w, wheel_bucket *b, int64_t target)
{
	hw_timer *t = b->head;
	b->head = b->tail = NULL;
	if (w->tick > 1)
		t = sort_by_expiry(t); /* leaves prev stale: relinked below */
	while (t) {
		hw_timer *next = t->next;
		list_append(t->expires <= target ? &w->due : b, t);
		t = next;
	}
	if (b->head) {
		b->key = target + 1; /* target < some expiry <= INT64_MAX */
		heap_push(w, b);
	}
}

size_t hw_wheel_advance_to(hw_wheel *w, int64_t now)
{
	size_t fired = 0;
	if (!w || now < w->now || w->in_advance)
		return 0;
	w->in_advance = 1;
	for (;;) {
		while (w->due.head) {
			hw_timer *t = w->due.head;
			list_unlink(t);
			w->count--;
			fired++;
			if (t->expires > w->now)
				w->now = t->expires; /* <= now: only such timers are due */
			t->fn(t, t->arg);
		}
		if (w->heap_len == 0 || w->heap[0]->key > now)
			break;
		wheel_bucket *b = heap_pop(w);
		if (b->key > w->now)
			w->now = b->key;
		if (b->level == 0)
			expire_bucket(w, b, now);
		else
			cascade_bucket(w, b);
	}
	w->now = now;
	w->in_advance = 0;
	return fired;
}

size_t hw_wheel_size(const hw_wheel *w)
{
	return w ? w->count : 0;
}

int64_t hw_wheel_now(const hw_wheel *w)
{
	return w ? w->now : 0;
}

int64_t hw_wheel_next_expiry(const hw_wheel *w)
{
	if (!w || w->count == 0)
		return INT64_MAX;
	if (w->due.head)
		return w->now;
	return w->heap_len ? w->heap[0]->key : INT64_MAX;
}
