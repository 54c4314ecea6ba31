/* hw_broker_memfs.c — the in-memory directory tree and logs (hw_broker_memfs.h). */
#include "hw_broker_memfs.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hw_memstore.h"

#define MEMFS_MAX_FAULTS 16

static const char *const op_names[] = {
#define HW_MEMFS_NAME(n) #n,
	HW_MEMFS_OPS(HW_MEMFS_NAME)
#undef HW_MEMFS_NAME
};

const char *hw_memfs_op_name(int op)
{
	return op >= 0 && op < HW_MEMFS_OP_COUNT ? op_names[op] : "?";
}

typedef struct ment {
	char *path;
	int dir;
	char *data;                 /* a file's bytes */
	size_t len;
	hw_store *log;              /* a log directory's store (persistent memstore) */
	int failed;                 /* its disk died */
} ment;

/* The path index: open addressing over entry indexes + 1 (0 empty,
 * TOMB removed), so a harness with 10^4 partitions per broker stays fast. */
#define TOMB SIZE_MAX

struct hw_broker_memfs {
	ment *e;
	size_t n, cap;
	size_t *slots;
	size_t nslots, used;        /* used: live + tombstones */
	int n_failed;               /* logs whose disk died (0: no lookup needed) */
	struct { int op, err; char *path; } faults[MEMFS_MAX_FAULTS];
	int n_faults;
};

static int fault(hw_broker_memfs *m, int op, const char *path)
{
	for (int i = 0; i < m->n_faults; i++)
		if (m->faults[i].op == op && !strcmp(m->faults[i].path, path))
			return -m->faults[i].err;
	return 0;
}

static size_t hash(const char *p)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	while (*p)
		h = (h ^ (uint8_t)*p++) * 1099511628211ull;
	return (size_t)h;
}

/* The slot holding path, or the empty one where it would go. */
static size_t *slot_of(hw_broker_memfs *m, const char *path)
{
	size_t mask = m->nslots - 1, i = hash(path) & mask;
	size_t *tomb = NULL;
	for (;; i = (i + 1) & mask) {
		size_t v = m->slots[i];
		if (v == 0)
			return tomb ? tomb : &m->slots[i];
		if (v == TOMB) {
			if (!tomb)
				tomb = &m->slots[i];
		} else if (!strcmp(m->e[v - 1].path, path)) {
			return &m->slots[i];
		}
	}
}

/* Rebuild the index with room for 2x the entries. 0 or -ENOMEM. */
static int reindex(hw_broker_memfs *m)
{
	size_t ns = 64;
	while (ns < (m->n + 1) * 4)
		ns *= 2;
	size_t *sl = calloc(ns, sizeof(*sl));
	if (!sl)
		return -ENOMEM;
	free(m->slots);
	m->slots = sl;
	m->nslots = ns;
	m->used = m->n;
	for (size_t i = 0; i < m->n; i++)
		*slot_of(m, m->e[i].path) = i + 1;
	return 0;
}

static ment *find(hw_broker_memfs *m, const char *path)
{
	size_t v = *slot_of(m, path);
	return v && v != TOMB ? &m->e[v - 1] : NULL;
}

/* Index entry i under its path. 0 or -ENOMEM. */
static int index_add(hw_broker_memfs *m, size_t i)
{
	if ((m->used + 1) * 2 > m->nslots)
		return reindex(m); /* entry i is indexed by the rebuild */
	size_t *sl = slot_of(m, m->e[i].path);
	if (*sl == 0)
		m->used++;
	*sl = i + 1;
	return 0;
}

static void index_del(hw_broker_memfs *m, const char *path)
{
	size_t *sl = slot_of(m, path);
	if (*sl && *sl != TOMB)
		*sl = TOMB;
}

/* path's parent directory exists ("/x": "/"; a bare name: "/"). */
static int parent_is_dir(hw_broker_memfs *m, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path)
		return 1;
	char buf[4096];
	size_t len = (size_t)(slash - path);
	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, path, len);
	buf[len] = 0;
	ment *p = find(m, buf);
	return p && p->dir;
}

/* A new entry for path. NULL: -ENOMEM. */
static ment *add(hw_broker_memfs *m, const char *path, int dir)
{
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 32;
		ment *ne = realloc(m->e, cap * sizeof(*ne));
		if (!ne)
			return NULL;
		m->e = ne;
		m->cap = cap;
	}
	char *p = strdup(path);
	if (!p)
		return NULL;
	ment *e = &m->e[m->n++];
	memset(e, 0, sizeof(*e));
	e->path = p;
	e->dir = dir;
	if (index_add(m, m->n - 1) < 0) {
		free(p);
		m->n--;
		return NULL;
	}
	return e;
}

static void drop(hw_broker_memfs *m, size_t i)
{
	index_del(m, m->e[i].path);
	m->n_failed -= m->e[i].failed;
	free(m->e[i].path);
	free(m->e[i].data);
	hw_memstore_free(m->e[i].log);
	m->e[i] = m->e[--m->n];
	if (i < m->n)
		*slot_of(m, m->e[i].path) = i + 1; /* the last entry moved to i */
}

/* path is under dir ("dir/..."). */
static int under(const char *path, const char *dir)
{
	size_t len = strlen(dir);
	return !strncmp(path, dir, len) && path[len] == '/';
}

/* ---- hw_broker_fs ------------------------------------------------------- */

/* The file at path for op: 0 and *out, or the op's fault, -ENOENT or -EISDIR. */
static int file_at(hw_broker_memfs *m, int op, const char *path, ment **out)
{
	int rc = fault(m, op, path);
	if (rc)
		return rc;
	ment *e = find(m, path);
	if (!e)
		return -ENOENT;
	if (e->dir)
		return -EISDIR;
	*out = e;
	return 0;
}

static int m_read(void *ctx, const char *path, char *buf, size_t cap)
{
	ment *e;
	int rc = file_at(ctx, HW_MEMFS_READ, path, &e);
	if (rc)
		return rc;
	size_t n = e->len < cap - 1 ? e->len : cap - 1;
	memcpy(buf, e->data, n);
	buf[n] = 0;
	return (int)n;
}

static int m_replace(void *ctx, const char *path, const void *buf, size_t len)
{
	hw_broker_memfs *m = ctx;
	int rc = fault(m, HW_MEMFS_REPLACE, path);
	if (rc)
		return rc;
	if (!parent_is_dir(m, path))
		return -ENOENT;
	ment *e = find(m, path);
	if (e && e->dir)
		return -EISDIR;
	char *d = malloc(len ? len : 1);
	if (!d || (!e && !(e = add(m, path, 0)))) {
		free(d);
		return -ENOMEM;
	}
	memcpy(d, buf, len);
	free(e->data);
	e->data = d;
	e->len = len;
	return 0;
}

static int m_remove(void *ctx, const char *path)
{
	hw_broker_memfs *m = ctx;
	ment *e;
	int rc = file_at(m, HW_MEMFS_REMOVE, path, &e);
	if (rc)
		return rc;
	drop(m, (size_t)(e - m->e));
	return 0;
}

static int m_list(void *ctx, const char *dir, int (*fn)(void *arg, const char *name), void *arg)
{
	hw_broker_memfs *m = ctx;
	int rc = fault(m, HW_MEMFS_LIST, dir);
	if (rc)
		return rc;
	ment *d = find(m, dir);
	if (!d || !d->dir)
		return d ? -ENOTDIR : -ENOENT;
	/* names first: fn may change the tree (remove a "-delete" dir) */
	size_t len = strlen(dir), k = 0;
	char **names = calloc(m->n ? m->n : 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++)
		if (under(m->e[i].path, dir) && !strchr(m->e[i].path + len + 1, '/') &&
		    !(names[k++] = strdup(m->e[i].path + len + 1)))
			rc = -ENOMEM;
	for (size_t i = 0; i < k && !rc; i++)
		rc = fn(arg, names[i]);
	for (size_t i = 0; i < k; i++)
		free(names[i]);
	free(names);
	return rc;
}

static int m_mkdirs(void *ctx, const char *path)
{
	hw_broker_memfs *m = ctx;
	int rc = fault(m, HW_MEMFS_MKDIRS, path);
	if (rc)
		return rc;
	char buf[4096];
	size_t len = strlen(path);
	if (len >= sizeof(buf) || path[0] != '/')
		return len >= sizeof(buf) ? -ENAMETOOLONG : -EINVAL;
	memcpy(buf, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i])
			continue;
		char c = buf[i];
		buf[i] = 0;
		ment *e = find(m, buf);
		if (e && !e->dir)
			return -ENOTDIR;
		if (!e && !add(m, buf, 1))
			return -ENOMEM;
		buf[i] = c;
	}
	return 0;
}

static int m_rename(void *ctx, const char *from, const char *to)
{
	hw_broker_memfs *m = ctx;
	int rc = fault(m, HW_MEMFS_RENAME, from);
	if (rc)
		return rc;
	ment *e = find(m, from);
	if (!e)
		return -ENOENT;
	if (find(m, to) || !parent_is_dir(m, to))
		return find(m, to) ? -EEXIST : -ENOENT;
	size_t flen = strlen(from), tlen = strlen(to);
	for (size_t i = 0; i < m->n; i++) {
		ment *x = &m->e[i];
		if (strcmp(x->path, from) && !under(x->path, from))
			continue;
		size_t rest = strlen(x->path) - flen;
		char *np = malloc(tlen + rest + 1);
		if (!np)
			return -ENOMEM; /* partly moved: a test harness runs out of memory only when broken */
		memcpy(np, to, tlen);
		memcpy(np + tlen, x->path + flen, rest + 1);
		index_del(m, x->path);
		free(x->path);
		x->path = np;
		if (index_add(m, i) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int m_remove_tree(void *ctx, const char *path)
{
	hw_broker_memfs *m = ctx;
	int rc = fault(m, HW_MEMFS_REMOVE_TREE, path);
	if (rc)
		return rc;
	if (!find(m, path))
		return -ENOENT;
	for (size_t i = m->n; i-- > 0;)
		if (!strcmp(m->e[i].path, path) || under(m->e[i].path, path))
			drop(m, i);
	return 0;
}

/* ---- hw_broker_log_ops ---------------------------------------------------- */

static ment *log_ent(hw_broker_memfs *m, hw_store *s)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->e[i].log == s)
			return &m->e[i];
	return NULL;
}

static int l_open(void *ctx, const char *dir, const char *topic, int reactor, hw_store **out)
{
	hw_broker_memfs *m = ctx;
	(void)topic;
	(void)reactor;
	int rc = fault(m, HW_MEMFS_OPEN_LOG, dir);
	if (rc)
		return rc;
	if (!parent_is_dir(m, dir))
		return -ENOENT; /* hw_log_open creates the log's directory, not its parents */
	if ((rc = m_mkdirs(m, dir)) < 0)
		return rc;
	ment *e = find(m, dir);
	if (!e->log && (rc = hw_memstore_create(1, &e->log)) < 0)
		return rc;
	*out = e->log;
	return 0;
}

static void l_adopt(void *ctx, hw_store *s, int reactor)
{
	(void)ctx;
	(void)s;
	(void)reactor;
}

static int l_failed(void *ctx, hw_store *s)
{
	hw_broker_memfs *m = ctx;
	ment *e = m->n_failed ? log_ent(m, s) : NULL;
	return e && e->failed;
}

static int l_flush(void *ctx, hw_store *s) { return l_failed(ctx, s) ? -EIO : 0; }

static void l_close(void *ctx, hw_store *s, int reactor)
{
	(void)ctx;
	(void)reactor;
	s->ops->close(s); /* persistent: detached, kept for the next open (the replica
			   * manager's close of a claimed log does the same) */
}

/* ---- the tree --------------------------------------------------------------- */

int hw_broker_memfs_create(hw_broker_memfs **out)
{
	hw_broker_memfs *m = calloc(1, sizeof(*m));
	if (!m || reindex(m) < 0 || !add(m, "/", 1)) {
		if (m)
			free(m->slots);
		free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

void hw_broker_memfs_destroy(hw_broker_memfs *m)
{
	if (!m)
		return;
	while (m->n)
		drop(m, m->n - 1);
	for (int i = 0; i < m->n_faults; i++)
		free(m->faults[i].path);
	free(m->slots);
	free(m->e);
	free(m);
}

hw_broker_fs hw_broker_memfs_fs(hw_broker_memfs *m)
{
	return (hw_broker_fs){ .read = m_read, .replace = m_replace, .remove = m_remove, .list = m_list,
			       .mkdirs = m_mkdirs, .rename = m_rename, .remove_tree = m_remove_tree, .ctx = m };
}

hw_broker_log_ops hw_broker_memfs_log_ops(hw_broker_memfs *m)
{
	return (hw_broker_log_ops){ .open = l_open, .adopt = l_adopt, .flush = l_flush, .close = l_close,
				    .failed = l_failed, .ctx = m };
}

int hw_broker_memfs_fault(hw_broker_memfs *m, hw_memfs_op op, const char *path, int err)
{
	for (int i = 0; i < m->n_faults; i++)
		if (m->faults[i].op == (int)op && !strcmp(m->faults[i].path, path)) {
			if (err) {
				m->faults[i].err = err;
				return 0;
			}
			free(m->faults[i].path);
			m->faults[i] = m->faults[--m->n_faults];
			return 0;
		}
	if (!err)
		return 0;
	if (m->n_faults == MEMFS_MAX_FAULTS)
		return -ENOSPC;
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	m->faults[m->n_faults].op = (int)op;
	m->faults[m->n_faults].err = err;
	m->faults[m->n_faults++].path = p;
	return 0;
}

int hw_broker_memfs_fail_log(hw_broker_memfs *m, const char *dir)
{
	ment *e = find(m, dir);
	if (!e || !e->log)
		return -ENOENT;
	hw_memstore_fail_writes(e->log);
	m->n_failed += !e->failed;
	e->failed = 1;
	return 0;
}

int hw_broker_memfs_kind(hw_broker_memfs *m, const char *path)
{
	ment *e = find(m, path);
	return !e ? 0 : e->dir ? 1 : 2;
}

int hw_broker_memfs_count(hw_broker_memfs *m, const char *dir, const char *suffix)
{
	int k = 0;
	size_t len = strlen(dir), sl = strlen(suffix);
	for (size_t i = 0; i < m->n; i++) {
		const char *p = m->e[i].path;
		size_t pl = strlen(p);
		if (under(p, dir) && !strchr(p + len + 1, '/') && pl >= sl && !strcmp(p + pl - sl, suffix))
			k++;
	}
	return k;
}

int hw_broker_memfs_logs(hw_broker_memfs *m)
{
	int k = 0;
	for (size_t i = 0; i < m->n; i++)
		k += m->e[i].log != NULL;
	return k;
}
