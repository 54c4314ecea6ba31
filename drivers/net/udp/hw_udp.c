/* hw_udp.c — kernel UDP on io_uring. Design note in hw_udp.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include "hw_assert.h"
#include "hw_logging.h"
#include "hw_netaddr.h"
#include "hw_udp.h"

#define UD_RX 1ull
#define UD_TX 2ull
#define UD(kind, slot) (((kind) << 32) | (uint64_t)(slot))
#define RX_BUF 65536u

typedef struct udp_slot {
	struct msghdr mh;
	struct iovec iov;
	struct sockaddr_in addr;
	uint8_t *buf;
} udp_slot;

typedef struct udp_route {
	struct sockaddr_in addr;
	uint8_t configured;
} udp_route;

struct hw_udp {
	hw_net net;                  /* first: container_of by cast */
	hw_udp_cfg cfg;
	int fd;
	int wait_fd;                 /* epoll set holding fd: the reactor's wait source */
	struct io_uring ring;
	int ring_ok;
	uint16_t port;
	hw_wire_tx tx;
	hw_wire_replay *replay;
	hw_wire_arena arena;
	uint8_t *arena_buf;
	udp_slot *rx;
	udp_slot *txs;
	uint32_t *tx_free;           /* stack of free TX slot indices */
	uint32_t n_tx_free;
	uint8_t *sync_buf;           /* frame buffer for the sendmsg(2) fallback */
	uint32_t *rearm;             /* RX slots to re-arm after a poll */
	uint32_t n_rearm;
	int pending_submit;
	int armed;                   /* receives posted (by the polling thread) */
	hw_nodemap map;
	udp_route routes[HW_NODEMAP_CAP];
	hw_udp_stats st;
	const struct sockaddr_in *cur_from;  /* sender of the frame being delivered */
};

static int udp_send(hw_net *n, const hw_msg *m);

static int arm_rx(hw_udp *u, uint32_t i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
	if (!sqe) {
		io_uring_submit(&u->ring);
		sqe = io_uring_get_sqe(&u->ring);
		if (!sqe)
			return -EBUSY;
	}
	udp_slot *s = &u->rx[i];
	memset(&s->mh, 0, sizeof s->mh);
	s->iov.iov_base = s->buf;
	s->iov.iov_len = RX_BUF;
	s->mh.msg_name = &s->addr;
	s->mh.msg_namelen = sizeof s->addr;
	s->mh.msg_iov = &s->iov;
	s->mh.msg_iovlen = 1;
	io_uring_prep_recvmsg(sqe, u->fd, &s->mh, 0);
	io_uring_sqe_set_data64(sqe, UD(UD_RX, i));
	u->pending_submit = 1;
	return 0;
}

void hw_udp_destroy(hw_udp *u)
{
	if (!u)
		return;
	HW_ASSERT_OWNER(u->cfg.owner_reactor);
	if (u->ring_ok)
		io_uring_queue_exit(&u->ring);   /* cancels outstanding receives */
	if (u->fd >= 0)
		close(u->fd);
	if (u->wait_fd >= 0)
		close(u->wait_fd);
	for (uint32_t i = 0; u->rx && i < u->cfg.rx_depth; i++)
		free(u->rx[i].buf);
	for (uint32_t i = 0; u->txs && i < u->cfg.tx_depth; i++)
		free(u->txs[i].buf);
	free(u->rx);
	free(u->txs);
	free(u->tx_free);
	free(u->rearm);
	free(u->sync_buf);
	free(u->arena_buf);
	free(u->replay);
	free(u);
}

hw_udp *hw_udp_create(const hw_udp_cfg *cfg, int *err)
{
	int rc = -EINVAL;
	hw_endpoint ep;
	hw_udp *u = NULL;
	if (!cfg || !cfg->listen || !cfg->on_msg || hw_endpoint_parse(cfg->listen, &ep) || ep.kind != HW_EP_UDP)
		goto fail;
	rc = -ENOMEM;
	u = calloc(1, sizeof *u);
	if (!u)
		goto fail;
	u->fd = u->wait_fd = -1;
	u->cfg = *cfg;
	u->cfg.listen = NULL;   /* borrowed string: do not keep */
	if (!u->cfg.rx_depth)
		u->cfg.rx_depth = 32;
	if (!u->cfg.tx_depth)
		u->cfg.tx_depth = 32;
	if (!u->cfg.max_frame || u->cfg.max_frame > HW_WIRE_MAX_FRAME)
		u->cfg.max_frame = HW_WIRE_MAX_FRAME;
	u->net.send = udp_send;
	u->tx.cluster_id = cfg->cluster_id;
	u->tx.incarnation = hw_wire_new_incarnation();
	u->tx.stream = cfg->stream;
	if (cfg->stream > HW_WIRE_STREAM_MAX) {
		rc = -EINVAL;
		goto fail;
	}
	u->replay = malloc(sizeof *u->replay);
	u->arena_buf = malloc(HW_WIRE_ARENA_SIZE);
	u->rx = calloc(u->cfg.rx_depth, sizeof *u->rx);
	u->txs = calloc(u->cfg.tx_depth, sizeof *u->txs);
	u->tx_free = calloc(u->cfg.tx_depth, sizeof *u->tx_free);
	u->rearm = calloc(u->cfg.rx_depth, sizeof *u->rearm);
	u->sync_buf = malloc(HW_WIRE_MAX_FRAME);
	if (!u->replay || !u->arena_buf || !u->rx || !u->txs || !u->tx_free || !u->rearm || !u->sync_buf)
		goto fail;
	hw_wire_replay_init(u->replay);
	for (uint32_t i = 0; i < u->cfg.rx_depth; i++)
		if (!(u->rx[i].buf = malloc(RX_BUF)))
			goto fail;
	for (uint32_t i = 0; i < u->cfg.tx_depth; i++) {
		if (!(u->txs[i].buf = malloc(u->cfg.max_frame)))
			goto fail;
		u->tx_free[u->n_tx_free++] = i;
	}

	u->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (u->fd < 0) {
		rc = -errno;
		goto fail;
	}
	int sz = 8 << 20;
	(void)setsockopt(u->fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
	(void)setsockopt(u->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	char what[48];
	snprintf(what, sizeof what, "udp %s:%u", inet_ntoa(ep.udp.sin_addr), ntohs(ep.udp.sin_port));
	rc = hw_netaddr_bind_wait(u->fd, &ep.udp, sizeof ep.udp, u->cfg.bind_wait_ms, what);
	if (rc < 0) {
		HW_LOG(ERROR, "udp", "bind %s: %s", what + 4, strerror(-rc));
		goto fail;
	}
	struct sockaddr_in local;
	socklen_t ll = sizeof local;
	getsockname(u->fd, (struct sockaddr *)&local, &ll);
	u->port = ntohs(local.sin_port);

	/* COOP_TASKRUN + TASKRUN_FLAG: completions are not pushed at us with
	 * an inter-processor interrupt; the kernel raises IORING_SQ_TASKRUN and
	 * hw_udp_poll enters the kernel to run them (io_uring_get_events). A
	 * sleeping reactor is woken by the socket itself (hw_udp_wait_fd). */
	rc = io_uring_queue_init(u->cfg.rx_depth + u->cfg.tx_depth + 16, &u->ring,
				 IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG);
	if (rc == -EINVAL)
		rc = io_uring_queue_init(u->cfg.rx_depth + u->cfg.tx_depth + 16, &u->ring, 0);
	if (rc < 0)
		goto fail;
	u->ring_ok = 1;
	/* The reactor sleeps on an epoll set holding the socket: readable while
	 * datagrams wait, and safe whatever the reactor does with it (reading
	 * an epoll fd fails harmlessly; reading the socket would eat a datagram). */
	u->wait_fd = epoll_create1(EPOLL_CLOEXEC);
	if (u->wait_fd < 0) {
		rc = -errno;
		goto fail;
	}
	struct epoll_event ev = { .events = EPOLLIN };
	if (epoll_ctl(u->wait_fd, EPOLL_CTL_ADD, u->fd, &ev) != 0) {
		rc = -errno;
		goto fail;
	}
	/* receives are armed by the first hw_udp_poll, on the polling thread:
	 * io_uring runs completion task work on the task that armed them */
	HW_LOG(DEBUG, "udp", "node %d listening on udp port %u", cfg->self_id, u->port);
	return u;
fail:
	hw_udp_destroy(u);
	if (err)
		*err = rc;
	return NULL;
}

hw_net *hw_udp_net(hw_udp *u)
{
	return &u->net;
}

int hw_udp_wait_fd(const hw_udp *u)
{
	return u->wait_fd;
}

uint16_t hw_udp_local_port(const hw_udp *u)
{
	return u->port;
}

const hw_udp_stats *hw_udp_get_stats(const hw_udp *u)
{
	return &u->st;
}

/* The route table is full: forget every learned route (configured ones
 * stay); a sender still alive is learned again from its next frame. */
static void forget_learned(hw_udp *u)
{
	static __thread udp_route old[HW_NODEMAP_CAP];
	u->st.forgotten += (uint64_t)hw_nodemap_forget(&u->map, u->routes, sizeof u->routes[0],
						       offsetof(udp_route, configured), old);
}

/* Slot for a sender's learned route, making room when the table is full.
 * -ENOSPC only when every slot is a configured route. */
static int learn_slot(hw_udp *u, int32_t node, int *created)
{
	int slot = hw_nodemap_slot(&u->map, node, 1, created);
	if (slot != -ENOSPC)
		return slot;
	forget_learned(u);
	return hw_nodemap_slot(&u->map, node, 1, created);
}

int hw_udp_add_neighbour(hw_udp *u, int32_t node, const char *endpoint)
{
	HW_ASSERT_OWNER(u->cfg.owner_reactor);
	hw_endpoint ep;
	if (hw_endpoint_parse(endpoint, &ep) || ep.kind != HW_EP_UDP)
		return -EINVAL;
	int s = hw_nodemap_slot(&u->map, node, 1, NULL);
	if (s < 0)
		return s;
	u->routes[s].addr = ep.udp;
	u->routes[s].configured = 1;
	return 0;
}

int hw_udp_flush(hw_udp *u)
{
	HW_ASSERT_OWNER(u->cfg.owner_reactor);
	if (!u->pending_submit)
		return 0;
	int rc = io_uring_submit(&u->ring);
	if (rc < 0)
		return rc;
	u->pending_submit = 0;
	return 0;
}

static int send_frame_sync(hw_udp *u, const struct sockaddr_in *to, const uint8_t *buf, size_t len)
{
	u->st.tx_sync_fallback++;
	ssize_t n = sendto(u->fd, buf, len, 0, (const struct sockaddr *)to, sizeof *to);
	if (n < 0) {
		u->st.tx_errors++;
		return errno == EAGAIN || errno == ENOBUFS ? -EAGAIN : -errno;
	}
	return 0;
}

static int udp_send(hw_net *n, const hw_msg *m)
{
	hw_udp *u = (hw_udp *)n;
	HW_ASSERT_OWNER(u->cfg.owner_reactor);
	int s = hw_nodemap_slot(&u->map, m->dst, 0, NULL);
	if (s < 0) {
		u->st.tx_unroutable++;
		return -EHOSTUNREACH;
	}
	const struct sockaddr_in *to = &u->routes[s].addr;
	hw_wire_split sp = { 0 };
	int rc = 0;
	do {
		uint8_t *buf;
		int slot = -1;
		if (u->n_tx_free) {
			slot = (int)u->tx_free[--u->n_tx_free];
			buf = u->txs[slot].buf;
		} else {
			buf = u->sync_buf;
		}
		int len = hw_wire_encode(&u->tx, m, &sp, buf, u->cfg.max_frame);
		if (len < 0) {
			if (slot >= 0)
				u->tx_free[u->n_tx_free++] = (uint32_t)slot;
			return len;
		}
		u->st.wire.tx_frames++;
		u->st.wire.tx_bytes += (uint64_t)len;
		u->st.bytes_copied += (uint64_t)len;
		if (slot < 0) {
			rc = send_frame_sync(u, to, buf, (size_t)len);
			continue;
		}
		struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);
		if (!sqe) {
			io_uring_submit(&u->ring);
			sqe = io_uring_get_sqe(&u->ring);
		}
		if (!sqe) {
			u->tx_free[u->n_tx_free++] = (uint32_t)slot;
			rc = send_frame_sync(u, to, buf, (size_t)len);
			continue;
		}
		udp_slot *ts = &u->txs[slot];
		memset(&ts->mh, 0, sizeof ts->mh);
		ts->addr = *to;
		ts->iov.iov_base = buf;
		ts->iov.iov_len = (size_t)len;
		ts->mh.msg_name = &ts->addr;
		ts->mh.msg_namelen = sizeof ts->addr;
		ts->mh.msg_iov = &ts->iov;
		ts->mh.msg_iovlen = 1;
		io_uring_prep_sendmsg(sqe, u->fd, &ts->mh, 0);
		io_uring_sqe_set_data64(sqe, UD(UD_TX, (uint32_t)slot));
		u->pending_submit = 1;
	} while (!sp.done);
	if (!u->cfg.defer_tx) {
		int frc = hw_udp_flush(u);
		if (frc < 0 && !rc)
			rc = frc;
	}
	return rc;
}

static void deliver(hw_udp *u, udp_slot *s, int len)
{
	hw_wire_hdr h;
	hw_msg m;
	hw_wire_drop why;
	hw_wire_arena_init(&u->arena, u->arena_buf, HW_WIRE_ARENA_SIZE);
	if (hw_wire_decode(s->buf, (size_t)len, u->cfg.cluster_id, &u->arena, &h, &m, &why, &u->st.wire))
		return;   /* counted by the decoder */
	if (u->cfg.self_id >= 0 && h.dst != u->cfg.self_id &&
	    !(h.dst == HW_WIRE_DST_ANY && m.type == HW_MSG_METADATA)) { /* bootstrap (hw_wire.h) */
		u->st.wire.rx_frames--;
		u->st.wire.drops[HW_WIRE_DROP_NOT_FOR_US]++;
		return;
	}
	/* sender identity (docs/security.md): a node whose address is
	 * configured or registered (the controller, brokers) sends from there;
	 * a frame claiming its id from elsewhere is forged, and is refused
	 * before it can move the replay window */
	int known = u->cfg.check_peer_addr ? hw_nodemap_slot(&u->map, h.src, 0, NULL) : -1;
	if (known >= 0 && u->routes[known].configured && u->routes[known].addr.sin_port &&
	    u->routes[known].addr.sin_addr.s_addr != htonl(INADDR_ANY) &&
	    (u->routes[known].addr.sin_port != s->addr.sin_port ||
	     u->routes[known].addr.sin_addr.s_addr != s->addr.sin_addr.s_addr)) {
		u->st.wire.rx_frames--;
		u->st.wire.drops[HW_WIRE_DROP_WRONG_PEER]++;
		return;
	}
	if (!u->cfg.no_replay_check && hw_wire_replay_check(u->replay, &h, &why)) {
		u->st.wire.rx_frames--;
		u->st.wire.drops[why]++;
		return;
	}
	/* learn where the sender is, so the reply finds it (clients, and
	 * brokers whose route was not configured) */
	int created;
	int slot = learn_slot(u, h.src, &created);
	if (slot >= 0 && !u->routes[slot].configured) {
		if (created || memcmp(&u->routes[slot].addr, &s->addr, sizeof s->addr)) {
			u->routes[slot].addr = s->addr;
			u->st.learned++;
		}
	}
	u->cur_from = &s->addr;
	u->cfg.on_msg(u->cfg.ctx, &m);
	u->cur_from = NULL;
}

int hw_udp_rx_peer(const hw_udp *u, struct sockaddr_in *out)
{
	if (!u || !out || !u->cur_from)
		return -ENOENT;
	*out = *u->cur_from;
	return 0;
}

int hw_udp_learn(hw_udp *u, int32_t node, const struct sockaddr_in *addr)
{
	if (!u || !addr || addr->sin_family != AF_INET)
		return -EINVAL;
	HW_ASSERT_OWNER(u->cfg.owner_reactor);
	int created;
	int slot = learn_slot(u, node, &created);
	if (slot < 0)
		return slot;
	if (u->routes[slot].configured)
		return 0;
	if (created || memcmp(&u->routes[slot].addr, addr, sizeof *addr)) {
		u->routes[slot].addr = *addr;
		u->st.learned++;
	}
	return 0;
}

int hw_udp_poll(hw_udp *u)
{
	HW_ASSERT_OWNER(u->cfg.owner_reactor);
	int done = 0;
	struct io_uring_cqe *cqes[64];
	if (!u->armed) {
		for (uint32_t i = 0; i < u->cfg.rx_depth; i++) {
			int rc = arm_rx(u, i);
			if (rc < 0)
				return rc;
		}
		u->armed = 1;
	}
	for (;;) {
		unsigned n = io_uring_peek_batch_cqe(&u->ring, cqes, 64);
		/* acquire-ish read of a kernel-written flag word: READ_ONCE semantics
		 * (relaxed atomic) suffice, the CQ ring head/tail carry the ordering */
		if (!n && (__atomic_load_n(u->ring.sq.kflags, __ATOMIC_RELAXED) & IORING_SQ_TASKRUN)) {
			io_uring_get_events(&u->ring);
			n = io_uring_peek_batch_cqe(&u->ring, cqes, 64);
		}
		if (!n)
			break;
		for (unsigned i = 0; i < n; i++) {
			uint64_t ud = io_uring_cqe_get_data64(cqes[i]);
			int res = cqes[i]->res;
			uint32_t slot = (uint32_t)ud;
			if (ud >> 32 == UD_TX) {
				if (res < 0)
					u->st.tx_errors++;
				u->tx_free[u->n_tx_free++] = slot;
			} else if (ud >> 32 == UD_RX && slot < u->cfg.rx_depth) {
				if (res >= 0)
					deliver(u, &u->rx[slot], res);
				else if (res != -ECANCELED)
					u->st.rx_errors++;
				u->rearm[u->n_rearm++] = slot;
			}
			done++;
		}
		io_uring_cq_advance(&u->ring, n);
		if (done >= 256)
			break;
	}
	for (uint32_t i = 0; i < u->n_rearm; i++)
		arm_rx(u, u->rearm[i]);
	u->n_rearm = 0;
	int rc = hw_udp_flush(u);
	return rc < 0 ? rc : done;
}

int hw_udp_wait(hw_udp *u, int timeout_ms)
{
	HW_ASSERT_OWNER(u->cfg.owner_reactor);
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts = { timeout_ms / 1000, (long long)(timeout_ms % 1000) * 1000000 };
	hw_udp_flush(u);
	int rc = io_uring_wait_cqe_timeout(&u->ring, &cqe, &ts);
	if (rc < 0 && rc != -ETIME && rc != -EINTR)
		return rc;
	return hw_udp_poll(u);
}
