/* hw_client_data.c — the CLI client's data path: produce and fetch to the
 * partition leaders, polling and sleeping, and forwarding responses between
 * producer endpoints (design note in hw_client.c). */
#include "hw_client_int.h"
/* ---- data path ------------------------------------------------------------ */

/* Copy the client's topic and ports when they changed (ep's thread). */
void hwc_ep_sync(client_ep *ep)
{
	hw_client *cl = ep->cl;
	/* acquire: pairs with the release in on_metadata */
	unsigned g = atomic_load_explicit(&cl->topic_gen, memory_order_acquire);
	if (g == ep->topic_gen)
		return;
	pthread_mutex_lock(&cl->mu);
	ep->topic = cl->topic;
	memcpy(ep->nodes, cl->nodes, (size_t)cl->n_nodes * sizeof(cl->nodes[0]));
	ep->n_nodes = cl->n_nodes;
	ep->topic_gen = atomic_load_explicit(&cl->topic_gen, memory_order_relaxed);
	pthread_mutex_unlock(&cl->mu);
	if (cl->bootstrap && ep->dpdk)
		hwc_ep_add_dpdk_routes(ep);
}

/* The data address of the partition's leader (udp), or NULL over dpdk
 * (the transport routes by node id). 0, -EINVAL (no such partition),
 * -EHOSTUNREACH (no leader, or a leader Metadata gave no address for). */
static int leader_addr(client_ep *ep, uint32_t partition, const struct sockaddr_in **out)
{
	hwc_ep_sync(ep);
	if (partition >= ep->topic.n_parts)
		return -EINVAL;
	int32_t l = ep->topic.leader[partition];
	const client_node *nd = l >= 0 ? hwc_node_find(ep->nodes, ep->n_nodes, l) : NULL;
	*out = NULL;
	if (ep->dpdk)
		return nd ? 0 : -EHOSTUNREACH;
	if (!nd || !nd->data.sin_port)
		return -EHOSTUNREACH;
	*out = &nd->data;
	return 0;
}

/* A broker told us it is not the leader (or the leader died): look again,
 * at most every 100 ms (over all producers). */
static void maybe_refresh(hw_client *cl)
{
	pthread_mutex_lock(&cl->mu);
	if (hwc_now_ns() - cl->last_refresh_ns >= 100000000) {
		meta_ctx x;
		char name[HW_TOPIC_NAME_MAX];
		snprintf(name, sizeof(name), "%s", cl->topic.name);
		cl->last_refresh_ns = hwc_now_ns();
		hwc_refresh_metadata(cl, name, 300, &x);
	}
	pthread_mutex_unlock(&cl->mu);
}

static int data_send(client_ep *ep, const struct sockaddr_in *to, hw_msg *m)
{
	ep->last_send_ns = hwc_now_ns();
	if (!ep->last_resp_ns)
		ep->last_resp_ns = ep->last_send_ns;
	if (!ep->dpdk)
		return hwc_ep_encode_and_send(ep, to, m);
	m->src = ep->node;
	int rc = hw_net_send(hw_dpdk_net(ep->dpdk), m);
	hw_dpdk_flush(ep->dpdk);
	return rc;
}

static int io_send_produce(void *ctx, uint32_t partition, int16_t acks, int32_t timeout_ms,
			   const uint8_t *records, uint32_t len, uint32_t corr)
{
	client_ep *ep = ctx;
	const struct sockaddr_in *to;
	int rc = leader_addr(ep, partition, &to);
	if (rc < 0) {
		maybe_refresh(ep->cl);
		return rc;
	}
	hw_msg m = {.type = HW_MSG_PRODUCE, .dst = ep->topic.leader[partition], .correlation_id = corr};
	m.u.produce = (hw_produce_req){.acks = acks, .timeout_ms = timeout_ms,
				       .tp = {ep->topic.topic_id, partition},
				       .records = records, .records_len = len,
				       .want_timing = (uint8_t)(ep->cl->produce_timing != 0)};
	if (acks != 0 && partition < HW_CLIENT_MAX_PARTS && !ep->part_unanswered_ns[partition])
		ep->part_unanswered_ns[partition] = hwc_now_ns();
	return data_send(ep, to, &m);
}

int hw_client_set_rack(hw_client *cl, const char *rack)
{
	if (strlen(rack) >= sizeof(cl->client_rack))
		return -EINVAL;
	snprintf(cl->client_rack, sizeof(cl->client_rack), "%s", rack);
	return 0;
}

/* Where partition's fetches go: its preferred read replica when the leader
 * named one and Metadata gave its address, else the leader. */
static int fetch_addr(client_ep *ep, uint32_t partition, const struct sockaddr_in **out, int32_t *dst)
{
	int rc = leader_addr(ep, partition, out);
	*dst = partition < ep->topic.n_parts ? ep->topic.leader[partition] : -1;
	int32_t rr = partition < HW_CLIENT_MAX_PARTS ? ep->read_replica_plus1[partition] - 1 : -1;
	if (rc < 0 || rr < 0)
		return rc;
	const client_node *nd = hwc_node_find(ep->nodes, ep->n_nodes, rr);
	if (!nd || (!ep->dpdk && !nd->data.sin_port)) {
		ep->read_replica_plus1[partition] = 0; /* unknown: the leader */
		return rc;
	}
	*out = ep->dpdk ? NULL : &nd->data;
	*dst = rr;
	return 0;
}

/* A fetch answer for partition from node src: adopt a preferred read
 * replica; a read replica that refuses (not in the ISR any more, a new
 * leader epoch, an offset it does not have) sends us back to the leader,
 * as Kafka's Fetcher does. */
static void follow_read_replica(client_ep *ep, const hw_fetch_resp *f, const hw_fetch_resp_part *fp, int32_t src)
{
	uint32_t p = fp->tp.partition;
	if (p >= HW_CLIENT_MAX_PARTS)
		return;
	for (int i = 0; i < f->n_preferred; i++)
		if (f->preferred[i].tp.partition == p && f->preferred[i].tp.topic_id == fp->tp.topic_id)
			ep->read_replica_plus1[p] = f->preferred[i].replica + 1;
	if (ep->read_replica_plus1[p] == src + 1 && fp->error != HW_ERR_NONE)
		ep->read_replica_plus1[p] = 0;
}

static int io_send_fetch(void *ctx, uint32_t partition, int64_t offset, int32_t max_bytes,
			 uint32_t corr)
{
	client_ep *ep = ctx;
	const struct sockaddr_in *to;
	int32_t dst;
	int rc = fetch_addr(ep, partition, &to, &dst);
	if (rc < 0) {
		maybe_refresh(ep->cl);
		return rc;
	}
	hw_fetch_part fp = {.tp = {ep->topic.topic_id, partition}, .fetch_offset = offset,
			    .current_leader_epoch = -1, .last_fetched_epoch = -1,
			    .log_start_offset = -1, .partition_max_bytes = max_bytes};
	hw_msg m = {.type = HW_MSG_FETCH, .dst = dst, .correlation_id = corr};
	m.u.fetch = (hw_fetch_req){.replica_id = HW_CONSUMER_ID, .replica_epoch = -1,
				   .max_wait_ms = 0, .min_bytes = 1, .max_bytes = max_bytes,
				   .n_parts = 1, .parts = &fp};
	memcpy(m.u.fetch.rack_id, ep->cl->client_rack, sizeof(m.u.fetch.rack_id));
	return data_send(ep, to, &m);
}

/* Hand one response to the poll in progress on ep (dropped when none). */
static void ep_deliver_resp(client_ep *ep, const hw_bench_resp *r)
{
	if (!ep->poll_fn)
		return;
	ep->poll_fn(ep->poll_arg, r);
	ep->poll_refresh |= r->error == HW_ERR_NOT_LEADER_OR_FOLLOWER;
	ep->last_resp_ns = hwc_now_ns();
}

/* The endpoint a response belongs to (design note). */
static int resp_owner(const client_ep *ep, const hw_bench_resp *r)
{
	if (ep->cl->n_ep == 1 || !ep->in || ep->cl->collect)
		return ep->idx;
	if (r->kind == HW_BENCH_FETCH)
		return 0;
	uint32_t p = r->correlation_id >> HW_BENCH_CORR_PRODUCER_SHIFT;
	return p < (uint32_t)ep->cl->n_ep ? (int)p : ep->idx;
}

int hwc_inbox_open(client_ep *ep)
{
	/* hw_spsc keeps its producer and consumer indices on their own lines */
	ep->in = aligned_alloc(HW_CACHELINE, (size_t)ep->cl->n_ep * sizeof(hw_spsc));
	if (!ep->in)
		return -ENOMEM;
	memset(ep->in, 0, (size_t)ep->cl->n_ep * sizeof(hw_spsc));
	for (int j = 0; j < ep->cl->n_ep; j++)
		if (hw_spsc_init(&ep->in[j], FWD_RING_CAP))
			return -ENOMEM;  /* hwc_inbox_close frees the rest */
	return 0;
}

static void fwd_free(fwd_entry *e)
{
	free(e->records);
	free(e);
}

void hwc_inbox_close(client_ep *ep)
{
	if (!ep->in)
		return;
	for (int j = 0; j < ep->cl->n_ep; j++) {
		fwd_entry *e;
		while ((e = hw_spsc_pop(&ep->in[j])))
			fwd_free(e);
		hw_spsc_fini(&ep->in[j]);
	}
	free(ep->in);
	ep->in = NULL;
}

/* Publish a copy of r in to's ring from ep; wake `to` if it sleeps. */
static void forward(client_ep *ep, client_ep *to, const hw_bench_resp *r)
{
	fwd_entry *e = malloc(sizeof(*e));
	if (!e) {
		ep->fwd_dropped++; /* the bench resends after its timeout */
		return;
	}
	e->r = *r;
	e->records = NULL;
	if (r->records_len) {
		e->records = malloc(r->records_len);
		if (!e->records) {
			free(e);
			ep->fwd_dropped++;
			return;
		}
		memcpy(e->records, r->records, r->records_len);
	}
	e->r.records = e->records;
	/* the ring's release store of its head publishes the entry */
	if (hw_spsc_push(&to->in[ep->idx], e)) {
		fwd_free(e);
		ep->fwd_dropped++; /* full: the bench resends after its timeout */
		return;
	}
	ep->fwd_out++;
	/* full fence: the ring push (its head store) is globally visible before we read
	 * `sleeping`; pairs with the fence in ep_sleep (Dekker) */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&to->sleeping, memory_order_relaxed) && to->have_bell)
		(void)sendto(ep->wake_fd, "w", 1, 0, (const struct sockaddr *)&to->bell, sizeof(to->bell));
}

/* Deliver what other endpoints forwarded to ep. Returns how many. */
static int drain_inbox(client_ep *ep)
{
	if (!ep->in)
		return 0;
	int n = 0;
	for (int j = 0; j < ep->cl->n_ep; j++) {
		fwd_entry *e;
		/* the ring's acquire load of its head makes the entry visible */
		while ((e = hw_spsc_pop(&ep->in[j]))) {
			ep_deliver_resp(ep, &e->r);
			if (e->r.kind == HW_BENCH_PRODUCE || !e->r.more)
				ep->poll_delivered++;
			fwd_free(e);
			n++;
		}
	}
	return n;
}

static void route(client_ep *ep, const hw_bench_resp *r)
{
	int owner = resp_owner(ep, r);
	if (owner == ep->idx)
		ep_deliver_resp(ep, r);
	else
		forward(ep, &ep->cl->ep[owner], r);
}

/* A piece of a fetched batch larger than a frame (docs/wire.md
 * #batch-pieces): assembled per partition; r gets the whole batch once it
 * is complete (returns the assembler to reset after delivery), else no
 * records and `more` set, so the consumer waits for the rest. A piece that
 * cannot be used is counted; the consumer's next fetch asks again from the
 * same offset. */
static hw_piece_asm *take_piece(client_ep *ep, const hw_fetch_resp_part *fp, hw_bench_resp *r)
{
	r->records = NULL;
	r->records_len = 0;
	hw_piece_drop why = HW_PIECE_DROP_TOO_SCATTERED;
	if (fp->tp.partition >= HW_CLIENT_MAX_PARTS) {
		ep->piece_drops[HW_PIECE_DROP_TOO_LARGE]++;
		return NULL;
	}
	hw_piece_asm *pa = &ep->pasm[fp->tp.partition];
	const uint8_t *whole = NULL;
	int rc = hw_piece_feed(pa, HW_WIRE_PIECE_MAX_BATCH, fp->piece_base, fp->piece_batch_len, fp->piece_off,
			       fp->records, fp->records_len, &whole, &why);
	if (rc < 0) {
		ep->piece_drops[why]++;
		return NULL;
	}
	if (rc == 0) {
		r->more = 1;
		return NULL;
	}
	r->records = whole;
	r->records_len = fp->piece_batch_len;
	return pa;
}

/* Hand one decoded data-plane message to its owner's poll. */
static void deliver(client_ep *ep, const hw_msg *m, int more)
{
	hw_bench_resp r = {.correlation_id = m->correlation_id};
	if (m->type == HW_MSG_PRODUCE_RESP) {
		const hw_produce_resp *p = &m->u.produce_resp;
		r.kind = HW_BENCH_PRODUCE;
		r.partition = p->tp.partition;
		if (r.partition < HW_CLIENT_MAX_PARTS)
			ep->part_unanswered_ns[r.partition] = 0;
		r.error = p->error;
		r.base_offset = p->base_offset;
		if (p->has_timing) {
			r.has_timing = 1;
			r.timing = p->timing;
			r.n_acks = p->n_acks <= HW_MAX_RF - 1 ? p->n_acks : HW_MAX_RF - 1;
			memcpy(r.acks, p->acks, sizeof(r.acks));
		}
		if (resp_owner(ep, &r) == ep->idx)
			ep->poll_delivered++;
		route(ep, &r);
	} else if (m->type == HW_MSG_FETCH_RESP) {
		const hw_fetch_resp *f = &m->u.fetch_resp;
		r.kind = HW_BENCH_FETCH;
		r.more = (uint8_t)more;
		if (f->n_parts == 0) {
			r.error = f->error;
			route(ep, &r);
		}
		for (int i = 0; i < f->n_parts; i++) {
			const hw_fetch_resp_part *fp = &f->parts[i];
			follow_read_replica(ep, f, fp, m->src);
			r.partition = fp->tp.partition;
			r.error = fp->error != HW_ERR_NONE ? fp->error : f->error;
			r.high_watermark = fp->high_watermark;
			r.log_start_offset = fp->log_start_offset;
			r.records = fp->records;
			r.records_len = fp->records_len;
			r.more = (uint8_t)more;
			hw_piece_asm *pa = NULL;
			if (fp->piece_batch_len)
				pa = take_piece(ep, fp, &r);
			route(ep, &r);
			if (pa)
				hw_piece_reset(pa); /* delivered (route copies what it forwards) */
		}
		if (resp_owner(ep, &r) == ep->idx)
			ep->poll_delivered++;
	}
}

void hwc_on_dpdk_msg(void *ctx, const hw_msg *m)
{
	client_ep *ep = ctx;
	if (ep->poll_fn || ep->in)
		deliver(ep, m, 0); /* split fetch frames each stand alone here */
}

/* Sleep on ep's memif doorbell up to timeout_ns unless a packet arrives or
 * another endpoint forwards us a response. Returns what was handled. */
static int ep_sleep(client_ep *ep, int64_t timeout_ns)
{
	if (!ep->in)
		return hw_dpdk_idle_wait(ep->dpdk, timeout_ns);
	atomic_store_explicit(&ep->sleeping, 1, memory_order_relaxed);
	/* full fence: `sleeping` is globally visible before we look at our
	 * rings; pairs with the fence in forward() */
	atomic_thread_fence(memory_order_seq_cst);
	int n = drain_inbox(ep);
	if (!n)
		n = hw_dpdk_idle_wait(ep->dpdk, timeout_ns);
	/* relaxed: a late wake-up byte only ends a later sleep early */
	atomic_store_explicit(&ep->sleeping, 0, memory_order_relaxed);
	return n + drain_inbox(ep);
}

/* The adaptive policy's view of a poll that starts at now and must return
 * by deadline (docs/idle.md "The client"): a request sent since the last
 * answer is a wait worth spinning for (its gap is learnt). With none out
 * the poll only waits for the time of the next send (an open-loop bench
 * between records): hw_idle_expect_nothing sleeps until one window before
 * it and spins the rest, so the timer's wake-up lateness is not the send's
 * — spinning a whole 1 ms gap took the core from the brokers and taught
 * nothing. A pipelined request still
 * out after an earlier one's answer counts as none out; the broker's
 * doorbell wakes the sleep. */
static void idle_begin_wait(client_ep *ep, int64_t now, int64_t deadline)
{
	if (ep->last_send_ns > ep->last_resp_ns)
		hw_idle_mark_work(&ep->idle, now);
	else
		hw_idle_expect_nothing(&ep->idle, now, deadline);
}

/* A sleep of at most t, cut (adaptive policy) to wake one spin window
 * before a known send time (hw_idle_sleep_ns). */
static int64_t idle_sleep_cap(client_ep *ep, int adaptive, int64_t now, int64_t t)
{
	int64_t s = adaptive ? hw_idle_sleep_ns(&ep->idle, now) : INT64_MAX;
	return s < t ? s : t;
}

static int ep_poll(client_ep *ep, int64_t timeout_ns, hw_bench_resp_fn fn, void *arg)
{
	hw_client *cl = ep->cl;
	ep->poll_fn = fn;
	ep->poll_arg = arg;
	ep->poll_delivered = 0;
	ep->poll_refresh = 0;
	if (ep->dpdk) {
		/* Busy-poll the memif rings (that is the point of DPDK), but after
		 * spin_ns without traffic sleep on the doorbell so a client
		 * sharing 2 cores with three brokers does not starve them. */
		int64_t start = hwc_now_ns(), deadline = start + timeout_ns, last_rx = start;
		int adaptive = cl->spin_ns < 0;
		if (adaptive)
			idle_begin_wait(ep, start, deadline);
		for (;;) {
			int n = hw_dpdk_poll(ep->dpdk) + drain_inbox(ep);
			int64_t now = hwc_now_ns();
			if (n > 0) {
				last_rx = now;
				if (adaptive)
					hw_idle_on_work(&ep->idle, now, now);
			}
			if (ep->poll_delivered || now >= deadline)
				break;
			if (cl->busy_poll)
				continue; /* a core of our own: poll, nothing else */
			int sleep_now;
			if (adaptive) {
				int spun = n == 0 && hw_idle_spin(&ep->idle);
				ep->idle_yields += (uint64_t)spun;
				sleep_now = n == 0 && !spun;
				if (sleep_now)
					hw_idle_on_sleep(&ep->idle);
			} else {
				if (n == 0 && now - last_rx <= cl->spin_ns) {
					sched_yield(); /* share the core while spinning */
					ep->idle_yields++;
				}
				sleep_now = now - last_rx > cl->spin_ns;
			}
			if (sleep_now) {
				/* sleep until a broker rings our memif doorbell
				 * (hw_doorbell.h), a producer forwards us an
				 * answer, or 1 ms passes */
				int64_t left = deadline - now;
				int64_t t = idle_sleep_cap(ep, adaptive, now, left < 1000000 ? left : 1000000);
				ep->idle_sleeps++;
				if (ep_sleep(ep, t) > 0) {
					last_rx = hwc_now_ns();
					ep->idle_wakeups++;
				}
			}
		}
	} else {
		/* The same policy on the UDP socket: spin (yielding) on
		 * non-blocking receives, then block in the kernel. */
		int64_t start = hwc_now_ns(), deadline = start + timeout_ns, last_rx = start;
		int adaptive = cl->spin_ns < 0;
		if (adaptive)
			idle_begin_wait(ep, start, deadline);
		for (;;) {
			hw_wire_arena arena;
			hw_wire_hdr h;
			hw_msg m;
			int got = 0;
			while (hwc_recv_one(&cl->cluster, ep->node, ep->data_fd, ep->rxbuf, ep->arena_mem,
					&ep->stats, &arena, &h, &m)) {
				deliver(ep, &m, (h.flags & HW_WIRE_F_MORE) != 0);
				got = 1;
			}
			int64_t now = hwc_now_ns();
			if (got) {
				last_rx = now;
				if (adaptive)
					hw_idle_on_work(&ep->idle, now, now);
			}
			if (ep->poll_delivered || now >= deadline)
				break;
			if (cl->busy_poll)
				continue;
			if (adaptive) {
				if (got)
					continue;
				if (hw_idle_spin(&ep->idle)) {
					ep->idle_yields++; /* hw_idle_spin yielded once */
					continue;
				}
				hw_idle_on_sleep(&ep->idle);
			} else if (now - last_rx <= cl->spin_ns) {
				sched_yield();
				ep->idle_yields++;
				continue;
			}
			int64_t t = idle_sleep_cap(ep, adaptive, now, deadline - now);
			ep->idle_sleeps++;
			int rc = hwc_wait_readable(ep->data_fd, -1, t);
			ep->idle_wakeups += rc > 0;
			if (rc < 0 || (rc == 0 && t == deadline - now))
				break;
		}
	}
	ep->poll_fn = NULL;
	int64_t now = hwc_now_ns();
	int part_silent = 0;
	for (uint32_t p = 0; p < cl->topic.n_parts && p < HW_CLIENT_MAX_PARTS && !part_silent; p++)
		part_silent = ep->part_unanswered_ns[p] && now - ep->part_unanswered_ns[p] > 1000000000LL;
	if (((ep->last_send_ns > ep->last_resp_ns && now - ep->last_resp_ns > 1000000000LL) || part_silent) &&
	    now - ep->last_silent_refresh_ns > 500000000LL) {
		ep->last_silent_refresh_ns = now;
		ep->poll_refresh = 1;
		/* a silent read replica (crashed, cut off): back to the
		 * leaders, as Kafka's consumer does with an unavailable
		 * preferred replica (docs/racks.md) */
		memset(ep->read_replica_plus1, 0, sizeof(ep->read_replica_plus1));
	}
	if (ep->poll_refresh)
		maybe_refresh(cl);
	return ep->poll_delivered;
}

static int io_poll(void *ctx, int64_t timeout_ns, hw_bench_resp_fn fn, void *arg)
{
	return ep_poll(ctx, timeout_ns, fn, arg);
}

/* Every endpoint from the calling thread, while no producer thread runs:
 * sends through endpoint 0, polls all of them (no forwarding: each
 * delivers what it receives). */
static int all_send_produce(void *ctx, uint32_t partition, int16_t acks, int32_t timeout_ms,
			    const uint8_t *records, uint32_t len, uint32_t corr)
{
	hw_client *cl = ctx;
	return io_send_produce(&cl->ep[0], partition, acks, timeout_ms, records, len, corr);
}

static int all_send_fetch(void *ctx, uint32_t partition, int64_t offset, int32_t max_bytes,
			  uint32_t corr)
{
	hw_client *cl = ctx;
	return io_send_fetch(&cl->ep[0], partition, offset, max_bytes, corr);
}

static int all_poll(void *ctx, int64_t timeout_ns, hw_bench_resp_fn fn, void *arg)
{
	hw_client *cl = ctx;
	if (cl->n_ep == 1)
		return ep_poll(&cl->ep[0], timeout_ns, fn, arg);
	cl->collect = 1;
	int64_t deadline = hwc_now_ns() + timeout_ns;
	int total = 0;
	for (;;) {
		for (int i = 0; i < cl->n_ep; i++) {
			/* leftovers forwarded while the producers ran */
			client_ep *ep = &cl->ep[i];
			ep->poll_fn = fn;
			ep->poll_arg = arg;
			total += drain_inbox(ep);
			ep->poll_fn = NULL;
			int n = ep_poll(ep, 0, fn, arg);
			total += n > 0 ? n : 0;
		}
		int64_t left = deadline - hwc_now_ns();
		if (total || left <= 0)
			break;
		/* nothing anywhere: a short nap on endpoint 0 (a response on
		 * another queue waits at most this long) */
		int n = ep_poll(&cl->ep[0], left < 50000 ? left : 50000, fn, arg);
		total += n > 0 ? n : 0;
		if (total)
			break;
	}
	cl->collect = 0;
	return total;
}

hw_bench_io *hw_client_io(hw_client *cl)
{
	return hw_client_producer_io(cl, 0);
}

hw_bench_io *hw_client_producer_io(hw_client *cl, int p)
{
	if (p < 0 || p >= cl->n_ep)
		return NULL;
	client_ep *ep = &cl->ep[p];
	hwc_ep_sync(ep);
	ep->io = (hw_bench_io){.ctx = ep, .send_produce = io_send_produce,
			       .send_fetch = io_send_fetch, .poll = io_poll};
	return &ep->io;
}

hw_bench_io *hw_client_all_io(hw_client *cl)
{
	if (cl->n_ep == 1)
		return hw_client_io(cl);
	cl->all_io = (hw_bench_io){.ctx = cl, .send_produce = all_send_produce,
				   .send_fetch = all_send_fetch, .poll = all_poll};
	return &cl->all_io;
}

int hw_client_producers(const hw_client *cl)
{
	return cl->n_ep;
}

void hw_client_idle_stats(const hw_client *cl, hw_client_idle *out)
{
	memset(out, 0, sizeof *out);
	for (int i = 0; i < cl->n_ep; i++) {
		const client_ep *ep = &cl->ep[i];
		hw_idle_stats st;
		hw_idle_get_stats(&ep->idle, &st);
		out->spins_to_work += st.spins_to_work;
		out->spins_to_sleep += st.spins_to_sleep;
		out->contended_yields += st.contended_yields;
		out->stalled_yields += st.stalled_yields;
		out->probes += st.probes;
		out->sleeps += ep->idle_sleeps;
		out->wakeups += ep->idle_wakeups;
		out->yields += ep->idle_yields;
	}
}

void hw_client_forward_stats(const hw_client *cl, uint64_t *forwarded, uint64_t *dropped)
{
	*forwarded = *dropped = 0;
	for (int i = 0; i < cl->n_ep; i++) {
		*forwarded += cl->ep[i].fwd_out;
		*dropped += cl->ep[i].fwd_dropped;
	}
}

