/* hw_broker_logs.c — a broker's partition logs on its log dirs
 * (hw_broker_logs.h; docs/logdirs.md). */
#include "hw_broker_logs.h"
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_err.h"
#include "hw_logging.h"
#include "hw_rm.h"

/* A partition log: recovered (waiting for a replica manager to claim it)
 * or claimed by reactor `reactor`. */
typedef struct blog {
	char topic[HW_TOPIC_NAME_MAX];
	uint32_t partition;
	char dir[PATH_MAX];
	hw_tp tp;                       /* set when claimed (the topic id comes with it), or id_known */
	int id_known;                   /* tp read from partition.metadata at recovery */
	hw_store *store;
	int claimed;                    /* the replica manager closes it */
	int refused;                    /* asked for while its dir is offline: tp set, never claimed */
	int checked;                    /* the stray check kept it (docs/logdirs.md "Stray logs") */
	int reactor;
} blog;

struct hw_broker_logs {
	char dirs[HW_BROKER_MAX_LOG_DIRS][PATH_MAX];
	int n_dirs;
	/* offline since start-up, its contents not all known: */
	uint8_t unlisted[HW_BROKER_MAX_LOG_DIRS];    /* it could not be listed */
	uint8_t load_failed[HW_BROKER_MAX_LOG_DIRS]; /* a log in it failed to open (I/O error) */
	hw_broker_fs fs;
	hw_broker_log_ops ops;
	hw_clock *clock;
	pthread_mutex_t lock;           /* logs: claimed and added from every reactor */
	blog *logs;
	int n, cap;
	hw_tp *refused;                 /* partitions refused a log (not new, a dir offline since start) */
	int n_refused, cap_refused;
};

int hw_broker_logs_create(const hw_broker_logs_config *c, hw_broker_logs **out)
{
	if (!c || !out || c->n_dirs < 1 || c->n_dirs > HW_BROKER_MAX_LOG_DIRS || !c->clock || !c->fs.list ||
	    !c->fs.mkdirs || !c->fs.rename || !c->fs.remove_tree || !c->fs.read || !c->fs.replace ||
	    !c->log.open || !c->log.adopt || !c->log.flush || !c->log.close || !c->log.failed)
		return -EINVAL;
	hw_broker_logs *bl = calloc(1, sizeof(*bl));
	if (!bl)
		return -ENOMEM;
	for (int d = 0; d < c->n_dirs; d++) {
		int n = snprintf(bl->dirs[d], sizeof(bl->dirs[d]), "%s", c->dirs[d]);
		if (n <= 0 || (size_t)n >= sizeof(bl->dirs[d]) - HW_TOPIC_NAME_MAX - 64) {
			free(bl);
			return -EINVAL;
		}
	}
	if (pthread_mutex_init(&bl->lock, NULL)) {
		free(bl);
		return -ENOMEM;
	}
	bl->n_dirs = c->n_dirs;
	bl->fs = c->fs;
	bl->ops = c->log;
	bl->clock = c->clock;
	*out = bl;
	return 0;
}

void hw_broker_logs_destroy(hw_broker_logs *bl)
{
	if (!bl)
		return;
	for (int i = 0; i < bl->n; i++)
		if (bl->logs[i].store && !bl->logs[i].claimed)
			bl->ops.close(bl->ops.ctx, bl->logs[i].store, -1);
	free(bl->logs);
	free(bl->refused);
	pthread_mutex_destroy(&bl->lock);
	free(bl);
}

int hw_broker_logs_make_dirs(hw_broker_logs *bl, int *failed)
{
	for (int d = 0; d < bl->n_dirs; d++) {
		int rc = bl->fs.mkdirs(bl->fs.ctx, bl->dirs[d]);
		if (rc < 0) {
			if (failed)
				*failed = d;
			return rc;
		}
	}
	return 0;
}

/* ---- the list ----------------------------------------------------------- */

/* A new zeroed entry at the end, or NULL (-ENOMEM). Locked or single-threaded. */
static blog *log_add(hw_broker_logs *bl)
{
	if (bl->n == bl->cap) {
		int cap = bl->cap ? bl->cap * 2 : 16;
		blog *nl = realloc(bl->logs, (size_t)cap * sizeof(*nl));
		if (!nl)
			return NULL;
		bl->logs = nl;
		bl->cap = cap;
	}
	blog *p = &bl->logs[bl->n++];
	memset(p, 0, sizeof(*p));
	return p;
}

static void log_drop(hw_broker_logs *bl, int i)
{
	memmove(&bl->logs[i], &bl->logs[i + 1], (size_t)(bl->n - i - 1) * sizeof(bl->logs[0]));
	bl->n--;
}

/* p lives in log dir d. */
static int in_dir(const hw_broker_logs *bl, const blog *p, int d)
{
	size_t len = strlen(bl->dirs[d]);
	return !strncmp(p->dir, bl->dirs[d], len) && p->dir[len] == '/';
}

/* Dir d is offline (lock held). */
static int dir_offline_locked(hw_broker_logs *bl, int d)
{
	if (bl->unlisted[d] || bl->load_failed[d])
		return 1;
	for (int i = 0; i < bl->n; i++) {
		blog *p = &bl->logs[i];
		if (p->store && in_dir(bl, p, d) && bl->ops.failed(bl->ops.ctx, p->store))
			return 1;
	}
	return 0;
}

/* ---- deleted logs ------------------------------------------------------- */

static int is_deleted_dir(const char *name)
{
	size_t n = strlen(name);
	return n > 7 && !strcmp(name + n - 7, "-delete");
}

static int is_stray_dir(const char *name)
{
	size_t n = strlen(name), k = strlen(HW_BROKER_STRAY_SUFFIX);
	return n > k && !strcmp(name + n - k, HW_BROKER_STRAY_SUFFIX);
}

/* Remove a partition directory renamed to "*-delete" (Kafka's
 * LogManager: the rename makes the deletion atomic for recovery, the
 * removal follows). 0 or remove_tree's -errno (logged; left in place). */
static int remove_deleted_dir(hw_broker_logs *bl, const char *path)
{
	int rc = bl->fs.remove_tree(bl->fs.ctx, path);
	if (rc < 0)
		HW_LOG(WARN, "broker", "removing %s: %s (left in place)", path, strerror(-rc));
	return rc;
}

/* Rename a closed partition directory to "<dir>.<hex>-delete", then
 * remove it (Kafka's LogManager). 0 or -errno (logged). */
static int trash_dir(hw_broker_logs *bl, const char *dir, const char *why)
{
	char gone[PATH_MAX + 40];
	snprintf(gone, sizeof(gone), "%s.%llx-delete", dir, (unsigned long long)hw_clock_ns(bl->clock));
	int rc = bl->fs.rename(bl->fs.ctx, dir, gone);
	if (rc < 0) {
		HW_LOG(ERROR, "broker", "deleting %s: rename: %s", dir, strerror(-rc));
		return rc;
	}
	rc = remove_deleted_dir(bl, gone);
	HW_LOG(INFO, "broker", "deleted log %s (%s)", dir, why);
	return rc;
}

int hw_broker_logs_delete(hw_broker_logs *bl, hw_store *s)
{
	char dir[PATH_MAX] = "";
	pthread_mutex_lock(&bl->lock);
	for (int i = 0; i < bl->n; i++)
		if (bl->logs[i].store == s) {
			snprintf(dir, sizeof(dir), "%s", bl->logs[i].dir);
			log_drop(bl, i);
			break;
		}
	pthread_mutex_unlock(&bl->lock);
	bl->ops.close(bl->ops.ctx, s, -1);
	if (!dir[0])
		return -ENOENT;
	return trash_dir(bl, dir, "topic deleted");
}

/* ---- start-up recovery -------------------------------------------------- */

typedef struct recover_walk {
	hw_broker_logs *bl;
	int d;
	int failed;                     /* a non-I/O error stopped the walk */
} recover_walk;

/* A log's open failed at start-up with rc: an I/O error (1: its dir goes
 * offline), or not (0: corrupt or invalid data, or no memory: the start
 * fails). Kafka's LogManager.loadLogs takes a dir offline on an
 * IOException and fails the start on any other error; engine/log's
 * recovery already truncates torn tails without failing. */
static int is_io_error(int rc)
{
	return rc != -EBADMSG && rc != -EUCLEAN && rc != -EINVAL && rc != -ENOMEM;
}

/* One entry of log dir w->d: a "-delete" directory is removed, a
 * partition directory opened (an I/O error takes the whole dir offline),
 * anything else ignored. 0, or -ENOMEM or the open's non-I/O -errno
 * (stops the walk and the start). */
static int recover_entry(void *arg, const char *name)
{
	recover_walk *w = arg;
	hw_broker_logs *bl = w->bl;
	char topic[HW_TOPIC_NAME_MAX];
	uint32_t part;
	if (name[0] != '.' && is_deleted_dir(name)) {
		/* a deletion a crash interrupted */
		char path[PATH_MAX + 256];
		snprintf(path, sizeof(path), "%s/%s", bl->dirs[w->d], name);
		(void)remove_deleted_dir(bl, path);
		return 0;
	}
	if (name[0] != '.' && is_stray_dir(name)) {
		/* moved aside by an earlier start: the operator's to remove */
		HW_LOG(WARN, "broker", "stray log %s/%s found (not served; remove it once not needed)", bl->dirs[w->d],
		       name);
		return 0;
	}
	if (name[0] == '.' || hw_broker_parse_partition_dir(name, topic, sizeof(topic), &part))
		return 0;
	blog *p = log_add(bl);
	if (!p)
		return -ENOMEM;
	snprintf(p->topic, sizeof(p->topic), "%s", topic);
	p->partition = part;
	snprintf(p->dir, sizeof(p->dir), "%s/%s", bl->dirs[w->d], name);
	int rc = bl->ops.open(bl->ops.ctx, p->dir, topic, -1, &p->store);
	if (rc < 0) {
		bl->n--;
		if (!is_io_error(rc)) {
			HW_LOG(ERROR, "broker", "recovering %s failed: %s (not an I/O error: not starting)", p->dir,
			       strerror(-rc));
			w->failed = 1;
			return rc;
		}
		/* Kafka's LogManager.loadLogs: an I/O error loading a log takes
		 * its dir offline; what else the dir holds is then unknown */
		HW_LOG(ERROR, "broker", "recovering %s failed: %s (log dir %s offline)", p->dir, strerror(-rc),
		       bl->dirs[w->d]);
		bl->load_failed[w->d] = 1;
		return 0;
	}
	/* its topic id, so a log of a dir offline since start-up is listed as
	 * an offline replica from the first heartbeat on (before any replica
	 * manager asks for it, the controller could elect us for it) */
	uint32_t id;
	if (hw_broker_partition_meta_read(&bl->fs, p->dir, &id) == 0) {
		p->tp = (hw_tp){ .topic_id = id, .partition = part };
		p->id_known = 1;
	}
	HW_LOG(INFO, "broker", "recovered %s-%u: log start %lld, LEO %lld", topic, part,
	       (long long)p->store->ops->log_start_offset(p->store),
	       (long long)p->store->ops->log_end_offset(p->store));
	return 0;
}

int hw_broker_logs_recover(hw_broker_logs *bl)
{
	int listed = 0, first_err = 0;
	for (int d = 0; d < bl->n_dirs; d++) {
		recover_walk w = { .bl = bl, .d = d };
		int rc = bl->fs.list(bl->fs.ctx, bl->dirs[d], recover_entry, &w);
		if (rc == -ENOMEM || w.failed)
			return rc;
		if (bl->load_failed[d]) {
			if (!first_err)
				first_err = -EIO;
			continue;
		}
		if (rc < 0) {
			/* Kafka's LogManager.loadLogs: that dir offline, the others served */
			HW_LOG(ERROR, "broker", "log dir %s cannot be listed: %s (offline)", bl->dirs[d], strerror(-rc));
			bl->unlisted[d] = 1;
			if (!first_err)
				first_err = rc;
			continue;
		}
		listed++;
	}
	return listed ? 0 : first_err;
}

/* ---- a reactor's logs ----------------------------------------------------- */

/* The log dir for a new partition (hw_broker_place_log): online, fewest
 * logs. The index, or -EIO (every dir offline) / -ENOMEM. Lock held. */
static int place_log(hw_broker_logs *bl)
{
	int offline[HW_BROKER_MAX_LOG_DIRS];
	const char *dirs[HW_BROKER_MAX_LOG_DIRS];
	const char **paths = malloc(((size_t)bl->n + 1) * sizeof(*paths));
	if (!paths)
		return -ENOMEM;
	for (int d = 0; d < bl->n_dirs; d++) {
		dirs[d] = bl->dirs[d];
		offline[d] = dir_offline_locked(bl, d);
	}
	for (int i = 0; i < bl->n; i++)
		paths[i] = bl->logs[i].dir;
	int best = hw_broker_place_log(dirs, offline, bl->n_dirs, paths, (size_t)bl->n);
	free(paths);
	return best;
}

/* The claimed log p goes to reactor `reactor`. */
static void claim(hw_broker_logs *bl, blog *p, int reactor, hw_tp tp)
{
	p->claimed = 1;
	p->tp = tp;
	p->reactor = reactor;
	/* from now on reactor `reactor` alone uses it (HW_ASSERT_OWNER) */
	bl->ops.adopt(bl->ops.ctx, p->store, reactor);
}

/* The recovered log i of tp: 1 and claimed (*out set) if it holds tp's
 * topic id (or none yet: then it is written), 0 when it was a deleted
 * topic's of the same name (deleted now). Lock held. */
static int claim_recovered(hw_broker_logs *bl, int i, int reactor, hw_tp tp, const char *topic, hw_store **out)
{
	blog *p = &bl->logs[i];
	int st = hw_broker_partition_meta_claim(&bl->fs, p->dir, tp.topic_id);
	if (st == 1) {
		/* a deleted topic's log under a recreated topic's name (its
		 * deletion happened while we were away): never serve it as the
		 * new topic's */
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", p->dir);
		hw_store *old = p->store;
		log_drop(bl, i);
		bl->ops.close(bl->ops.ctx, old, reactor);
		HW_LOG(WARN, "broker", "%s holds another topic id than %s-%u's %u: a deleted topic's log", dir, topic,
		       tp.partition, tp.topic_id);
		(void)trash_dir(bl, dir, "stale: its topic was deleted");
		return 0;
	}
	if (st < 0)
		HW_LOG(WARN, "broker", "%s: cannot write %s: %s", p->dir, HW_BROKER_PARTITION_META_FILE, strerror(-st));
	claim(bl, p, reactor, tp);
	*out = p->store;
	return 1;
}

/* A new log of tp in the online dir holding the fewest (Kafka's choice;
 * docs/logdirs.md). 0 and *out, or -errno (logged). Lock held. */
static int create_log(hw_broker_logs *bl, int reactor, hw_tp tp, const char *topic, hw_store **out)
{
	int best = place_log(bl);
	if (best == -ENOMEM)
		return best;
	if (best < 0) {
		HW_LOG(ERROR, "broker", "no online log directory for %s-%u", topic, tp.partition);
		return -EIO;
	}
	blog *p = log_add(bl);
	if (!p)
		return -ENOMEM;
	snprintf(p->topic, sizeof(p->topic), "%s", topic);
	p->partition = tp.partition;
	snprintf(p->dir, sizeof(p->dir), "%s/%s-%u", bl->dirs[best], topic, tp.partition);
	int rc = bl->ops.open(bl->ops.ctx, p->dir, topic, reactor, &p->store);
	if (rc < 0) {
		HW_LOG(ERROR, "broker", "opening %s failed: %s", p->dir, strerror(-rc));
		bl->n--;
		return rc;
	}
	claim(bl, p, reactor, tp);
	rc = hw_broker_partition_meta_claim(&bl->fs, p->dir, tp.topic_id);
	if (rc < 0)
		HW_LOG(WARN, "broker", "%s: cannot write %s: %s", p->dir, HW_BROKER_PARTITION_META_FILE, strerror(-rc));
	HW_LOG(INFO, "broker", "created log %s (reactor %d)", p->dir, reactor);
	*out = p->store;
	return 0;
}

/* A dir offline since start-up (unlisted, or a log failed to load): its
 * logs are not all known. Lock held. */
static int start_offline_any(const hw_broker_logs *bl)
{
	for (int d = 0; d < bl->n_dirs; d++)
		if (bl->unlisted[d] || bl->load_failed[d])
			return 1;
	return 0;
}

/* The log dir index of p, or -1. */
static int dir_index_of(const hw_broker_logs *bl, const blog *p)
{
	for (int d = 0; d < bl->n_dirs; d++)
		if (in_dir(bl, p, d))
			return d;
	return -1;
}

/* tp is refused a log: remembered (once) as an offline replica. Lock
 * held. -EIO, or -ENOMEM. */
static int refuse(hw_broker_logs *bl, hw_tp tp, const char *topic, const char *why)
{
	for (int i = 0; i < bl->n_refused; i++)
		if (bl->refused[i].topic_id == tp.topic_id && bl->refused[i].partition == tp.partition)
			return -EIO;
	if (bl->n_refused == bl->cap_refused) {
		int cap = bl->cap_refused ? bl->cap_refused * 2 : 16;
		hw_tp *nr = realloc(bl->refused, (size_t)cap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		bl->refused = nr;
		bl->cap_refused = cap;
	}
	bl->refused[bl->n_refused++] = tp;
	HW_LOG(ERROR, "broker", "no log for %s-%u (topic id %u): %s (an offline replica)", topic, tp.partition,
	       tp.topic_id, why);
	return -EIO;
}

/* Lock held: opening a new log under the lock is rare (partition creation)
 * and keeps two reactors from claiming one log. */
static int open_locked(hw_broker_logs *bl, int reactor, hw_tp tp, const char *topic, int is_new, hw_store **out)
{
	for (int i = 0; i < bl->n; i++) {
		blog *p = &bl->logs[i];
		if (p->store && !p->claimed && p->partition == tp.partition && !strcmp(p->topic, topic)) {
			int d = dir_index_of(bl, p);
			if (d >= 0 && bl->load_failed[d]) {
				/* Kafka drops every log of a dir that failed
				 * loading: none of them is served */
				if (!p->refused)
					HW_LOG(ERROR, "broker", "%s is in log dir %s, offline since start-up: not served "
					       "(an offline replica)", p->dir, bl->dirs[d]);
				p->refused = 1;
				p->tp = tp;
				return -EIO;
			}
			if (claim_recovered(bl, i, reactor, tp, topic, out))
				return 0;
			break;
		}
	}
	/* The topic becomes a directory name: only legal Kafka names (the
	 * replica manager refuses others first; docs/security.md). */
	if (!hw_topic_name_valid(topic)) {
		HW_LOG(ERROR, "broker", "refusing a log for illegal topic name '%.64s'", topic);
		return -EINVAL;
	}
	/* Kafka's LogManager.getOrCreateLog: a log is created for a partition
	 * that is not new only while no dir is offline, else its log may be in
	 * the offline dir and an empty one would be served in its place.
	 * Dirs failed at runtime had every log listed: they do not count. */
	if (!is_new && start_offline_any(bl))
		return refuse(bl, tp, topic, "not a new partition and a log dir offline since start-up");
	return create_log(bl, reactor, tp, topic, out);
}

int hw_broker_logs_open(hw_broker_logs *bl, int reactor, hw_tp tp, const char *topic, int is_new, hw_store **out)
{
	pthread_mutex_lock(&bl->lock);
	int rc = open_locked(bl, reactor, tp, topic, is_new, out);
	pthread_mutex_unlock(&bl->lock);
	return rc;
}

/* ---- stray logs (docs/logdirs.md "Stray logs") ---------------------------- */

/* A recovered log the stray check may still decide: not claimed, not
 * refused, not decided, in a dir that is online (a log in an offline dir
 * is an offline replica, never moved). Lock held. */
static int stray_candidate(hw_broker_logs *bl, const blog *p)
{
	if (!p->store || p->claimed || p->refused || p->checked)
		return 0;
	int d = dir_index_of(bl, p);
	return d >= 0 && !dir_offline_locked(bl, d);
}

int hw_broker_logs_unchecked_topics(hw_broker_logs *bl, hw_topic_name *out, int cap)
{
	int n = 0;
	pthread_mutex_lock(&bl->lock);
	for (int i = 0; i < bl->n && n < cap; i++) {
		const blog *p = &bl->logs[i];
		if (!stray_candidate(bl, p))
			continue;
		int dup = 0;
		for (int k = 0; k < n && !dup; k++)
			dup = !strcmp(out[k].s, p->topic);
		if (!dup)
			snprintf(out[n++].s, sizeof(out[0].s), "%s", p->topic);
	}
	pthread_mutex_unlock(&bl->lock);
	return n;
}

/* Why the recovered log p (topic id `id`, or none: has_id 0) is stray by
 * the controller's topic tm (Kafka's LogManager.findStrayReplicas), or
 * NULL when it is this broker's to keep. why[] gets the reason. */
static const char *stray_reason(const blog *p, int has_id, uint32_t id, const hw_topic_meta *tm, int32_t broker_id,
				char *why, size_t cap)
{
	if (tm->error == HW_ERR_UNKNOWN_TOPIC_OR_PARTITION) {
		snprintf(why, cap, "topic %s does not exist in the controller's metadata", p->topic);
		return why;
	}
	if (has_id && id != tm->topic_id) {
		snprintf(why, cap, "topic id %u does not exist in the controller's metadata (%s is now topic id %u)", id,
			 p->topic, tm->topic_id);
		return why;
	}
	for (uint32_t k = 0; k < tm->n_parts; k++) {
		const hw_partition_meta *pm = &tm->parts[k];
		if (pm->partition != p->partition)
			continue;
		if (hw_idset_has(&pm->replicas, broker_id))
			return NULL;
		snprintf(why, cap, "the replica assignment of %s-%u does not contain broker %d", p->topic, p->partition,
			 broker_id);
		return why;
	}
	snprintf(why, cap, "%s has no partition %u in the controller's metadata", p->topic, p->partition);
	return why;
}

/* Move the recovered log i aside: closed, its directory renamed
 * "<dir>.<hex>-stray" and kept (Kafka's LogManager: stray logs are
 * renamed, never deleted). Lock held. */
static void move_stray(hw_broker_logs *bl, int i, int reactor, const char *why)
{
	char dir[PATH_MAX], aside[PATH_MAX + 40];
	snprintf(dir, sizeof(dir), "%s", bl->logs[i].dir);
	hw_store *s = bl->logs[i].store;
	log_drop(bl, i);
	bl->ops.close(bl->ops.ctx, s, reactor);
	snprintf(aside, sizeof(aside), "%s.%llx%s", dir, (unsigned long long)hw_clock_ns(bl->clock),
		 HW_BROKER_STRAY_SUFFIX);
	int rc = bl->fs.rename(bl->fs.ctx, dir, aside);
	if (rc < 0)
		HW_LOG(ERROR, "broker", "stray log %s (%s): rename: %s (not served; found again at the next start)", dir,
		       why, strerror(-rc));
	else
		HW_LOG(WARN, "broker", "found stray log %s: %s; renamed to %s (kept for the operator, not served)", dir,
		       why, aside);
}

int hw_broker_logs_check_strays(hw_broker_logs *bl, int reactor, int32_t broker_id, const hw_topic_meta *topics,
				int n_topics)
{
	int moved = 0;
	pthread_mutex_lock(&bl->lock);
	for (int i = 0; i < bl->n;) {
		blog *p = &bl->logs[i];
		const hw_topic_meta *tm = NULL;
		for (int k = 0; k < n_topics && !tm; k++)
			if (!strcmp(topics[k].name, p->topic))
				tm = &topics[k];
		if (tm && !stray_candidate(bl, p))
			tm = NULL;
		/* only what the controller answered for, without error */
		if (!tm || (tm->error != HW_ERR_NONE && tm->error != HW_ERR_UNKNOWN_TOPIC_OR_PARTITION)) {
			i++;
			continue;
		}
		uint32_t id = 0;
		int has_id = hw_broker_partition_meta_read(&bl->fs, p->dir, &id) == 0;
		char why[HW_TOPIC_NAME_MAX + 160];
		if (!stray_reason(p, has_id, id, tm, broker_id, why, sizeof(why))) {
			p->checked = 1; /* ours: a replica manager claims it when its state arrives */
			i++;
			continue;
		}
		move_stray(bl, i, reactor, why);
		moved++;
	}
	pthread_mutex_unlock(&bl->lock);
	return moved;
}

int hw_broker_logs_delete_recovered(hw_broker_logs *bl, int reactor, hw_tp tp, const char *topic)
{
	char dir[PATH_MAX] = "";
	pthread_mutex_lock(&bl->lock);
	for (int i = 0; i < bl->n; i++) {
		blog *p = &bl->logs[i];
		uint32_t id;
		if (!p->store || p->claimed || p->partition != tp.partition || strcmp(p->topic, topic) ||
		    hw_broker_partition_meta_read(&bl->fs, p->dir, &id) < 0 || id != tp.topic_id)
			continue;
		int d = dir_index_of(bl, p);
		if (d < 0 || dir_offline_locked(bl, d))
			break; /* an offline replica: its dir is not touched */
		snprintf(dir, sizeof(dir), "%s", p->dir);
		hw_store *s = p->store;
		log_drop(bl, i);
		bl->ops.close(bl->ops.ctx, s, reactor);
		break;
	}
	pthread_mutex_unlock(&bl->lock);
	if (!dir[0])
		return -ENOENT;
	return trash_dir(bl, dir, "topic deleted while this broker was away");
}

/* ---- queries ------------------------------------------------------------ */

int hw_broker_logs_count(hw_broker_logs *bl)
{
	pthread_mutex_lock(&bl->lock);
	int n = bl->n;
	pthread_mutex_unlock(&bl->lock);
	return n;
}

int hw_broker_logs_dir_offline(hw_broker_logs *bl, int d)
{
	if (d < 0 || d >= bl->n_dirs)
		return 0;
	pthread_mutex_lock(&bl->lock);
	int off = dir_offline_locked(bl, d);
	pthread_mutex_unlock(&bl->lock);
	return off;
}

int hw_broker_logs_offline_dirs(hw_broker_logs *bl)
{
	int off = 0;
	pthread_mutex_lock(&bl->lock);
	for (int d = 0; d < bl->n_dirs; d++)
		off += dir_offline_locked(bl, d);
	pthread_mutex_unlock(&bl->lock);
	return off;
}

int hw_broker_logs_offline_replicas(hw_broker_logs *bl, hw_tp *out, int cap, int *n_listed)
{
	int k = 0, listed = 0;
	pthread_mutex_lock(&bl->lock);
	for (int d = 0; d < bl->n_dirs; d++) {
		if (!dir_offline_locked(bl, d))
			continue;
		for (int i = 0; i < bl->n; i++) {
			blog *p = &bl->logs[i];
			if (!p->store || !in_dir(bl, p, d))
				continue;
			k++;
			/* the topic id is known from partition.metadata, or once a
			 * replica manager asked for the log */
			if ((p->claimed || p->refused || p->id_known) && out && listed < cap)
				out[listed++] = p->tp;
		}
	}
	for (int i = 0; i < bl->n_refused; i++) {
		k++;
		if (out && listed < cap)
			out[listed++] = bl->refused[i];
	}
	pthread_mutex_unlock(&bl->lock);
	if (n_listed)
		*n_listed = listed;
	return k;
}

int hw_broker_logs_flush(hw_broker_logs *bl)
{
	int rc = 0;
	pthread_mutex_lock(&bl->lock);
	for (int i = 0; i < bl->n; i++)
		if (bl->logs[i].store && bl->ops.flush(bl->ops.ctx, bl->logs[i].store) < 0) {
			HW_LOG(ERROR, "broker", "flushing %s failed", bl->logs[i].dir);
			rc = -EIO;
		}
	pthread_mutex_unlock(&bl->lock);
	return rc;
}

int hw_broker_logs_dir_of(hw_broker_logs *bl, const char *topic, uint32_t partition, char *buf, size_t cap)
{
	int rc = -ENOENT;
	pthread_mutex_lock(&bl->lock);
	for (int i = 0; i < bl->n && rc; i++)
		if (bl->logs[i].partition == partition && !strcmp(bl->logs[i].topic, topic)) {
			snprintf(buf, cap, "%s", bl->logs[i].dir);
			rc = 0;
		}
	pthread_mutex_unlock(&bl->lock);
	return rc;
}
