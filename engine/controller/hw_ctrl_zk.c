/* hw_ctrl_zk.c — ZooKeeper session, controller election and epoch
 * (hw_ctrl_zk.h). The metadata store half is hw_ctrl_zk_store.c. */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include "hw_ctrl_zk_int.h"
#include "hw_logging.h"

const char *hw_zk_session_state_name(int s)
{
	static const char *const names[] = {
#define HW_ZK_SS_NAME(n) #n,
		HW_ZK_SESSION_STATES(HW_ZK_SS_NAME)
#undef HW_ZK_SS_NAME
	};
	return s >= 0 && s < HW_ZK_SESSION_STATE_COUNT ? names[s] : "?";
}

const char *hw_zk_counter_name(int c)
{
	static const char *const names[] = {
#define HW_ZK_C_NAME(n) #n,
		HW_ZK_COUNTERS(HW_ZK_C_NAME)
#undef HW_ZK_C_NAME
	};
	return c >= 0 && c < HW_ZK_COUNTER_COUNT ? names[c] : "?";
}

int64_t zk_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void zk_wake(hw_zk *z)
{
	uint64_t one = 1;
	if (write(z->efd, &one, sizeof(one)) < 0) {
		/* EAGAIN: the counter is already non-zero, the reactor wakes anyway */
	}
}

/* ZooKeeper completion thread: record what happened, wake the controller
 * thread. Touches nothing but the atomics and the eventfd. */
static void zk_watcher(zhandle_t *zh, int type, int state, const char *path, void *ctx)
{
	(void)zh;
	(void)path;
	hw_zk *z = ctx;
	if (!z)
		return;
	/* relaxed is enough: the eventfd write/read pair orders these stores
	 * before the controller thread's loads (a syscall is a full barrier) */
	if (type == ZOO_SESSION_EVENT)
		atomic_fetch_or_explicit(&z->pending, ZK_EV_SESSION, memory_order_relaxed);
	else
		atomic_fetch_or_explicit(&z->pending, ZK_EV_CONTROLLER, memory_order_relaxed);
	(void)state;
	zk_wake(z);
}

static int zk_open_session(hw_zk *z)
{
	z->zh = zookeeper_init(z->connect, zk_watcher, z->cfg.session_timeout_ms, NULL, z, 0);
	if (!z->zh)
		return errno ? -errno : -EINVAL;
	z->session = HW_ZK_SESSION_CONNECTING;
	z->disconnected_since_ns = zk_now_ns();
	z->warned_connect = 0;
	z->paths_ok = 0;
	return 0;
}

int hw_zk_create(const hw_zk_cfg *cfg, hw_zk **out)
{
	*out = NULL;
	if (!cfg || !cfg->connect || !cfg->connect[0] || cfg->session_timeout_ms <= 0)
		return -EINVAL;
	hw_zk *z = calloc(1, sizeof(*z));
	if (!z)
		return -ENOMEM;
	z->cfg = *cfg;
	if (z->cfg.connection_timeout_ms <= 0)
		z->cfg.connection_timeout_ms = cfg->session_timeout_ms; /* Kafka's default */
	snprintf(z->connect, sizeof(z->connect), "%s", cfg->connect);
	snprintf(z->control_ep, sizeof(z->control_ep), "%s", cfg->control_ep ? cfg->control_ep : "");
	z->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	z->buf = malloc(ZK_BUF_MAX);
	z->latency = hw_hist_create_latency();
	z->active_id = -1;
	z->active_ep[0] = 0;
	if (z->efd < 0 || !z->buf || !z->latency) {
		int rc = z->efd < 0 ? -errno : -ENOMEM;
		hw_zk_destroy(z);
		return rc;
	}
	zk_store_init(z);
	zoo_set_debug_level(ZOO_LOG_LEVEL_ERROR);
	int rc = zk_open_session(z);
	if (rc < 0) {
		HW_LOG(ERROR, "zk", "zookeeper.connect '%s' refused by the client: %s", z->connect, strerror(-rc));
		hw_zk_destroy(z);
		return rc;
	}
	HW_LOG(INFO, "zk", "connecting to ZooKeeper %s (session timeout %d ms)", z->connect,
	       z->cfg.session_timeout_ms);
	*out = z;
	return 0;
}

static int connected(const hw_zk *z) { return z->zh && zoo_state(z->zh) == ZOO_CONNECTED_STATE; }

/* Delete /controller if it is our ephemeral node. */
static void release_controller_znode(hw_zk *z)
{
	if (!connected(z))
		return;
	struct Stat st;
	int len = ZK_BUF_MAX;
	const clientid_t *me = zoo_client_id(z->zh);
	int64_t t0 = zk_now_ns();
	int rc = zoo_get(z->zh, ZK_CONTROLLER, 0, (char *)z->buf, &len, &st);
	if (rc == ZOK && me && st.ephemeralOwner == me->client_id)
		rc = zoo_delete(z->zh, ZK_CONTROLLER, st.version);
	zk_latency(z, t0);
	if (rc != ZOK && rc != ZNONODE)
		HW_LOG(WARN, "zk", "deleting /controller failed: %s", zerror(rc));
}

void hw_zk_destroy(hw_zk *z)
{
	if (!z)
		return;
	if (z->zh) {
		if (z->active) {
			release_controller_znode(z); /* clean shutdown: a standby takes over now */
			HW_LOG(INFO, "zk", "controller %d resigned (epoch %d): /controller deleted", z->cfg.node_id,
			       z->epoch);
		}
		zookeeper_close(z->zh);
	}
	if (z->efd >= 0)
		close(z->efd);
	zk_vmap_clear(z);
	free(z->vmap);
	free(z->buf);
	hw_hist_destroy(z->latency);
	free(z);
}

int hw_zk_wait_fd(const hw_zk *z) { return z->efd; }
int hw_zk_is_active(const hw_zk *z) { return z->active; }
int32_t hw_zk_epoch(const hw_zk *z) { return z->epoch; }
hw_zk_session_state hw_zk_session(const hw_zk *z) { return z->session; }
uint64_t hw_zk_counter_get(const hw_zk *z, hw_zk_counter w)
{
	return w < HW_ZK_COUNTER_COUNT ? z->counters[w] : 0;
}
const struct hw_hist *hw_zk_latency(const hw_zk *z) { return z->latency; }

int32_t hw_zk_active_id(const hw_zk *z, char *ep, int cap)
{
	if (ep && cap > 0)
		snprintf(ep, (size_t)cap, "%s", z->active_ep);
	return z->active_id;
}

void zk_latency(hw_zk *z, int64_t t0)
{
	int64_t d = zk_now_ns() - t0;
	if (hw_hist_record(z->latency, d) == 0)
		z->latency_sum_ns += d;
}

int64_t hw_zk_latency_sum_ns(const hw_zk *z) { return z->latency_sum_ns; }

/* /controller's JSON (Kafka's fields plus our control endpoint). */
static void parse_controller(hw_zk *z, const char *data, int len)
{
	char tmp[512];
	int n = len < (int)sizeof(tmp) - 1 ? len : (int)sizeof(tmp) - 1;
	memcpy(tmp, data, (size_t)(n > 0 ? n : 0));
	tmp[n > 0 ? n : 0] = 0;
	const char *p = strstr(tmp, "\"brokerid\":");
	z->active_id = p ? (int32_t)strtol(p + 11, NULL, 10) : -1;
	z->active_ep[0] = 0;
	p = strstr(tmp, "\"hiwater.control\":\"");
	if (p) {
		p += 19;
		const char *e = strchr(p, '"');
		if (e && e - p < (long)sizeof(z->active_ep))
			snprintf(z->active_ep, sizeof(z->active_ep), "%.*s", (int)(e - p), p);
	}
}

/* Persistent parents and the epoch znode, once per session. */
static int ensure_paths(hw_zk *z)
{
	static const char *const dirs[] = { ZK_ROOT, ZK_ROOT "/brokers", ZK_ROOT "/topics",
					    ZK_ROOT "/topic_configs", ZK_ROOT "/partitions", "/config",
					    ZK_TOPIC_CONFIGS };
	if (z->paths_ok)
		return ZOK;
	int64_t t0 = zk_now_ns();
	int rc = ZOK;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && (rc == ZOK || rc == ZNODEEXISTS); i++)
		rc = zoo_create(z->zh, dirs[i], NULL, -1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	if (rc == ZOK || rc == ZNODEEXISTS)
		rc = zoo_create(z->zh, ZK_SEQ, "0", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	if (rc == ZOK || rc == ZNODEEXISTS)
		rc = zoo_create(z->zh, ZK_EPOCH, "0", 1, &ZOO_OPEN_ACL_UNSAFE, 0, NULL, 0);
	zk_latency(z, t0);
	if (rc == ZOK || rc == ZNODEEXISTS) {
		z->paths_ok = 1;
		return ZOK;
	}
	return rc;
}

/* We hold /controller: bump /controller_epoch with a versioned write. */
static int bump_epoch(hw_zk *z)
{
	struct Stat st;
	char b[32];
	int len = (int)sizeof(b) - 1;
	int64_t t0 = zk_now_ns();
	int rc = zoo_get(z->zh, ZK_EPOCH, 0, b, &len, &st);
	if (rc == ZOK) {
		b[len > 0 ? len : 0] = 0;
		int32_t next = (int32_t)strtol(b, NULL, 10) + 1;
		int n = snprintf(b, sizeof(b), "%" PRId32, next);
		rc = zoo_set2(z->zh, ZK_EPOCH, b, n, st.version, &st);
		if (rc == ZOK) {
			z->epoch = next;
			z->epoch_version = st.version;
		}
	}
	zk_latency(z, t0);
	return rc;
}

/* One election attempt (Kafka KafkaController.elect). Returns
 * HW_ZK_ACT_BECOME_ACTIVE when we won. */
static hw_zk_action elect(hw_zk *z)
{
	int rc = ensure_paths(z);
	if (rc != ZOK)
		goto retry;
	char data[512];
	int n = snprintf(data, sizeof(data),
			 "{\"version\":1,\"brokerid\":%d,\"timestamp\":\"%lld\",\"hiwater.control\":\"%s\"}",
			 z->cfg.node_id, (long long)(zk_now_ns() / 1000000), z->control_ep);
	int64_t t0 = zk_now_ns();
	rc = zoo_create(z->zh, ZK_CONTROLLER, data, n, &ZOO_OPEN_ACL_UNSAFE, ZOO_EPHEMERAL, NULL, 0);
	zk_latency(z, t0);
	if (rc == ZOK) {
		rc = bump_epoch(z);
		if (rc != ZOK) {
			HW_LOG(WARN, "zk", "won /controller but the epoch bump failed (%s): resigning", zerror(rc));
			release_controller_znode(z);
			goto retry;
		}
		z->active = 1;
		z->active_id = z->cfg.node_id;
		snprintf(z->active_ep, sizeof(z->active_ep), "%s", z->control_ep);
		z->counters[HW_ZK_C_ELECTIONS_WON]++;
		/* watch our own znode: its deletion by anyone means we are out */
		t0 = zk_now_ns();
		(void)zoo_wexists(z->zh, ZK_CONTROLLER, zk_watcher, z, NULL);
		zk_latency(z, t0);
		HW_LOG(INFO, "zk", "controller %d is active with controller epoch %d", z->cfg.node_id, z->epoch);
		return HW_ZK_ACT_BECOME_ACTIVE;
	}
	if (rc != ZNODEEXISTS)
		goto retry;
	struct Stat st;
	int len = ZK_BUF_MAX;
	t0 = zk_now_ns();
	rc = zoo_wget(z->zh, ZK_CONTROLLER, zk_watcher, z, (char *)z->buf, &len, &st);
	zk_latency(z, t0);
	if (rc == ZNONODE) { /* gone between create and get: try again now */
		z->retry_ns = zk_now_ns();
		return HW_ZK_ACT_NONE;
	}
	if (rc != ZOK)
		goto retry;
	int32_t before = z->active_id;
	parse_controller(z, (const char *)z->buf, len);
	const clientid_t *me = zoo_client_id(z->zh);
	if (me && st.ephemeralOwner == me->client_id) {
		/* ours from before a step-down: give it up, elect afresh */
		release_controller_znode(z);
		z->retry_ns = zk_now_ns();
		return HW_ZK_ACT_NONE;
	}
	/* the epoch the active one holds (standbys report it; it goes into
	 * their NOT_CONTROLLER answers) */
	char eb[32];
	int elen = (int)sizeof(eb) - 1;
	t0 = zk_now_ns();
	if (zoo_get(z->zh, ZK_EPOCH, 0, eb, &elen, NULL) == ZOK && elen > 0) {
		eb[elen] = 0;
		z->epoch = (int32_t)strtol(eb, NULL, 10);
	}
	zk_latency(z, t0);
	if (before != z->active_id) {
		z->counters[HW_ZK_C_ELECTIONS_LOST]++;
		HW_LOG(INFO, "zk", "controller %d standing by: the active controller is %d (%s)", z->cfg.node_id,
		       z->active_id, z->active_ep);
	}
	z->retry_ns = INT64_MAX;
	return HW_ZK_ACT_NONE;
retry:
	HW_LOG(WARN, "zk", "controller election attempt failed: %s (retrying)", zerror(rc));
	z->retry_ns = zk_now_ns() + 1000000000LL;
	return HW_ZK_ACT_NONE;
}

static void step_down(hw_zk *z, const char *why)
{
	HW_LOG(WARN, "zk", "controller %d steps down (epoch %d): %s", z->cfg.node_id, z->epoch, why);
	z->active = 0;
	z->fenced = 0;
	z->active_id = -1;
	z->active_ep[0] = 0;
	zk_vmap_clear(z);
	release_controller_znode(z);
	z->counters[HW_ZK_C_RESIGNATIONS]++;
	z->retry_ns = zk_now_ns() + 200000000LL;
}

void hw_zk_resign(hw_zk *z, const char *why)
{
	if (z->active)
		step_down(z, why);
}

/* Still ours? (a /controller event while active) */
static int still_ours(hw_zk *z)
{
	struct Stat st;
	int len = ZK_BUF_MAX;
	int64_t t0 = zk_now_ns();
	int rc = zoo_wget(z->zh, ZK_CONTROLLER, zk_watcher, z, (char *)z->buf, &len, &st);
	zk_latency(z, t0);
	const clientid_t *me = zoo_client_id(z->zh);
	if (rc == ZOK)
		return me && st.ephemeralOwner == me->client_id;
	return rc != ZNONODE; /* connection trouble: the session decides */
}

hw_zk_action hw_zk_poll(hw_zk *z)
{
	uint64_t v;
	while (read(z->efd, &v, sizeof(v)) == (ssize_t)sizeof(v)) {
	}
	uint32_t ev = atomic_exchange_explicit(&z->pending, 0, memory_order_relaxed);
	int64_t now = zk_now_ns();
	int st = z->zh ? zoo_state(z->zh) : 0;

	if (z->active && z->fenced) {
		step_down(z, "a metadata write was fenced (newer controller epoch, lost session or a concurrent writer)");
		return HW_ZK_ACT_STEP_DOWN;
	}
	if (st == ZOO_EXPIRED_SESSION_STATE || st == ZOO_AUTH_FAILED_STATE) {
		z->counters[HW_ZK_C_SESSIONS_EXPIRED]++;
		int was = z->active;
		if (was) {
			z->active = 0;
			z->active_id = -1;
	z->active_ep[0] = 0;
			zk_vmap_clear(z);
			z->counters[HW_ZK_C_RESIGNATIONS]++;
			HW_LOG(WARN, "zk", "controller %d steps down (epoch %d): ZooKeeper session expired",
			       z->cfg.node_id, z->epoch);
		} else {
			HW_LOG(WARN, "zk", "ZooKeeper session expired: reconnecting");
		}
		zookeeper_close(z->zh);
		z->zh = NULL;
		z->session = HW_ZK_SESSION_EXPIRED;
		if (zk_open_session(z) < 0)
			z->session = HW_ZK_SESSION_CLOSED;
		return was ? HW_ZK_ACT_STEP_DOWN : HW_ZK_ACT_NONE;
	}
	if (st == ZOO_CONNECTED_STATE && z->session != HW_ZK_SESSION_CONNECTED) {
		z->session = HW_ZK_SESSION_CONNECTED;
		z->counters[HW_ZK_C_SESSIONS_ESTABLISHED]++;
		HW_LOG(INFO, "zk", "ZooKeeper session connected (%s)", z->connect);
		ev |= ZK_EV_CONTROLLER;
	} else if (st != ZOO_CONNECTED_STATE && z->session == HW_ZK_SESSION_CONNECTED) {
		z->session = HW_ZK_SESSION_CONNECTING;
		z->counters[HW_ZK_C_DISCONNECTS]++;
		z->disconnected_since_ns = now;
		z->warned_connect = 0;
		HW_LOG(WARN, "zk", "ZooKeeper connection lost: metadata changes are refused until it is back%s",
		       z->active ? " (still active until the session expires)" : "");
	}
	if (z->session != HW_ZK_SESSION_CONNECTED) {
		if (!z->warned_connect &&
		    now - z->disconnected_since_ns > (int64_t)z->cfg.connection_timeout_ms * 1000000) {
			z->warned_connect = 1;
			HW_LOG(ERROR, "zk", "no ZooKeeper connection to %s for %d ms (zookeeper.connection.timeout.ms)",
			       z->connect, z->cfg.connection_timeout_ms);
		}
		return HW_ZK_ACT_NONE;
	}
	if (z->active) {
		if ((ev & ZK_EV_CONTROLLER) && !still_ours(z)) {
			step_down(z, "/controller is no longer ours");
			return HW_ZK_ACT_STEP_DOWN;
		}
		return HW_ZK_ACT_NONE;
	}
	if ((ev & ZK_EV_CONTROLLER) || now >= z->retry_ns)
		return elect(z);
	return HW_ZK_ACT_NONE;
}

int64_t hw_zk_next_deadline_ns(const hw_zk *z)
{
	int64_t d = z->active ? INT64_MAX : z->retry_ns;
	if (z->session != HW_ZK_SESSION_CONNECTED && !z->warned_connect) {
		int64_t w = z->disconnected_since_ns + (int64_t)z->cfg.connection_timeout_ms * 1000000 + 1;
		if (w < d)
			d = w;
	}
	return d;
}
