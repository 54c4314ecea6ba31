/* hw_ctrl_zk_store.c — the metadata store of ZooKeeper mode
 * (hw_ctrl_zk.h: one znode per entity, versioned multi-op writes guarded by
 * the controller epoch znode). Runs on the controller thread only. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_bytes.h"
#include "hw_ctrl_int.h"
#include "hw_ctrl_zk_int.h"
#include "hw_logging.h"

/* ---- versions we last saw, by path (open addressing) */

static uint32_t fnv(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

void zk_vmap_clear(hw_zk *z)
{
	if (z->vmap)
		memset(z->vmap, 0, sizeof(*z->vmap) * z->vcap);
	z->vcount = 0;
}

static zk_vent *vmap_slot(zk_vent *m, uint32_t cap, const char *path)
{
	for (uint32_t i = fnv(path) & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!m[i].path[0] || !strcmp(m[i].path, path))
			return &m[i];
}

/* Version of path, or -1 when we have not seen it (a create). */
static int32_t vmap_get(hw_zk *z, const char *path)
{
	if (!z->vcap)
		return -1;
	zk_vent *e = vmap_slot(z->vmap, z->vcap, path);
	return e->path[0] ? e->version : -1;
}

static int vmap_put(hw_zk *z, const char *path, int32_t version)
{
	if ((z->vcount + 1) * 2 > z->vcap) {
		uint32_t cap = z->vcap ? z->vcap * 2 : 256;
		zk_vent *m = calloc(cap, sizeof(*m));
		if (!m)
			return -ENOMEM;
		for (uint32_t i = 0; i < z->vcap; i++)
			if (z->vmap[i].path[0])
				*vmap_slot(m, cap, z->vmap[i].path) = z->vmap[i];
		free(z->vmap);
		z->vmap = m;
		z->vcap = cap;
	}
	zk_vent *e = vmap_slot(z->vmap, z->vcap, path);
	if (!e->path[0]) {
		snprintf(e->path, sizeof(e->path), "%s", path);
		z->vcount++;
	}
	e->version = version;
	return 0;
}

/* ---- record -> znode */

/* The znode of a record: the entity key leads every payload. 0 / -EINVAL. */
static int record_path(uint8_t type, const uint8_t *p, size_t len, char *out, size_t cap)
{
	switch (type) {
	case HW_CTRL_REC_BROKER:
		if (len < 4)
			return -EINVAL;
		snprintf(out, cap, ZK_ROOT "/brokers/%" PRIu32, hw_le32_get(p));
		return 0;
	case HW_CTRL_REC_TOPIC:
		if (len < 4)
			return -EINVAL;
		snprintf(out, cap, ZK_ROOT "/topics/%" PRIu32, hw_le32_get(p));
		return 0;
	case HW_CTRL_REC_TOPIC_CONFIG:
		if (len < 4)
			return -EINVAL;
		snprintf(out, cap, ZK_ROOT "/topic_configs/%" PRIu32, hw_le32_get(p));
		return 0;
	case HW_CTRL_REC_PARTITION:
		if (len < 8)
			return -EINVAL;
		snprintf(out, cap, ZK_ROOT "/partitions/%" PRIu32 "-%" PRIu32, hw_le32_get(p), hw_le32_get(p + 4));
		return 0;
	}
	return -EINVAL; /* BASE belongs to the metadata log's compaction only */
}

/* A write failed: count why; -ESTALE marks us fenced (poll steps down). */
static int write_failed(hw_zk *z, int rc, const zoo_op_result_t *res, const char *path)
{
	hw_zk_counter why;
	int err;
	if (res[0].err == ZBADVERSION || res[0].err == ZNONODE) {
		why = HW_ZK_C_WRITES_FAILED_EPOCH_VERSION;
		err = -ESTALE;
	} else if (res[1].err == ZBADVERSION || res[1].err == ZNODEEXISTS || res[1].err == ZNONODE) {
		why = HW_ZK_C_WRITES_FAILED_ENTITY_VERSION;
		err = -ESTALE;
	} else if (rc == ZSESSIONEXPIRED || rc == ZINVALIDSTATE || rc == ZSESSIONMOVED || rc == ZAUTHFAILED) {
		why = HW_ZK_C_WRITES_FAILED_SESSION;
		err = -ESTALE;
	} else if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == ZCLOSING) {
		why = HW_ZK_C_WRITES_FAILED_NOT_CONNECTED;
		err = -ENOTCONN;
	} else {
		why = HW_ZK_C_WRITES_FAILED_OTHER;
		err = -EIO;
	}
	z->counters[why]++;
	HW_LOG(ERROR, "zk", "metadata write %s refused (%s, controller epoch %d): %s", path, zerror(rc),
	       z->epoch, err == -ESTALE ? "fenced: stepping down" : "nothing changed");
	if (err == -ESTALE) {
		z->fenced = 1;
		zk_wake(z);
	}
	return err;
}

static int store_write(void *ctx, uint8_t type, const uint8_t *payload, size_t len, uint64_t record_no)
{
	hw_zk *z = ctx;
	char path[ZK_PATH_MAX];
	if (record_path(type, payload, len, path, sizeof(path)) < 0)
		return -EINVAL;
	if (len > ZK_BUF_MAX)
		return -EMSGSIZE;
	if (!z->active || z->fenced)
		return -ESTALE;
	if (zoo_state(z->zh) != ZOO_CONNECTED_STATE) {
		/* never queue behind a dead connection: refuse at once */
		z->counters[HW_ZK_C_WRITES_FAILED_NOT_CONNECTED]++;
		HW_LOG(ERROR, "zk", "metadata write %s refused: no ZooKeeper connection (quorum lost?)", path);
		return -ENOTCONN;
	}
	char seq[24];
	int seqn = snprintf(seq, sizeof(seq), "%" PRIu64, record_no);
	int32_t ver = vmap_get(z, path);
	zoo_op_t ops[3];
	zoo_op_result_t res[3];
	struct Stat st;
	memset(res, 0, sizeof(res));
	memset(&st, 0, sizeof(st));
	zoo_check_op_init(&ops[0], ZK_EPOCH, z->epoch_version);
	if (ver < 0)
		zoo_create_op_init(&ops[1], path, (const char *)payload, (int)len, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	else
		zoo_set_op_init(&ops[1], path, (const char *)payload, (int)len, ver, &st);
	zoo_set_op_init(&ops[2], ZK_SEQ, seq, seqn, -1, NULL);
	int64_t t0 = zk_now_ns();
	int rc = zoo_multi(z->zh, 3, ops, res);
	zk_latency(z, t0);
	if (rc != ZOK)
		return write_failed(z, rc, res, path);
	z->counters[HW_ZK_C_WRITES]++;
	return vmap_put(z, path, ver < 0 ? 0 : st.version);
}

static int by_number(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	unsigned long long u = strtoull(x, NULL, 10), v = strtoull(y, NULL, 10);
	if (u != v)
		return u < v ? -1 : 1;
	return strcmp(x, y);
}

/* Replay every child of dir as records of `type`. ZOK or a ZooKeeper
 * error; *fn_rc gets a non-zero replay return. */
static int load_dir(hw_zk *z, const char *dir, uint8_t type, hw_ctrl_store_replay_fn fn, void *arg,
		    int *fn_rc)
{
	struct String_vector kids = { 0 };
	int64_t t0 = zk_now_ns();
	int rc = zoo_get_children(z->zh, dir, 0, &kids);
	zk_latency(z, t0);
	if (rc != ZOK)
		return rc;
	qsort(kids.data, (size_t)kids.count, sizeof(char *), by_number);
	for (int i = 0; i < kids.count && rc == ZOK && !*fn_rc; i++) {
		char path[ZK_PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dir, kids.data[i]);
		struct Stat st;
		int len = ZK_BUF_MAX;
		t0 = zk_now_ns();
		rc = zoo_get(z->zh, path, 0, (char *)z->buf, &len, &st);
		zk_latency(z, t0);
		if (rc != ZOK)
			break;
		if (vmap_put(z, path, st.version) < 0)
			*fn_rc = -ENOMEM;
		else
			*fn_rc = fn(arg, type, z->buf, len > 0 ? (size_t)len : 0);
		if (*fn_rc)
			HW_LOG(ERROR, "zk", "metadata znode %s does not decode as a %s record", path,
			       hw_ctrl_record_name(type));
	}
	deallocate_String_vector(&kids);
	return rc;
}

static int store_load(void *ctx, hw_ctrl_store_replay_fn fn, void *arg, uint64_t *records)
{
	hw_zk *z = ctx;
	*records = 0;
	if (!z->active)
		return -ESTALE;
	if (zoo_state(z->zh) != ZOO_CONNECTED_STATE)
		return -ENOTCONN;
	zk_vmap_clear(z);
	char b[32];
	int len = (int)sizeof(b) - 1;
	int64_t t0 = zk_now_ns();
	int rc = zoo_get(z->zh, ZK_SEQ, 0, b, &len, NULL);
	zk_latency(z, t0);
	if (rc == ZOK) {
		b[len > 0 ? len : 0] = 0;
		*records = strtoull(b, NULL, 10);
	}
	static const struct { const char *dir; uint8_t type; } order[] = {
		{ ZK_ROOT "/brokers", HW_CTRL_REC_BROKER },
		{ ZK_ROOT "/topics", HW_CTRL_REC_TOPIC },
		{ ZK_ROOT "/topic_configs", HW_CTRL_REC_TOPIC_CONFIG },
		{ ZK_ROOT "/partitions", HW_CTRL_REC_PARTITION },
	};
	int fn_rc = 0;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]) && rc == ZOK && !fn_rc; i++)
		rc = load_dir(z, order[i].dir, order[i].type, fn, arg, &fn_rc);
	if (fn_rc)
		return fn_rc;
	if (rc != ZOK) {
		HW_LOG(ERROR, "zk", "loading the metadata from ZooKeeper failed: %s", zerror(rc));
		return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT ? -ENOTCONN : -EIO;
	}
	z->counters[HW_ZK_C_LOADS]++;
	return 0;
}

static const hw_ctrl_store_ops zk_store_ops = { .load = store_load, .write = store_write };

void zk_store_init(hw_zk *z)
{
	z->store.ops = &zk_store_ops;
	z->store.ctx = z;
}

const hw_ctrl_store *hw_zk_store(hw_zk *z) { return &z->store; }
