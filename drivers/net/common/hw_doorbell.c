/* hw_doorbell.c — see hw_doorbell.h for the design note. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "hw_doorbell.h"
#include "hw_logging.h"

#define BELL_PEERS 256   /* (node, queue) pairs this sender rings */
#define BELL_MAP_SIZE 64
#define BELL_RETRY_NS 100000000LL

typedef struct bell_peer {
	int32_t node;
	uint16_t queue;
	uint32_t *flag;          /* mapped flag of the peer, NULL until mapped */
	int64_t next_try_ns;
	struct sockaddr_un addr;
	socklen_t alen;
} bell_peer;

struct hw_doorbell {
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int32_t self;
	uint16_t queue;
	int fd;                  /* our bound datagram socket */
	uint32_t *flag;          /* our shared "sleeping" flag */
	char flag_path[sizeof(((struct sockaddr_un *)0)->sun_path) + 16];
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bell_peer peers[BELL_PEERS];
	int n_peers;
	hw_doorbell_stats st;
};

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Queue 0 keeps the single-queue names (bell-<node>), so a one-queue CLI
 * client and a multi-queue broker agree on it; queue k > 0 is
 * bell-<node>-q<k>. */
static int bell_paths(const char *dir, int32_t node, uint16_t queue, char *flag, size_t fcap, char *sock,
		      size_t scap)
{
	char q[16] = "";
	if (queue)
		snprintf(q, sizeof(q), "-q%u", queue);
	int a = snprintf(flag, fcap, "%s/bell-%d%s", dir, node, q);
	int b = snprintf(sock, scap, "%s/bell-%d%s.sock", dir, node, q);
	if (a < 0 || b < 0 || (size_t)a >= fcap || (size_t)b >= scap)
		return -ENAMETOOLONG;
	return 0;
}

static uint32_t *map_flag(const char *path, int create, int *err)
{
	int fd = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	if (create && ftruncate(fd, BELL_MAP_SIZE) != 0) {
		*err = -errno;
		close(fd);
		return NULL;
	}
	void *p = mmap(NULL, BELL_MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (p == MAP_FAILED) {
		*err = -e;
		return NULL;
	}
	return p;
}

/* Flag file layout: word 0 = "sleeping", word 1 = "retired". A sender
 * keeps a peer's flag mapped for as long as the peer lives; when the peer
 * goes away and a new process takes its node id (a bench or CLI client
 * reusing a client slot, a restarted broker) the new process creates a new
 * file, and a sender still mapping the old inode would read a flag nobody
 * writes any more — it would never ring the new process again, which then
 * only woke on its sleep cap (1 ms on every produce response: the regression
 * test_peer_restart covers it). So whoever retires a flag file says so in
 * the file itself: close() marks its own file retired before unlinking it,
 * and open() marks a leftover file (its owner was SIGKILLed) retired before
 * replacing it. A sender that reads "retired" drops its mapping and maps the
 * current file. */
#define BELL_SLEEPING 0
#define BELL_RETIRED 1

static void retire_file(const char *path)
{
	int err = 0;
	uint32_t *old = map_flag(path, 0, &err);
	if (!old)
		return; /* no leftover */
	/* release: pairs with the acquire load in hw_doorbell_ring; a sender
	 * that sees "retired" re-maps the path, which by then names the new
	 * file or none */
	__atomic_store_n(&old[BELL_RETIRED], 1, __ATOMIC_RELEASE);
	munmap(old, BELL_MAP_SIZE);
}

hw_doorbell *hw_doorbell_open(const char *dir, int32_t self_id, int *err)
{
	return hw_doorbell_open_queue(dir, self_id, 0, err);
}

hw_doorbell *hw_doorbell_open_queue(const char *dir, int32_t self_id, uint16_t queue, int *err)
{
	int dummy;
	if (!err)
		err = &dummy;
	if (!dir || !*dir || self_id < 0) {
		*err = -EINVAL;
		return NULL;
	}
	hw_doorbell *b = calloc(1, sizeof(*b));
	if (!b) {
		*err = -ENOMEM;
		return NULL;
	}
	b->fd = -1;
	b->self = self_id;
	b->queue = queue;
	if (strlen(dir) >= sizeof(b->dir) ||
	    bell_paths(dir, self_id, queue, b->flag_path, sizeof(b->flag_path), b->sock_path, sizeof(b->sock_path))) {
		*err = -ENAMETOOLONG;
		goto fail;
	}
	strcpy(b->dir, dir);
	retire_file(b->flag_path); /* a crashed predecessor's file */
	unlink(b->flag_path);
	b->flag = map_flag(b->flag_path, 1, err);
	if (!b->flag)
		goto fail;
	/* relaxed: nobody reads it meaningfully before we first sleep (a
	 * fresh file is zero-filled: not sleeping, not retired) */
	__atomic_store_n(&b->flag[BELL_SLEEPING], 0, __ATOMIC_RELAXED);
	b->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (b->fd < 0) {
		*err = -errno;
		goto fail;
	}
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	strcpy(a.sun_path, b->sock_path);
	unlink(b->sock_path); /* a stale socket of an earlier run */
	if (bind(b->fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		*err = -errno;
		goto fail;
	}
	HW_LOG(DEBUG, "doorbell", "node %d queue %u: doorbell %s", self_id, queue, b->sock_path);
	return b;
fail:
	if (b->fd >= 0)
		close(b->fd);
	if (b->flag)
		munmap(b->flag, BELL_MAP_SIZE);
	free(b);
	return NULL;
}

void hw_doorbell_close(hw_doorbell *b)
{
	if (!b)
		return;
	for (int i = 0; i < b->n_peers; i++)
		if (b->peers[i].flag)
			munmap(b->peers[i].flag, BELL_MAP_SIZE);
	close(b->fd);
	unlink(b->sock_path);
	/* release: senders mapping our file see it retired and re-map */
	__atomic_store_n(&b->flag[BELL_RETIRED], 1, __ATOMIC_RELEASE);
	munmap(b->flag, BELL_MAP_SIZE);
	unlink(b->flag_path);
	free(b);
}

int hw_doorbell_fd(const hw_doorbell *b)
{
	return b->fd;
}

void hw_doorbell_set_sleeping(hw_doorbell *b, int on)
{
	if (on) {
		/* seq_cst store; the full fence that orders it before the RX
		 * re-poll is the caller's (hw_reactor's fence after `sleeping`),
		 * pairing with the fence in hw_doorbell_ring */
		__atomic_store_n(&b->flag[BELL_SLEEPING], 1, __ATOMIC_SEQ_CST);
		return;
	}
	/* relaxed: a stale 1 seen by a sender costs one needless ring */
	__atomic_store_n(&b->flag[BELL_SLEEPING], 0, __ATOMIC_RELAXED);
	char buf[64];
	while (recv(b->fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		b->st.received++;
}

static bell_peer *peer_of(hw_doorbell *b, int32_t node, uint16_t queue)
{
	for (int i = 0; i < b->n_peers; i++)
		if (b->peers[i].node == node && b->peers[i].queue == queue)
			return &b->peers[i];
	if (b->n_peers == BELL_PEERS || node < 0)
		return NULL;
	bell_peer *p = &b->peers[b->n_peers];
	char flag[sizeof(b->flag_path)], sock[sizeof(p->addr.sun_path)];
	if (bell_paths(b->dir, node, queue, flag, sizeof(flag), sock, sizeof(sock)))
		return NULL;
	memset(p, 0, sizeof(*p));
	p->queue = queue;
	p->addr.sun_family = AF_UNIX;
	memcpy(p->addr.sun_path, sock, sizeof(sock));
	p->alen = (socklen_t)sizeof(p->addr);
	p->node = node;
	b->n_peers++;
	return p;
}

int hw_doorbell_ring(hw_doorbell *b, int32_t peer)
{
	return hw_doorbell_ring_queue(b, peer, 0);
}

int hw_doorbell_ring_queue(hw_doorbell *b, int32_t peer, uint16_t queue)
{
	bell_peer *p = peer_of(b, peer, queue);
	if (!p)
		return 0;
	/* acquire: pairs with the release store of "retired" by whoever
	 * replaced the file; then map the file the path names now */
	if (p->flag && __atomic_load_n(&p->flag[BELL_RETIRED], __ATOMIC_ACQUIRE)) {
		munmap(p->flag, BELL_MAP_SIZE);
		p->flag = NULL;
		p->next_try_ns = 0;
		b->st.remaps++;
	}
	if (!p->flag) {
		int64_t t = mono_ns();
		if (t < p->next_try_ns) {
			b->st.unmapped++;
			return 0;
		}
		p->next_try_ns = t + BELL_RETRY_NS;
		char flag[sizeof(b->flag_path)], sock[sizeof(p->addr.sun_path)];
		int err = 0;
		if (!bell_paths(b->dir, peer, queue, flag, sizeof(flag), sock, sizeof(sock)))
			p->flag = map_flag(flag, 0, &err);
		if (!p->flag) {
			b->st.unmapped++;
			return 0;
		}
	}
	/* full fence: our packets written to the peer's RX ring (the memif
	 * ring tail store of the TX burst) are globally visible before we read
	 * the peer's flag; pairs with the receiver's fence between setting its
	 * flag and re-polling its ring (see the design note) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&p->flag[BELL_SLEEPING], __ATOMIC_SEQ_CST)) {
		b->st.skipped++;
		return 0;
	}
	char one = 1;
	if (sendto(b->fd, &one, 1, MSG_DONTWAIT, (struct sockaddr *)&p->addr, p->alen) < 0) {
		b->st.ring_errors++;
		/* EAGAIN: the peer's socket holds unread rings, it will wake */
		return -errno;
	}
	b->st.rings++;
	return 1;
}

const hw_doorbell_stats *hw_doorbell_get_stats(const hw_doorbell *b)
{
	return &b->st;
}
