/* test_broker_logs.c — engine/broker's partition logs (hw_broker_logs.h,
 * docs/logdirs.md "Start-up: recovery and deleted logs") over the simulated
 * disk (hw_broker_memfs.h), one seed per run.
 *
 * A broker creates the partitions of a few topics over 2-4 log dirs, then
 * deletes one topic while its "-delete" directories cannot be removed (a
 * crash between the rename and the removal), and stops. Meanwhile one
 * other topic is deleted and created again under its name (a new topic
 * id), one log dir starts failing (EIO listing it), and (with 3-4 dirs)
 * one log in another dir cannot be opened (EIO). The restarted broker
 * must: find every other log where it was, with its data (log start
 * offsets set per partition); remove the "-delete" dirs; give the
 * recreated topic new logs and delete the old ones (never serve them);
 * keep the failing dir offline and place nothing there; take the dir of
 * the log that would not open offline with every log in it, listing them
 * as offline replicas from the start; refuse (-EIO)
 * a log to every partition that is not new and has none online — never an
 * empty one in its place — and report those as offline replicas, while a
 * new partition still gets a log in an online dir; take the dir of a log
 * whose disk dies later offline with its replicas. Then two short lives:
 * a dir failed at runtime only (its logs all known) still lets a partition
 * that is not new be created elsewhere; a log whose open fails with corrupt
 * data (not an I/O error) fails the start (Kafka's LogManager). And a
 * life of stray logs (docs/logdirs.md "Stray logs"): after a restart, the
 * controller's answer about the recovered logs' topics moves aside exactly
 * those it does not assign here (topic gone, recreated under a new id,
 * partition reassigned away) as "-stray" directories, kept and never
 * recovered again; keeps the others (also one without partition.metadata),
 * never touches a claimed log, one in an offline dir or a topic it did not
 * answer for; a pushed deletion of an unclaimed log deletes just that one.
 * The seed chooses the dirs, topics, partitions, reactors, fates and which
 * dir and log fail.
 * Repro: the printed line (HW_TEST_SEED=N meson test -C build broker_logs). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_broker_logs.h"
#include "hw_err.h"
#include "hw_broker_memfs.h"
#include "../../support/hw_test.h"

#define MAX_TOPICS 5
#define MAX_PARTS 4

static uint64_t seed;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: CHECK(%s) failed (HW_TEST_SEED=%llu)\n", __FILE__, \
				__LINE__, #c, (unsigned long long)seed);                           \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static int64_t now_ns;
static int64_t clock_now(hw_clock *c)
{
	(void)c;
	return now_ns;
}
static hw_clock clk = { .now_ns = clock_now };

typedef struct part {
	hw_store *s;
	char dir[512];
	int64_t start;              /* log start offset written in the first life */
	int dir_idx;
} part;

typedef struct world {
	hw_broker_memfs *m;
	hw_broker_fs fs;
	hw_broker_log_ops lops;
	int nd;
	char dirs[4][32];
	const char *dp[4];
	int nt;
	int nparts[MAX_TOPICS];
	char name[MAX_TOPICS][16];
	part p[MAX_TOPICS][MAX_PARTS];
	int del, rec;               /* the topic deleted (removal failing), the one recreated */
	int bad;                    /* the dir that cannot be listed after the restart */
	int ft, fp;                 /* the log that cannot be opened then (-1: none) */
	int fdir;                   /* its dir, offline with it (-1: none) */
	int refused;                /* partitions refused a log in the second life */
} world;

static hw_broker_logs *start(world *w)
{
	hw_broker_logs_config c = { .dirs = w->dp, .n_dirs = w->nd, .fs = w->fs, .log = w->lops, .clock = &clk };
	hw_broker_logs *bl;
	CHECK(hw_broker_logs_create(&c, &bl) == 0);
	CHECK(hw_broker_logs_make_dirs(bl, NULL) == 0);
	CHECK(hw_broker_logs_recover(bl) == 0);
	return bl;
}

static hw_tp tp_of(int t, int p, int recreated) { return (hw_tp){ .topic_id = (recreated ? 200u : 100u) + (uint32_t)t, .partition = (uint32_t)p }; }

static int dir_index(world *w, const char *path)
{
	for (int d = 0; d < w->nd; d++)
		if (!strncmp(path, w->dirs[d], strlen(w->dirs[d])) && path[strlen(w->dirs[d])] == '/')
			return d;
	return -1;
}

/* The first life: every partition created (balanced over the dirs), each
 * with its own log start; topic `del` deleted with its removal failing. */
static void first_life(world *w, int del)
{
	hw_broker_logs *bl = start(w);
	CHECK(hw_broker_logs_count(bl) == 0);
	int per_dir[4] = { 0 };
	for (int t = 0; t < w->nt; t++)
		for (int p = 0; p < w->nparts[t]; p++) {
			part *x = &w->p[t][p];
			CHECK(hw_broker_logs_open(bl, (int)hw_test_below(3), tp_of(t, p, 0), w->name[t], 1, &x->s) == 0);
			CHECK(hw_broker_logs_dir_of(bl, w->name[t], (uint32_t)p, x->dir, sizeof(x->dir)) == 0);
			x->dir_idx = dir_index(w, x->dir);
			CHECK(x->dir_idx >= 0);
			per_dir[x->dir_idx]++;
			x->start = 1000 * (t + 1) + p + 1 + (int64_t)hw_test_below(100);
			CHECK(x->s->ops->truncate_fully_and_start_at(x->s, x->start) == 0);
		}
	int lo = 1 << 30, hi = 0;
	for (int d = 0; d < w->nd; d++) {
		lo = per_dir[d] < lo ? per_dir[d] : lo;
		hi = per_dir[d] > hi ? per_dir[d] : hi;
	}
	CHECK(hi - lo <= 1); /* each new log to the dir with the fewest */
	/* topic `del` deleted, its "-delete" dirs left behind (a crash) */
	now_ns = 0xabc000;
	for (int p = 0; p < w->nparts[del]; p++) {
		char gone[600];
		snprintf(gone, sizeof(gone), "%s.%llx-delete", w->p[del][p].dir, (unsigned long long)now_ns);
		CHECK(hw_broker_memfs_fault(w->m, HW_MEMFS_REMOVE_TREE, gone, EIO) == 0);
		CHECK(hw_broker_logs_delete(bl, w->p[del][p].s) == -EIO);
		CHECK(hw_broker_memfs_kind(w->m, gone) == 1);
		CHECK(hw_broker_memfs_kind(w->m, w->p[del][p].dir) == 0);
		CHECK(hw_broker_memfs_fault(w->m, HW_MEMFS_REMOVE_TREE, gone, 0) == 0);
		w->p[del][p].s = NULL;
	}
	/* the replica managers close what they claimed; then the process ends */
	for (int t = 0; t < w->nt; t++)
		for (int p = 0; p < w->nparts[t]; p++)
			if (w->p[t][p].s)
				w->lops.close(w->lops.ctx, w->p[t][p].s, -1);
	hw_broker_logs_destroy(bl);
}

static void setup(world *w)
{
	CHECK(hw_broker_memfs_create(&w->m) == 0);
	w->fs = hw_broker_memfs_fs(w->m);
	w->lops = hw_broker_memfs_log_ops(w->m);
	w->nd = 2 + (int)hw_test_below(3);
	for (int d = 0; d < w->nd; d++) {
		snprintf(w->dirs[d], sizeof(w->dirs[d]), "/disk%d/hw", d);
		w->dp[d] = w->dirs[d];
	}
	w->nt = 3 + (int)hw_test_below(MAX_TOPICS - 2);
	for (int t = 0; t < w->nt; t++) {
		snprintf(w->name[t], sizeof(w->name[t]), "topic-%c.%d", 'a' + t, t);
		w->nparts[t] = 1 + (int)hw_test_below(MAX_PARTS);
	}
}

/* While it was down: dir `bad` fails, one log elsewhere cannot be opened. */
static void inject_faults(world *w)
{
	w->bad = (int)hw_test_below((uint64_t)w->nd);
	CHECK(hw_broker_memfs_fault(w->m, HW_MEMFS_LIST, w->dirs[w->bad], EIO) == 0);
	w->ft = w->fp = w->fdir = -1;
	for (int k = 0; k < 64 && w->ft < 0 && w->nd > 2; k++) { /* one dir stays online */
		int t = (int)hw_test_below((uint64_t)w->nt), p = (int)hw_test_below((uint64_t)w->nparts[t]);
		if (t != w->del && t != w->rec && w->p[t][p].dir_idx != w->bad) {
			w->ft = t;
			w->fp = p;
		}
	}
	if (w->ft >= 0) {
		w->fdir = w->p[w->ft][w->fp].dir_idx;
		CHECK(hw_broker_memfs_fault(w->m, HW_MEMFS_OPEN_LOG, w->p[w->ft][w->fp].dir, EIO) == 0);
	}
}

/* Dir d is offline since the restart. */
static int start_offline(const world *w, int d) { return d == w->bad || d == w->fdir; }

static int unopenable(const world *w, int t, int p) { return t == w->ft && p == w->fp; }

/* After the restart's recovery: what was found, what is offline, the
 * interrupted deletion finished. The number of logs recovered. */
static int check_recovery(world *w, hw_broker_logs *bl)
{
	int expect = 0;
	for (int t = 0; t < w->nt; t++)
		for (int p = 0; p < w->nparts[t]; p++)
			expect += t != w->del && w->p[t][p].dir_idx != w->bad && !unopenable(w, t, p);
	CHECK(hw_broker_logs_count(bl) == expect);
	CHECK(hw_broker_logs_offline_dirs(bl) == 1 + (w->fdir >= 0));
	CHECK(hw_broker_logs_dir_offline(bl, w->bad) == 1);
	if (w->fdir >= 0)
		CHECK(hw_broker_logs_dir_offline(bl, w->fdir) == 1);
	/* the interrupted deletion finished, except on the dir it could not list */
	int left = 0;
	for (int p = 0; p < w->nparts[w->del]; p++)
		left += w->p[w->del][p].dir_idx == w->bad;
	CHECK(hw_broker_memfs_count(w->m, w->dirs[w->bad], "-delete") == left);
	for (int d = 0; d < w->nd; d++)
		if (d != w->bad)
			CHECK(hw_broker_memfs_count(w->m, w->dirs[d], "-delete") == 0);
	/* the logs of the dir that failed loading are offline replicas listed
	 * with their topic ids (partition.metadata) before any replica manager
	 * asks for them: the first heartbeat names them */
	int in_fdir = 0;
	for (int t = 0; t < w->nt; t++)
		for (int p = 0; p < w->nparts[t]; p++)
			in_fdir += w->fdir >= 0 && t != w->del && w->p[t][p].dir_idx == w->fdir && !unopenable(w, t, p);
	hw_tp out[64];
	int listed = -1;
	CHECK(hw_broker_logs_offline_replicas(bl, out, 64, &listed) == in_fdir && listed == in_fdir);
	for (int i = 0; i < listed; i++) {
		int t = (int)out[i].topic_id - 100;
		CHECK(t >= 0 && t < w->nt && out[i].partition < (uint32_t)w->nparts[t]);
		CHECK(w->p[t][out[i].partition].dir_idx == w->fdir);
	}
	return expect;
}

/* Partition (t, p) asked for again: topics del and rec are new (created
 * again), the others not. Its own log with its data; a new one (a new
 * partition, its old log deleted, stale or unreachable); or -EIO when it is
 * not new and its log is not online, or its log is in a dir offline since
 * the restart (never an empty log in its place). */
static void check_reclaim(world *w, hw_broker_logs *bl, int t, int p)
{
	part *x = &w->p[t][p];
	hw_tp tp = tp_of(t, p, t == w->rec);
	int is_new = t == w->del || t == w->rec;
	hw_store *s = NULL;
	int rc = hw_broker_logs_open(bl, (int)hw_test_below(3), tp, w->name[t], is_new, &s);
	int old_offline = t != w->del && start_offline(w, x->dir_idx);
	if (old_offline && (!is_new || x->dir_idx == w->fdir)) {
		CHECK(rc == -EIO && s == NULL);
		x->s = NULL;
		w->refused++;
		return;
	}
	CHECK(rc == 0);
	char dir[512];
	CHECK(hw_broker_logs_dir_of(bl, w->name[t], (uint32_t)p, dir, sizeof(dir)) == 0);
	if (!is_new) {
		CHECK(s == x->s);
		CHECK(!strcmp(dir, x->dir));
		CHECK(s->ops->log_start_offset(s) == x->start);
	} else {
		/* deleted, recreated (a deleted topic's log is never served) or
		 * on the unlisted dir: a new, empty log on an online dir */
		CHECK(s->ops->log_start_offset(s) == 0 && s->ops->log_end_offset(s) == 0);
		CHECK(!start_offline(w, dir_index(w, dir)));
		if (t == w->rec && x->dir_idx != w->bad && strcmp(dir, x->dir))
			CHECK(hw_broker_memfs_kind(w->m, x->dir) == 0); /* the stale log deleted */
	}
	char meta[600], buf[64];
	snprintf(meta, sizeof(meta), "%s/%s", dir, HW_BROKER_PARTITION_META_FILE);
	CHECK(w->fs.read(w->fs.ctx, meta, buf, sizeof(buf)) > 0);
	unsigned id = 0;
	CHECK(sscanf(buf, "version: 0\ntopic_id: %u", &id) == 1 && id == tp.topic_id);
	x->s = s;
	snprintf(x->dir, sizeof(x->dir), "%s", dir);
	x->dir_idx = dir_index(w, dir);
}

/* After every partition was asked for: a partition unknown here that is not
 * new is refused too, a new one gets a log on an online dir; every refused
 * one and every log in an offline dir is an offline replica, listed. */
static void check_refused(world *w, hw_broker_logs *bl)
{
	hw_store *s = NULL;
	CHECK(hw_broker_logs_open(bl, 1, (hw_tp){ .topic_id = 900, .partition = 3 }, "moved", 0, &s) == -EIO);
	CHECK(hw_broker_logs_open(bl, 2, (hw_tp){ .topic_id = 900, .partition = 3 }, "moved", 0, &s) == -EIO);
	w->refused++; /* once */
	CHECK(hw_broker_logs_open(bl, 1, (hw_tp){ .topic_id = 901, .partition = 0 }, "fresh", 1, &s) == 0);
	char dir[512];
	CHECK(hw_broker_logs_dir_of(bl, "fresh", 0, dir, sizeof(dir)) == 0 && !start_offline(w, dir_index(w, dir)));
	CHECK(hw_broker_logs_delete(bl, s) == 0);
	/* every recovered log of the offline dir was asked for: all listed */
	hw_tp out[64];
	int listed = -1;
	CHECK(hw_broker_logs_offline_replicas(bl, out, 64, &listed) == w->refused && listed == w->refused);
	int moved = 0;
	for (int i = 0; i < listed; i++)
		moved += out[i].topic_id == 900 && out[i].partition == 3;
	CHECK(moved == 1);
}

/* A disk that dies later takes its dir offline, with its replicas; new
 * partitions go to the dirs still online, if any; one that is not new is
 * still refused (the dirs offline since the restart). */
static void check_late_failure(world *w, hw_broker_logs *bl)
{
	int dd = -1;
	for (int t = 0; t < w->nt && dd < 0; t++)
		for (int p = 0; p < w->nparts[t] && dd < 0; p++)
			if (w->p[t][p].s && !unopenable(w, t, p)) {
				dd = w->p[t][p].dir_idx;
				CHECK(hw_broker_memfs_fail_log(w->m, w->p[t][p].dir) == 0);
			}
	CHECK(dd >= 0 && !start_offline(w, dd));
	int off = 2 + (w->fdir >= 0);
	CHECK(hw_broker_logs_offline_dirs(bl) == off);
	int in_dd = 0;
	for (int t = 0; t < w->nt; t++)
		for (int p = 0; p < w->nparts[t]; p++)
			in_dd += w->p[t][p].s && w->p[t][p].dir_idx == dd && !unopenable(w, t, p);
	hw_tp out[64];
	int listed = -1;
	CHECK(hw_broker_logs_offline_replicas(bl, out, 64, &listed) == in_dd + w->refused &&
	      listed == in_dd + w->refused);
	CHECK(hw_broker_logs_flush(bl) == -EIO);
	hw_store *s;
	CHECK(hw_broker_logs_open(bl, 0, (hw_tp){ .topic_id = 998, .partition = 0 }, "late-old", 0, &s) == -EIO);
	int rc = hw_broker_logs_open(bl, 0, (hw_tp){ .topic_id = 999, .partition = 0 }, "late", 1, &s);
	if (w->nd > off) {
		char dir[512];
		CHECK(rc == 0 && hw_broker_logs_dir_of(bl, "late", 0, dir, sizeof(dir)) == 0);
		CHECK(!start_offline(w, dir_index(w, dir)) && dir_index(w, dir) != dd);
		w->lops.close(w->lops.ctx, s, -1);
	} else {
		CHECK(rc == -EIO);
	}
}

/* A life with no dir offline at its start: a dir whose disk dies at
 * runtime had every log listed, so a partition that is not new and has no
 * log here (e.g. moved to this broker) still gets one in an online dir. */
static void runtime_failure_life(void)
{
	world *w = calloc(1, sizeof(*w));
	CHECK(w);
	setup(w);
	w->nt = 1;
	w->nparts[0] = 1;
	first_life(w, 0);
	hw_broker_logs *bl = start(w);
	CHECK(hw_broker_logs_offline_dirs(bl) == 0);
	hw_store *s, *s2;
	CHECK(hw_broker_logs_open(bl, 0, tp_of(1, 0, 0), "runtime-a", 1, &s) == 0);
	char dir[512];
	CHECK(hw_broker_logs_dir_of(bl, "runtime-a", 0, dir, sizeof(dir)) == 0);
	CHECK(hw_broker_memfs_fail_log(w->m, dir) == 0);
	CHECK(hw_broker_logs_offline_dirs(bl) == 1);
	CHECK(hw_broker_logs_open(bl, 0, tp_of(2, 0, 0), "runtime-b", 0, &s2) == 0);
	char dir2[512];
	CHECK(hw_broker_logs_dir_of(bl, "runtime-b", 0, dir2, sizeof(dir2)) == 0);
	CHECK(dir_index(w, dir2) != dir_index(w, dir));
	w->lops.close(w->lops.ctx, s, -1);
	w->lops.close(w->lops.ctx, s2, -1);
	hw_broker_logs_destroy(bl);
	hw_broker_memfs_destroy(w->m);
	free(w);
}

/* A log whose open fails with corrupt data (not an I/O error) fails the
 * start, as any non-IOException in Kafka's LogManager.loadLogs does. */
static void corrupt_log_life(void)
{
	world *w = calloc(1, sizeof(*w));
	CHECK(w);
	setup(w);
	first_life(w, 0); /* topic 0 deleted; topic 1 stays */
	CHECK(hw_broker_memfs_fault(w->m, HW_MEMFS_OPEN_LOG, w->p[1][0].dir, EBADMSG) == 0);
	hw_broker_logs_config c = { .dirs = w->dp, .n_dirs = w->nd, .fs = w->fs, .log = w->lops, .clock = &clk };
	hw_broker_logs *bl;
	CHECK(hw_broker_logs_create(&c, &bl) == 0);
	CHECK(hw_broker_logs_make_dirs(bl, NULL) == 0);
	CHECK(hw_broker_logs_recover(bl) == -EBADMSG);
	hw_broker_logs_destroy(bl);
	hw_broker_memfs_destroy(w->m);
	free(w);
}

/* ---- stray logs ------------------------------------------------------------ */

enum fate { KEEP, GONE, RECREATED, MOVED, UNASKED, N_FATES };

static const char *fate_name[N_FATES] = { "keep", "gone", "recreated", "moved", "unasked" };

/* The controller's view of topic t (broker 1 asks) for fate f: moved
 * partition `mp` has replicas 2 and 3, the others 1 and 2. */
static void meta_of(const world *w, int t, enum fate f, int mp, hw_topic_meta *tm, hw_partition_meta *pm)
{
	memset(tm, 0, sizeof(*tm));
	snprintf(tm->name, sizeof(tm->name), "%s", w->name[t]);
	if (f == GONE) {
		tm->error = HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
		return;
	}
	tm->topic_id = tp_of(t, 0, f == RECREATED).topic_id;
	tm->n_parts = (uint32_t)w->nparts[t];
	tm->parts = pm;
	for (int p = 0; p < w->nparts[t]; p++) {
		memset(&pm[p], 0, sizeof(pm[p]));
		pm[p].partition = (uint32_t)p;
		pm[p].replicas.n = 2;
		pm[p].replicas.id[0] = f == MOVED && p == mp ? 3 : 1;
		pm[p].replicas.id[1] = 2;
	}
}

/* A restart after topic 0's deletion: every other topic gets a seeded
 * fate; one kept log has no partition.metadata; one log of a gone topic
 * is claimed first and one sits in a dir whose disk died: neither moves. */
static void stray_life(void)
{
	world *w = calloc(1, sizeof(*w));
	CHECK(w);
	setup(w);
	first_life(w, 0);
	now_ns = 0x5a000;
	hw_broker_logs *bl = start(w);
	enum fate fate[MAX_TOPICS];
	int mp[MAX_TOPICS];
	fate[0] = GONE; /* deleted: no logs left */
	for (int t = 1; t < w->nt; t++) {
		fate[t] = (enum fate)hw_test_below(N_FATES);
		mp[t] = (int)hw_test_below((uint64_t)w->nparts[t]);
	}
	fate[1] = KEEP;
	fate[2] = GONE; /* at least one of each side */
	/* topic 1's partition 0 lost its partition.metadata: kept by name */
	char meta[600];
	snprintf(meta, sizeof(meta), "%s/%s", w->p[1][0].dir, HW_BROKER_PARTITION_META_FILE);
	CHECK(w->fs.remove(w->fs.ctx, meta) == 0);
	/* topic 2: partition 0 claimed before the answer; the last one (if
	 * another) in a dir whose disk dies */
	hw_store *claimed;
	CHECK(hw_broker_logs_open(bl, 1, tp_of(2, 0, 0), w->name[2], 0, &claimed) == 0);
	int failed_p = w->nparts[2] > 1 ? w->nparts[2] - 1 : -1;
	int failed_dir = failed_p >= 0 ? w->p[2][failed_p].dir_idx : -1;
	if (failed_p >= 0)
		CHECK(hw_broker_memfs_fail_log(w->m, w->p[2][failed_p].dir) == 0);
	/* the controller's answer: every topic but the unasked ones */
	hw_topic_name names[MAX_TOPICS];
	int nn = hw_broker_logs_unchecked_topics(bl, names, MAX_TOPICS);
	CHECK(nn <= w->nt - 1);
	hw_topic_meta tms[MAX_TOPICS];
	hw_partition_meta pms[MAX_TOPICS][MAX_PARTS];
	int na = 0, expect_moved = 0;
	for (int t = 1; t < w->nt; t++) {
		if (fate[t] == UNASKED)
			continue;
		meta_of(w, t, fate[t], mp[t], &tms[na++], pms[t]);
		for (int p = 0; p < w->nparts[t]; p++) {
			int d = w->p[t][p].dir_idx;
			int offline = failed_dir >= 0 && d == failed_dir;
			int stray = fate[t] == GONE || fate[t] == RECREATED || (fate[t] == MOVED && p == mp[t]);
			expect_moved += stray && !offline && !(t == 2 && p == 0);
		}
	}
	CHECK(hw_broker_logs_check_strays(bl, 0, 1, tms, na) == expect_moved);
	int strays = 0;
	for (int d = 0; d < w->nd; d++)
		strays += hw_broker_memfs_count(w->m, w->dirs[d], HW_BROKER_STRAY_SUFFIX);
	CHECK(strays == expect_moved);
	/* what is left to decide: the unasked topics and the offline log's */
	nn = hw_broker_logs_unchecked_topics(bl, names, MAX_TOPICS);
	for (int k = 0; k < nn; k++) {
		int t = 1;
		while (t < w->nt && strcmp(names[k].s, w->name[t]))
			t++;
		CHECK(t < w->nt && fate[t] == UNASKED);
	}
	for (int t = 1; t < w->nt; t++)
		for (int p = 0; p < w->nparts[t]; p++) {
			part *x = &w->p[t][p];
			int offline = failed_dir >= 0 && x->dir_idx == failed_dir;
			int stray = fate[t] == GONE || fate[t] == RECREATED || (fate[t] == MOVED && p == mp[t]);
			int moved = stray && !offline && !(t == 2 && p == 0);
			CHECK(hw_broker_memfs_kind(w->m, x->dir) == (moved ? 0 : 1));
			char dir[512];
			CHECK((hw_broker_logs_dir_of(bl, w->name[t], (uint32_t)p, dir, sizeof(dir)) == 0) == !moved);
			if (moved || offline || (t == 2 && p == 0))
				continue;
			/* a kept log is still the replica manager's, with its data */
			hw_store *s;
			CHECK(hw_broker_logs_open(bl, 0, tp_of(t, p, 0), w->name[t], 0, &s) == 0);
			CHECK(s->ops->log_start_offset(s) == x->start);
			w->lops.close(w->lops.ctx, s, -1);
		}
	w->lops.close(w->lops.ctx, claimed, -1);
	hw_broker_logs_destroy(bl);
	/* the next start recovers no stray log and leaves them in place */
	bl = start(w);
	int left = 0;
	for (int t = 1; t < w->nt; t++)
		for (int p = 0; p < w->nparts[t]; p++)
			left += hw_broker_memfs_kind(w->m, w->p[t][p].dir) == 1;
	CHECK(hw_broker_logs_count(bl) == left);
	strays = 0;
	for (int d = 0; d < w->nd; d++)
		strays += hw_broker_memfs_count(w->m, w->dirs[d], HW_BROKER_STRAY_SUFFIX);
	CHECK(strays == expect_moved);
	/* a deletion pushed for an unclaimed log: only the one with that id */
	CHECK(hw_broker_logs_delete_recovered(bl, 0, tp_of(1, 0, 1), w->name[1]) == -ENOENT);
	CHECK(hw_broker_memfs_kind(w->m, w->p[1][0].dir) == 1);
	if (w->nparts[1] > 1) {
		/* (in the dir whose disk died, it stays: an offline replica) */
		int off = hw_broker_logs_dir_offline(bl, w->p[1][1].dir_idx);
		CHECK(hw_broker_logs_delete_recovered(bl, 0, tp_of(1, 1, 0), w->name[1]) == (off ? -ENOENT : 0));
		CHECK(hw_broker_memfs_kind(w->m, w->p[1][1].dir) == off);
		CHECK(hw_broker_logs_count(bl) == left - !off);
	}
	hw_broker_logs_destroy(bl);
	printf("broker_logs strays: %d topics (", w->nt - 1);
	for (int t = 1; t < w->nt; t++)
		printf("%s%s", t > 1 ? " " : "", fate_name[fate[t]]);
	printf("), %d moved aside: ok\n", expect_moved);
	hw_broker_memfs_destroy(w->m);
	free(w);
}

int main(void)
{
	seed = hw_test_seed_init("broker_logs");
	world *w = calloc(1, sizeof(*w));
	CHECK(w);
	setup(w);
	w->del = (int)hw_test_below((uint64_t)w->nt);
	w->rec = (w->del + 1 + (int)hw_test_below((uint64_t)w->nt - 1)) % w->nt;
	first_life(w, w->del);
	inject_faults(w);
	/* the second life */
	now_ns = 0xdef000;
	hw_broker_logs *bl = start(w);
	int found = check_recovery(w, bl);
	for (int t = 0; t < w->nt; t++)
		for (int p = 0; p < w->nparts[t]; p++)
			if (!unopenable(w, t, p)) /* that one stays offline: not opened again here */
				check_reclaim(w, bl, t, p);
	for (int d = 0; d < w->nd; d++)
		if (d != w->bad)
			CHECK(hw_broker_memfs_count(w->m, w->dirs[d], "-delete") == 0);
	check_refused(w, bl);
	check_late_failure(w, bl);
	for (int t = 0; t < w->nt; t++) /* the replica managers close what they claimed */
		for (int p = 0; p < w->nparts[t]; p++)
			if (w->p[t][p].s && !unopenable(w, t, p))
				w->lops.close(w->lops.ctx, w->p[t][p].s, -1);
	hw_broker_logs_destroy(bl);
	printf("broker_logs: %d dirs, %d topics, %d logs recovered, dir %d unlisted, dir %d failed loading, "
	       "%d refused, topic %d deleted, %d recreated: ok\n", w->nd, w->nt, found, w->bad, w->fdir, w->refused,
	       w->del, w->rec);
	hw_broker_memfs_destroy(w->m);
	free(w);
	runtime_failure_life();
	corrupt_log_life();
	stray_life();
	return 0;
}
