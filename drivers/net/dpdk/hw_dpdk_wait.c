/* hw_dpdk_wait.c — DPDK transport: how an idle instance sleeps. The memif
 * doorbell, our queue's RX interrupts and the steering hand-off eventfd as
 * reactor wait sources (hw_dpdk_add_wait_sources) or for a plain sleep
 * (hw_dpdk_idle_wait). Shared state in hw_dpdk_int.h. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rte_ethdev.h>
#include "hw_assert.h"
#include "hw_doorbell.h"
#include "hw_dpdk.h"
#include "hw_dpdk_int.h"
#include "hw_dpdk_steer.h"
#include "hw_logging.h"
#include "hw_reactor.h"

/* ---- memif doorbell (hw_doorbell.h): the directory of the first memif
 * vdev's socket= is shared by every process of the link, so it also holds
 * the doorbells. Only queue 0, and only with a node id. */
void dpdk_open_doorbell(hw_dpdk *d)
{
	int memif = 0;
	for (int i = 0; i < d->n_ports; i++)
		memif |= !strncmp(d->ports[i].name, "net_memif", 9);
	if (!memif || d->cfg.no_doorbell || d->cfg.self_id < 0)
		return;
	const char *s = strstr(dpdk_eal_args, "socket=");
	if (!s)
		return;
	s += 7;
	size_t len = strcspn(s, ", \t");
	char dir[PATH_MAX];
	if (len >= sizeof dir)
		return;
	memcpy(dir, s, len);
	dir[len] = 0;
	char *slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = 0;
	if (!*dir)
		strcpy(dir, "/");
	int err = 0;
	d->bell = hw_doorbell_open_queue(dir, d->cfg.self_id, d->cfg.queue, &err);
	if (!d->bell)
		HW_LOG(WARN, "dpdk", "memif doorbell in %s: %s (sleeping peers wake on their timer only)", dir,
		       strerror(-err));
}

/* ---- RX interrupts as reactor wait sources */

static int intr_arm(void *arg)
{
	intr_src *s = arg;
	/* the reactor re-polls after arming, so a packet that arrived before
	 * the enable is not slept on; if enabling fails the sleep is simply
	 * bounded by the reactor's cap, so never veto */
	(void)rte_eth_dev_rx_intr_enable(s->port_id, s->queue);
	return 0;
}

static void intr_disarm(void *arg)
{
	intr_src *s = arg;
	(void)rte_eth_dev_rx_intr_disable(s->port_id, s->queue);
}

static int bell_arm(void *arg)
{
	/* the reactor's full fence and RX re-poll follow (hw_doorbell.h) */
	hw_doorbell_set_sleeping(arg, 1);
	return 0;
}

static void bell_disarm(void *arg)
{
	hw_doorbell_set_sleeping(arg, 0);
}

static int steer_arm(void *arg)
{
	/* the reactor's full fence and re-poll (our hand-off rings) follow */
	dpdk_steer_set_sleeping(arg, 1);
	return 0;
}

static void steer_disarm(void *arg)
{
	dpdk_steer_set_sleeping(arg, 0);
}

/* The RX-interrupt eventfd of our queue on port p, or -1 (no interrupts,
 * or an fd nothing here can clear: only eventfds, which an 8-byte read
 * clears — net_vhost in 22.11 hands out an epoll set around its kick
 * eventfd; sleeping on that would spin). */
static int rx_intr_eventfd(const hw_dpdk *d, const dport *p, int log)
{
	if (!p->rx_intr)
		return -1;
	int fd = rte_eth_dev_rx_intr_ctl_q_get_fd(p->port_id, d->cfg.queue);
	if (fd < 0)
		return -1;
	char link[64], target[64];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t tl = readlink(link, target, sizeof target - 1);
	if (tl <= 0 || (target[tl] = 0, strcmp(target, "anon_inode:[eventfd]") != 0)) {
		if (log)
			HW_LOG(INFO, "dpdk", "port %s: RX interrupt fd is not an eventfd (%s): polling with backoff",
			       p->name, tl > 0 ? target : "?");
		return -1;
	}
	return fd;
}

int hw_dpdk_idle_wait(hw_dpdk *d, int64_t timeout_ns)
{
	HW_ASSERT_OWNER(d->cfg.owner_reactor);
	if (timeout_ns < 0)
		timeout_ns = 0;
	struct timespec ts = { timeout_ns / 1000000000LL, timeout_ns % 1000000000LL };
	/* every wake-up source of this instance: our queue's RX interrupts
	 * (armed only for the sleep, like a reactor's intr_arm), the doorbell.
	 * Which ports have usable ones is found once (asking a PMD without
	 * them logs an error every time). */
	if (!d->intr_probed) {
		for (int i = 0; i < d->n_ports && d->n_intr < MAX_PORTS; i++)
			if (rx_intr_eventfd(d, &d->ports[i], 1) >= 0)
				d->intr[d->n_intr++] = (intr_src){ d->ports[i].port_id, d->cfg.queue };
		d->intr_probed = 1;
	}
	struct pollfd pfd[MAX_PORTS + 2];   /* interrupts, doorbell, hand-offs */
	uint16_t intr_port[MAX_PORTS];
	int nfd = 0;
	for (int k = 0; k < d->n_intr && nfd < MAX_PORTS; k++) {
		int fd = rte_eth_dev_rx_intr_ctl_q_get_fd(d->intr[k].port_id, d->cfg.queue);
		if (fd < 0)
			continue;
		intr_port[nfd] = d->intr[k].port_id;
		(void)rte_eth_dev_rx_intr_enable(intr_port[nfd], d->cfg.queue);
		pfd[nfd++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	int n_intr = nfd;
	if (d->bell) {
		hw_doorbell_set_sleeping(d->bell, 1);
		pfd[nfd++] = (struct pollfd){ .fd = hw_doorbell_fd(d->bell), .events = POLLIN };
	}
	/* frames another instance hands us (hw_dpdk_steer.h) */
	int sfd = dpdk_steer_fd(d), sfd_at = nfd;
	if (sfd >= 0) {
		dpdk_steer_set_sleeping(d, 1);
		pfd[nfd++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
	}
	if (!nfd) {
		nanosleep(&ts, NULL);
		return hw_dpdk_poll(d);
	}
	/* full fence: the doorbell and hand-off flags and the interrupt
	 * enables are globally visible before the RX re-poll below reads the
	 * rings; pairs with the fences in hw_doorbell_ring and dpdk_steer_wake
	 * (a packet that arrived before the enable is found by this poll, not
	 * slept on) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	int n = hw_dpdk_poll(d);
	if (n == 0)
		(void)ppoll(pfd, (nfds_t)nfd, &ts, NULL);
	for (int k = 0; k < n_intr; k++) {
		uint64_t v;
		if (n == 0 && (pfd[k].revents & POLLIN))
			(void)!read(pfd[k].fd, &v, sizeof v); /* clear the eventfd */
		(void)rte_eth_dev_rx_intr_disable(intr_port[k], d->cfg.queue);
	}
	if (d->bell)
		hw_doorbell_set_sleeping(d->bell, 0);
	if (sfd >= 0) {
		uint64_t v;
		if (n == 0 && (pfd[sfd_at].revents & POLLIN))
			(void)!read(sfd, &v, sizeof v);   /* clear the eventfd */
		dpdk_steer_set_sleeping(d, 0);
	}
	return n ? n : hw_dpdk_poll(d);
}

const struct hw_doorbell_stats *hw_dpdk_doorbell_stats(const hw_dpdk *d)
{
	return d->bell ? hw_doorbell_get_stats(d->bell) : NULL;
}

int hw_dpdk_add_wait_sources(hw_dpdk *d, hw_reactor *r)
{
	HW_ASSERT_OWNER(d->cfg.owner_reactor);
	int n = 0;
	if (d->bell) {
		int rc = hw_reactor_add_wait_fd(r, hw_doorbell_fd(d->bell), 0, bell_arm, bell_disarm, d->bell);
		if (rc)
			return rc;
		n++;
		HW_LOG(INFO, "dpdk", "memif doorbell registered (fd %d)", hw_doorbell_fd(d->bell));
	}
	int sfd = dpdk_steer_fd(d);
	if (sfd >= 0) {
		int rc = hw_reactor_add_wait_fd(r, sfd, 1, steer_arm, steer_disarm, d);
		if (rc)
			return rc;
		n++;
	}
	for (int i = 0; i < d->n_ports; i++) {
		dport *p = &d->ports[i];
		int fd = -1;
		if (p->rx_intr && d->n_intr < MAX_PORTS)
			fd = rx_intr_eventfd(d, p, 1); /* the reactor clears it with an 8-byte read */
		if (fd < 0) {
			if (!(p->memif && d->bell)) {
				/* nothing wakes the reactor for this port: bound
				 * its sleeps (hw_reactor.h "automatic" cap) */
				hw_reactor_need_polling(r, HW_DPDK_POLL_CAP_US);
				HW_LOG(INFO, "dpdk", "port %s: no RX interrupt%s: polled at least every %u us while idle",
				       p->name, p->memif ? " and no doorbell" : "", HW_DPDK_POLL_CAP_US);
			}
			continue;
		}
		intr_src *s = &d->intr[d->n_intr];
		s->port_id = p->port_id;
		s->queue = d->cfg.queue;
		(void)rte_eth_dev_rx_intr_disable(p->port_id, d->cfg.queue);
		int rc = hw_reactor_add_wait_fd(r, fd, 1, intr_arm, intr_disarm, s);
		if (rc)
			return rc;
		d->n_intr++;
		d->intr_probed = 1;
		n++;
		HW_LOG(INFO, "dpdk", "port %s queue %u: RX interrupts (fd %d)", p->name, d->cfg.queue, fd);
	}
	return n;
}
