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
	case HW_CTRL_REC_TOPIC_DELETE:
		/* the last deletion: the topic id floor (its entity znodes go
		 * in the same multi-op, store_write) */
		snprintf(out, cap, "%s", ZK_DELETED);
		return 0;
	case HW_CTRL_REC_PRODUCER_IDS:
		snprintf(out, cap, "%s", ZK_PIDS);
		return 0;
	}
	return -EINVAL; /* BASE belongs to the metadata log's compaction only */
}

/* A TOPIC_DELETE's extra ops: delete the topic's znodes we know of (its
 * topic, config and partition znodes). Paths in *paths (ZK_PATH_MAX each),
 * ops appended at ops[*n]. 0 or -ENOMEM / -EINVAL. */
static int delete_ops(hw_zk *z, const uint8_t *p, size_t len, zoo_op_t **ops, char **paths, int *n)
{
	if (len < 8)
		return -EINVAL;
	uint32_t id = hw_le32_get(p), parts = hw_le32_get(p + 4);
	size_t max = 2 + (size_t)parts;
	zoo_op_t *o = realloc(*ops, (3 + max) * sizeof(*o));
	if (!o)
		return -ENOMEM;
	*ops = o;
	char *ps = calloc(max, ZK_PATH_MAX);
	if (!ps)
		return -ENOMEM;
	*paths = ps;
	int k = 0;
	for (size_t i = 0; i < max; i++) {
		char *path = ps + (size_t)k * ZK_PATH_MAX;
		if (i == 0)
			snprintf(path, ZK_PATH_MAX, ZK_ROOT "/topics/%" PRIu32, id);
		else if (i == 1)
			snprintf(path, ZK_PATH_MAX, ZK_ROOT "/topic_configs/%" PRIu32, id);
		else
			snprintf(path, ZK_PATH_MAX, ZK_ROOT "/partitions/%" PRIu32 "-%zu", id, i - 2);
		int32_t ver = vmap_get(z, path);
		if (ver < 0)
			continue; /* never written (a config or partition left as created) */
		zoo_delete_op_init(&o[*n + k], path, ver);
		k++;
	}
	*n += k;
	return 0;
}

/* Kafka's /config/topics/<name> ({"version":1,"config":{...}}), kept in
 * step with the topic's records in the same multi-op: written with TOPIC
 * and TOPIC_CONFIG records, deleted with TOPIC_DELETE (docs/kafka.md
 * "Topic configuration"). Only the active controller writes it (the epoch
 * check op guards the multi), so whether it exists is asked just before. */
typedef struct zk_mirror {
	char path[ZK_TOPIC_CONFIG_PATH_MAX];
	char json[4096];
	int len;
	int op;                 /* 0 none, 1 create, 2 set, 3 delete */
} zk_mirror;

/* The mirror op of a record into *mi (op 0: none). 0, or -EBADMSG /
 * -EMSGSIZE (the record does not decode, the JSON is too long). */
static int mirror_prepare(hw_zk *z, uint8_t type, const uint8_t *p, size_t len, zk_mirror *mi)
{
	mi->op = 0;
	char name[HW_TOPIC_NAME_MAX] = "";
	if (type == HW_CTRL_REC_TOPIC || type == HW_CTRL_REC_TOPIC_CONFIG) {
		hw_ctrl_topic_info *info = calloc(1, sizeof(*info));
		if (!info)
			return -ENOMEM;
		int rc = ctrl_record_topic_configs(NULL, type, p, len, info);
		if (rc == 0) {
			snprintf(name, sizeof(name), "%s", info->name);
			mi->len = hw_ctrl_topic_config_json(info, mi->json, sizeof(mi->json));
			if (mi->len < 0)
				rc = mi->len;
		}
		free(info);
		if (rc < 0)
			return rc;
	} else if (type == HW_CTRL_REC_TOPIC_DELETE) {
		hw_bytes_rd r = hw_bytes_rd_init(p, len);
		(void)hw_bytes_le(&r, 8);
		size_t n = (size_t)hw_bytes_le(&r, 2);
		const uint8_t *q = r.bad || n >= sizeof(name) ? NULL : hw_bytes_take(&r, n);
		if (!q)
			return -EBADMSG;
		memcpy(name, q, n);
		name[n] = 0;
	}
	if (!name[0])
		return 0; /* other records; a TOPIC_CONFIG of an old writer (no name) */
	snprintf(mi->path, sizeof(mi->path), ZK_TOPIC_CONFIGS "/%s", name);
	struct Stat st;
	int64_t t0 = zk_now_ns();
	int rc = zoo_exists(z->zh, mi->path, 0, &st);
	zk_latency(z, t0);
	if (rc != ZOK && rc != ZNONODE)
		return rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT ? -ENOTCONN : -EIO;
	if (type == HW_CTRL_REC_TOPIC_DELETE)
		mi->op = rc == ZOK ? 3 : 0;
	else
		mi->op = rc == ZOK ? 2 : 1;
	return 0;
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
	zoo_op_t *ops = calloc(3, sizeof(*ops));
	char *dpaths = NULL;
	int nops = 3;
	if (!ops)
		return -ENOMEM;
	if (type == HW_CTRL_REC_TOPIC_DELETE) {
		int drc = delete_ops(z, payload, len, &ops, &dpaths, &nops);
		if (drc < 0) {
			free(ops);
			free(dpaths);
			return drc;
		}
	}
	zk_mirror *mi = calloc(1, sizeof(*mi));
	int mrc = mi ? mirror_prepare(z, type, payload, len, mi) : -ENOMEM;
	zoo_op_t *grown = mrc == 0 && mi->op ? realloc(ops, (size_t)(nops + 1) * sizeof(*ops)) : ops;
	if (mrc < 0 || !grown) {
		free(ops);
		free(dpaths);
		free(mi);
		return mrc < 0 ? mrc : -ENOMEM;
	}
	ops = grown;
	int mop = -1; /* index of the mirror op */
	if (mi->op) {
		mop = nops++;
		if (mi->op == 1)
			zoo_create_op_init(&ops[mop], mi->path, mi->json, mi->len, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
		else if (mi->op == 2)
			zoo_set_op_init(&ops[mop], mi->path, mi->json, mi->len, -1, NULL);
		else
			zoo_delete_op_init(&ops[mop], mi->path, -1);
	}
	zoo_op_result_t *res = calloc((size_t)nops, sizeof(*res));
	if (!res) {
		free(ops);
		free(dpaths);
		free(mi);
		return -ENOMEM;
	}
	struct Stat st;
	memset(&st, 0, sizeof(st));
	zoo_check_op_init(&ops[0], ZK_EPOCH, z->epoch_version);
	if (ver < 0)
		zoo_create_op_init(&ops[1], path, (const char *)payload, (int)len, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	else
		zoo_set_op_init(&ops[1], path, (const char *)payload, (int)len, ver, &st);
	zoo_set_op_init(&ops[2], ZK_SEQ, seq, seqn, -1, NULL);
	int64_t t0 = zk_now_ns();
	int rc = zoo_multi(z->zh, nops, ops, res);
	zk_latency(z, t0);
	int out;
	if (rc != ZOK) {
		out = write_failed(z, rc, res, path);
	} else {
		z->counters[HW_ZK_C_WRITES]++;
		out = vmap_put(z, path, ver < 0 ? 0 : st.version);
		/* the deleted znodes: a later record of that path creates it */
		for (int i = 3; out == 0 && i < nops; i++)
			if (i != mop)
				out = vmap_put(z, dpaths + (size_t)(i - 3) * ZK_PATH_MAX, -1);
	}
	free(res);
	free(ops);
	free(dpaths);
	free(mi);
	return out;
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

/* Replay one znode (absent: nothing) as a record of `type`. As load_dir. */
static int load_one(hw_zk *z, const char *path, uint8_t type, hw_ctrl_store_replay_fn fn, void *arg, int *fn_rc)
{
	struct Stat st;
	int len = ZK_BUF_MAX;
	int64_t t0 = zk_now_ns();
	int rc = zoo_get(z->zh, path, 0, (char *)z->buf, &len, &st);
	zk_latency(z, t0);
	if (rc == ZNONODE)
		return ZOK;
	if (rc != ZOK)
		return rc;
	if (vmap_put(z, path, st.version) < 0)
		*fn_rc = -ENOMEM;
	else
		*fn_rc = fn(arg, type, z->buf, len > 0 ? (size_t)len : 0);
	if (*fn_rc)
		HW_LOG(ERROR, "zk", "metadata znode %s does not decode as a %s record", path, hw_ctrl_record_name(type));
	return ZOK;
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
	static const struct { const char *path; uint8_t type; } single[] = {
		{ ZK_DELETED, HW_CTRL_REC_TOPIC_DELETE },
		{ ZK_PIDS, HW_CTRL_REC_PRODUCER_IDS },
	};
	for (size_t i = 0; i < sizeof(single) / sizeof(single[0]) && rc == ZOK && !fn_rc; i++)
		rc = load_one(z, single[i].path, single[i].type, fn, arg, &fn_rc);
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
