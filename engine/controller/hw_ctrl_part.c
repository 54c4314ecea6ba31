/* hw_ctrl_part.c — partition changes and metadata records.
 *
 * Design note. Every partition change in the controller — fencing, controlled
 * shutdown, unclean-shutdown cleanup, unfence re-election, AlterPartition,
 * config changes — is expressed as a ctrl_change (target ISR, target ELR,
 * replicas to exclude from the ELR) and handed to ctrl_part_apply, which
 * runs Kafka's PartitionChangeBuilder steps in Kafka's order: ELR
 * maintenance, election, ELR/last-known-ELR fix-up for unclean elections,
 * ISR, leader recovery state, epochs. The new state is written to the
 * metadata log first; only when the record is durable does it replace the
 * in-memory state, get logged as a transition, and get pushed to the
 * partition's replicas. Replay applies the same records without pushing.
 *
 * Records carry whole entities, little-endian, bounds-checked on decode.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hw_assert.h"
#include "hw_bytes.h"
#include "hw_ctrl_int.h"
#include "hw_logging.h"

/* ---------------------------------------------------------------- id sets */

int ctrl_set_has(const hw_idset *s, int32_t id) { return hw_idset_has(s, id); }

void ctrl_set_remove(hw_idset *s, int32_t id)
{
	int j = 0;
	for (int i = 0; i < s->n; i++)
		if (s->id[i] != id)
			s->id[j++] = s->id[i];
	s->n = (uint8_t)j;
	for (; j < HW_MAX_RF; j++)
		s->id[j] = 0; /* unused slots stay zero: states compare (and push) byte-exactly */
}

int ctrl_set_eq(const hw_idset *a, const hw_idset *b)
{
	if (a->n != b->n)
		return 0;
	for (int i = 0; i < a->n; i++)
		if (a->id[i] != b->id[i])
			return 0;
	return 1;
}

static void set_add(hw_idset *s, int32_t id)
{
	if (!hw_idset_has(s, id) && s->n < HW_MAX_RF)
		s->id[s->n++] = id;
}

/* The replicas (in assignment order) that are in `in` and not in `out1`/`out2`. */
static hw_idset set_order(const hw_idset *replicas, const hw_idset *in, const hw_idset *out1,
			  const hw_idset *out2)
{
	hw_idset r = { 0 };
	for (int i = 0; i < replicas->n; i++) {
		int32_t id = replicas->id[i];
		if (hw_idset_has(in, id) && !(out1 && hw_idset_has(out1, id)) &&
		    !(out2 && hw_idset_has(out2, id)))
			r.id[r.n++] = id;
	}
	return r;
}

const char *hw_ctrl_idset_str(const hw_idset *s, char *buf, int len)
{
	int o = snprintf(buf, (size_t)len, "[");
	for (int i = 0; i < s->n && o < len; i++)
		o += snprintf(buf + o, (size_t)(len - o), "%s%d", i ? "," : "", s->id[i]);
	if (o < len)
		snprintf(buf + o, (size_t)(len - o), "]");
	return buf;
}

/* ------------------------------------------------------- change builder */

void ctrl_change_init(ctrl_change *ch, const ctrl_part *p, const char *reason)
{
	memset(ch, 0, sizeof(*ch));
	ch->target_isr = p->isr;
	ch->target_elr = p->elr;
	ch->reason = reason;
}

static int valid_leader(hw_ctrl *c, const ctrl_topic *t, uint32_t pi, const hw_idset *isr,
			const hw_idset *elr, int32_t r)
{
	return r >= 0 && (hw_idset_has(isr, r) || (isr->n == 0 && hw_idset_has(elr, r))) &&
	       ctrl_replica_acceptable(c, r, t, pi);
}

/* Kafka PartitionChangeBuilder.build(), restricted to what hiwater has (no
 * reassignment). The last known ELR holds the last leader from the moment
 * the partition first went leaderless (docs/replication.md#election-order;
 * Kafka's useLastKnownLeaderInBalancedRecovery), and that leader is elected —
 * as an unclean election — once ISR and ELR are both empty and it is
 * acceptable again. */
static int build(hw_ctrl *c, const ctrl_topic *t, const ctrl_part *p, const ctrl_change *ch,
		 ctrl_part *np, hw_ctrl_election *how)
{
	*np = *p;
	uint32_t pi = (uint32_t)(p - t->parts);
	hw_idset tisr = set_order(&p->replicas, &ch->target_isr, NULL, NULL);
	hw_idset telr = set_order(&p->replicas, &ch->target_elr, NULL, NULL);
	int elr_on = c->cfg.elr_enabled;

	/* 1. ELR maintenance (maybePopulateTargetElr). Effective min ISR as the
	 * broker uses it: min(min.insync.replicas, replicas). */
	if (elr_on) {
		int min_isr = t->info.min_insync_replicas;
		if (min_isr > p->replicas.n)
			min_isr = p->replicas.n;
		if (tisr.n >= min_isr) {
			telr = (hw_idset){ 0 };
		} else {
			hw_idset cand = telr;
			for (int i = 0; i < p->isr.n; i++)
				set_add(&cand, p->isr.id[i]);
			telr = set_order(&p->replicas, &cand, &tisr, &ch->unclean_shutdown);
		}
	}

	/* 2. Election (electAnyLeader). */
	int32_t leader = HW_NO_NODE;
	int unclean = 0;
	*how = HW_CTRL_ELECT_OFFLINE;
	if (ch->preferred && p->replicas.n && p->replicas.id[0] != p->leader &&
	    hw_idset_has(&tisr, p->replicas.id[0]) && valid_leader(c, t, pi, &tisr, &telr, p->replicas.id[0])) {
		leader = p->replicas.id[0];
		*how = HW_CTRL_ELECT_PREFERRED;
	} else if (valid_leader(c, t, pi, &tisr, &telr, p->leader)) {
		leader = p->leader;
		*how = HW_CTRL_ELECT_KEEP;
	} else {
		for (int i = 0; i < p->replicas.n && leader < 0; i++)
			if (valid_leader(c, t, pi, &tisr, &telr, p->replicas.id[i]))
				leader = p->replicas.id[i];
		if (leader >= 0) {
			*how = hw_idset_has(&tisr, leader) ? HW_CTRL_ELECT_ISR : HW_CTRL_ELECT_ELR;
		} else if (elr_on && !ch->clear_lke && tisr.n == 0 && telr.n == 0 && p->lke.n == 1 &&
			   ctrl_replica_acceptable(c, p->lke.id[0], t, pi)) {
			/* canElectLastKnownLeader: treated as unclean */
			leader = p->lke.id[0];
			unclean = 1;
			*how = HW_CTRL_ELECT_LAST_KNOWN_LEADER;
		} else if (t->info.unclean_leader_election) {
			for (int i = 0; i < p->replicas.n && leader < 0; i++)
				if (ctrl_replica_acceptable(c, p->replicas.id[i], t, pi))
					leader = p->replicas.id[i];
			if (leader >= 0) {
				unclean = 1;
				*how = HW_CTRL_ELECT_UNCLEAN;
			}
		}
	}
	int isr_set = 0;
	if (leader != p->leader) {
		if (hw_idset_has(&telr, leader)) {
			tisr = (hw_idset){ .n = 1, .id = { leader } };
			ctrl_set_remove(&telr, leader);
		}
		np->leader = leader;
		if (unclean) {
			np->isr = (hw_idset){ .n = 1, .id = { leader } };
			np->lrs = HW_LRS_RECOVERING;
			isr_set = 1;
		}
	} else if (*how != HW_CTRL_ELECT_KEEP) {
		*how = p->leader < 0 ? HW_CTRL_ELECT_OFFLINE : HW_CTRL_ELECT_NONE;
	}

	/* 3. ELR (maybeUpdateRecordElr): cleared by an unclean election or
	 * when ELR is off. */
	if (unclean || !elr_on)
		telr = (hw_idset){ 0 };
	np->elr = telr;

	/* 4. ISR: with ELR off the ISR never becomes empty. */
	if (!isr_set && (tisr.n > 0 || elr_on))
		np->isr = tisr;

	/* 5. Last known leader (maybeUpdateLastKnownLeader): recorded when the
	 * ISR first becomes empty, cleared once the partition has a leader. */
	np->lke = ch->clear_lke || !elr_on ? (hw_idset){ 0 } : p->lke;
	if (elr_on && np->isr.n == 0 && p->isr.n != 0 && p->leader >= 0 &&
	    !(p->lke.n == 1 && p->lke.id[0] == p->leader))
		np->lke = (hw_idset){ .n = 1, .id = { p->leader } };
	else if (np->leader >= 0)
		np->lke = (hw_idset){ 0 };
	if (ch->set_lrs && !unclean)
		np->lrs = ch->lrs;

	/* 6. Epochs. */
	if (np->leader != p->leader)
		np->leader_epoch = p->leader_epoch + 1;
	int changed = np->leader != p->leader || np->lrs != p->lrs ||
		      !ctrl_set_eq(&np->isr, &p->isr) || !ctrl_set_eq(&np->elr, &p->elr) ||
		      !ctrl_set_eq(&np->lke, &p->lke);
	if (changed)
		np->partition_epoch = p->partition_epoch + 1;

	HW_ASSERT(np->leader == HW_NO_NODE || hw_idset_has(&np->isr, np->leader));
	HW_ASSERT(np->leader_epoch >= p->leader_epoch);
	HW_ASSERT(np->partition_epoch >= p->partition_epoch);
	return changed;
}

/* ------------------------------------------------------------- records */

/* Record payloads: little-endian integers (hw_ctrl_mlog.h), written into a
 * growing buffer and read back bounds-checked (lib/bytes/hw_bytes.h). */
typedef hw_bytes_wr wbuf;
typedef hw_bytes_rd rbuf;

static void w_str(wbuf *w, const char *s)
{
	size_t len = strlen(s);
	hw_bytes_put_le(w, len, 2);
	hw_bytes_put(w, s, len);
}

static void w_set(wbuf *w, const hw_idset *s)
{
	hw_bytes_put_le(w, s->n, 1);
	for (int i = 0; i < s->n; i++)
		hw_bytes_put_le(w, (uint32_t)s->id[i], 4);
}

static void r_str(rbuf *r, char *dst, size_t cap)
{
	size_t len = (size_t)hw_bytes_le(r, 2);
	const uint8_t *q = r->bad || len >= cap ? NULL : hw_bytes_take(r, len);
	if (!q) {
		r->bad = 1;
		dst[0] = 0;
		return;
	}
	memcpy(dst, q, len);
	dst[len] = 0;
}

static hw_idset r_set(rbuf *r)
{
	hw_idset s = { 0 };
	unsigned n = (unsigned)hw_bytes_le(r, 1);
	if (n > HW_MAX_RF) {
		r->bad = 1;
		return s;
	}
	for (unsigned i = 0; i < n; i++)
		s.id[i] = (int32_t)(uint32_t)hw_bytes_le(r, 4);
	s.n = (uint8_t)n;
	return s;
}

#define MLOG_BACKOFF_MIN_NS (100 * 1000000LL)
#define MLOG_BACKOFF_MAX_NS (5000 * 1000000LL)

static int write_record(hw_ctrl *c, uint8_t type, wbuf *w)
{
	int rc = 0;
	int64_t now = c->clock->now_ns(c->clock);
	if (w->err) {
		rc = -ENOMEM;
	} else if (c->cfg.store && !c->replaying) {
		/* ZooKeeper mode: a refusal (no quorum, fenced) is answered by
		 * the caller; the store has its own session handling */
		rc = c->cfg.store->ops->write(c->cfg.store->ctx, type, w->buf, w->pos, c->records + 1);
	} else if (c->mlog && !c->replaying) {
		if (c->mlog_retry_ns && now < c->mlog_retry_ns) {
			/* backing off after a failed append: no write, no log line */
			free(w->buf);
			c->counters[HW_CTRL_C_MLOG_APPENDS_DEFERRED]++;
			return -EAGAIN;
		}
		rc = hw_mlog_append(c->mlog, type, w->buf, w->pos);
		if (rc < 0) {
			c->mlog_backoff_ns = c->mlog_backoff_ns ? c->mlog_backoff_ns * 2 : MLOG_BACKOFF_MIN_NS;
			if (c->mlog_backoff_ns > MLOG_BACKOFF_MAX_NS)
				c->mlog_backoff_ns = MLOG_BACKOFF_MAX_NS;
			c->mlog_retry_ns = now + c->mlog_backoff_ns;
			c->counters[HW_CTRL_C_MLOG_APPEND_FAILURES]++;
		} else {
			c->mlog_backoff_ns = c->mlog_retry_ns = 0;
		}
	}
	free(w->buf);
	if (rc < 0) {
		if (c->cfg.store)
			HW_LOG(ERROR, "ctrl", "metadata store write (%s) failed: %s", hw_ctrl_record_name(type),
			       strerror(-rc));
		else
			HW_LOG(ERROR, "ctrl", "metadata log append (%s) failed: %s; the change is refused, "
			       "next attempt in %lld ms", hw_ctrl_record_name(type), strerror(-rc),
			       (long long)(c->mlog_backoff_ns / 1000000));
		return rc;
	}
	c->records++;
	c->counters[HW_CTRL_C_MLOG_RECORDS_WRITTEN]++;
	return 0;
}

int ctrl_write_record(hw_ctrl *c, uint8_t type, hw_bytes_wr *w) { return write_record(c, type, w); }

int ctrl_persist_broker(hw_ctrl *c, const ctrl_broker *b)
{
	wbuf w = hw_bytes_wr_grow();
	hw_bytes_put_le(&w, (uint32_t)b->id, 4);
	hw_bytes_put_le(&w, (uint64_t)b->epoch, 8);
	hw_bytes_put_le(&w, b->incarnation, 8);
	hw_bytes_put_le(&w, b->state, 1);
	w_str(&w, b->control_ep);
	w_str(&w, b->data_ep);
	/* trailer (replayed iff present): the Kafka listeners */
	hw_bytes_put_le(&w, b->n_listeners, 2);
	for (int i = 0; i < b->n_listeners; i++) {
		w_str(&w, b->listeners[i].name);
		w_str(&w, b->listeners[i].value);
	}
	w_str(&w, b->rack); /* trailer (replayed iff present): broker.rack */
	return write_record(c, HW_CTRL_REC_BROKER, &w);
}

static void w_topic_config(wbuf *w, const ctrl_topic *t)
{
	hw_bytes_put_le(w, t->info.id, 4);
	hw_bytes_put_le(w, (uint16_t)t->info.min_insync_replicas, 2);
	hw_bytes_put_le(w, t->info.unclean_leader_election, 1);
}

void ctrl_w_tconf(wbuf *w, const hw_ctrl_topic_info *info)
{
	int n = __builtin_popcount(info->tc_set);
	hw_bytes_put_le(w, (uint64_t)n, 1);
	for (int i = 0; i < HW_TC_COUNT; i++)
		if (info->tc_set & (1u << i)) {
			w_str(w, hw_tc_def_of(i)->name);
			w_str(w, info->tc_value[i]);
		}
}

void ctrl_r_tconf(const hw_ctrl *c, rbuf *r, hw_ctrl_topic_info *info)
{
	unsigned n = (unsigned)hw_bytes_le(r, 1);
	if (n > HW_TC_COUNT)
		r->bad = 1;
	for (unsigned i = 0; i < n && !r->bad; i++) {
		char key[HW_CONFIG_KEY_MAX], value[HW_CONFIG_VALUE_MAX], why[HW_ERRMSG_MAX];
		r_str(r, key, sizeof(key));
		r_str(r, value, sizeof(value));
		int id = hw_tc_lookup(key);
		if (r->bad || id < 0 || (info->tc_set & (1u << id)) ||
		    ctrl_tc_set(c, info, key, value, why, sizeof(why)) < 0)
			r->bad = 1;
	}
}

int ctrl_record_topic_configs(const hw_ctrl *c, uint8_t type, const uint8_t *payload, size_t len,
			      hw_ctrl_topic_info *out)
{
	rbuf r = hw_bytes_rd_init(payload, len);
	memset(out, 0, sizeof(*out));
	out->id = (uint32_t)hw_bytes_le(&r, 4);
	(void)hw_bytes_le(&r, 2 + 1); /* min ISR, unclean: mirrored by the configs */
	if (type == HW_CTRL_REC_TOPIC) {
		r_str(&r, out->name, sizeof(out->name));
		uint32_t np = (uint32_t)hw_bytes_le(&r, 4);
		(void)hw_bytes_le(&r, 2);
		if (np > HW_CTRL_MAX_PARTITIONS)
			r.bad = 1;
		for (uint32_t i = 0; i < np && !r.bad; i++)
			(void)r_set(&r);
	} else if (type != HW_CTRL_REC_TOPIC_CONFIG) {
		return -EINVAL;
	}
	if (!r.bad && r.pos < r.len) {
		char th[HW_CONFIG_VALUE_MAX];
		r_str(&r, th, sizeof(th));
		r_str(&r, th, sizeof(th));
	}
	if (!r.bad && r.pos < r.len)
		ctrl_r_tconf(c, &r, out);
	if (!r.bad && r.pos < r.len && type == HW_CTRL_REC_TOPIC_CONFIG)
		r_str(&r, out->name, sizeof(out->name));
	return r.bad ? -EBADMSG : 0;
}

int ctrl_persist_topic(hw_ctrl *c, const ctrl_topic *t)
{
	wbuf w = hw_bytes_wr_grow();
	w_topic_config(&w, t);
	w_str(&w, t->info.name);
	hw_bytes_put_le(&w, (uint32_t)t->info.partitions, 4);
	hw_bytes_put_le(&w, (uint16_t)t->info.replication_factor, 2);
	for (int i = 0; i < t->info.partitions; i++)
		w_set(&w, &t->parts[i].replicas);
	w_str(&w, t->info.leader_throttled_replicas);   /* optional trailer */
	w_str(&w, t->info.follower_throttled_replicas);
	ctrl_w_tconf(&w, &t->info);                     /* optional trailer */
	return write_record(c, HW_CTRL_REC_TOPIC, &w);
}

int ctrl_persist_topic_config(hw_ctrl *c, const ctrl_topic *t)
{
	wbuf w = hw_bytes_wr_grow();
	w_topic_config(&w, t);
	w_str(&w, t->info.leader_throttled_replicas);   /* optional trailer */
	w_str(&w, t->info.follower_throttled_replicas);
	ctrl_w_tconf(&w, &t->info);                     /* optional trailer: configs, */
	w_str(&w, t->info.name);                        /* then the name (the ZooKeeper mirror) */
	return write_record(c, HW_CTRL_REC_TOPIC_CONFIG, &w);
}

static int persist_part(hw_ctrl *c, const ctrl_topic *t, uint32_t pi, const ctrl_part *p)
{
	wbuf w = hw_bytes_wr_grow();
	hw_bytes_put_le(&w, t->info.id, 4);
	hw_bytes_put_le(&w, pi, 4);
	hw_bytes_put_le(&w, (uint32_t)p->leader, 4);
	hw_bytes_put_le(&w, (uint32_t)p->leader_epoch, 4);
	hw_bytes_put_le(&w, (uint32_t)p->partition_epoch, 4);
	hw_bytes_put_le(&w, p->lrs, 1);
	w_set(&w, &p->isr);
	w_set(&w, &p->elr);
	w_set(&w, &p->lke);
	return write_record(c, HW_CTRL_REC_PARTITION, &w);
}

static int subset(const hw_idset *s, const hw_idset *of)
{
	for (int i = 0; i < s->n; i++)
		if (!hw_idset_has(of, s->id[i]))
			return 0;
	return 1;
}

/* The throttled-replicas trailer of TOPIC / TOPIC_CONFIG records (absent
 * in records written before the throttle existed: both stay ""). */
static void r_throttle(rbuf *r, hw_ctrl_topic_info *info)
{
	if (r->bad || r->pos == r->len)
		return;
	r_str(r, info->leader_throttled_replicas, sizeof(info->leader_throttled_replicas));
	r_str(r, info->follower_throttled_replicas, sizeof(info->follower_throttled_replicas));
	if (!r->bad && (hw_ctrl_throttled_replicas_resolve(info->leader_throttled_replicas, 0, NULL, NULL) ||
			hw_ctrl_throttled_replicas_resolve(info->follower_throttled_replicas, 0, NULL, NULL)))
		r->bad = 1;
}

/* Replay one record. Anything that passed the checksum but does not decode
 * or refers to unknown entities is -EBADMSG: the file is not trustworthy. */
int ctrl_replay(void *arg, uint8_t type, const uint8_t *payload, size_t len)
{
	hw_ctrl *c = arg;
	rbuf r = hw_bytes_rd_init(payload, len);
	c->records++;
	c->counters[HW_CTRL_C_MLOG_RECORDS_REPLAYED]++;
	switch (type) {
	case HW_CTRL_REC_BROKER: {
		ctrl_broker b = { 0 };
		b.id = (int32_t)(uint32_t)hw_bytes_le(&r, 4);
		b.epoch = (int64_t)hw_bytes_le(&r, 8);
		b.incarnation = hw_bytes_le(&r, 8);
		b.state = (uint8_t)hw_bytes_le(&r, 1);
		r_str(&r, b.control_ep, sizeof(b.control_ep));
		r_str(&r, b.data_ep, sizeof(b.data_ep));
		if (!r.bad && r.pos < r.len) {
			b.n_listeners = (uint16_t)hw_bytes_le(&r, 2);
			if (b.n_listeners > HW_MAX_LISTENERS)
				r.bad = 1;
			for (int i = 0; !r.bad && i < b.n_listeners; i++) {
				r_str(&r, b.listeners[i].name, sizeof(b.listeners[i].name));
				r_str(&r, b.listeners[i].value, sizeof(b.listeners[i].value));
			}
		}
		if (!r.bad && r.pos < r.len)
			r_str(&r, b.rack, sizeof(b.rack));
		if (r.bad || b.state >= HW_CTRL_BROKER_STATE_COUNT || b.id < 0)
			return -EBADMSG;
		ctrl_broker *e = ctrl_broker_find(c, b.id);
		if (!e) {
			if (c->n_brokers == HW_CTRL_MAX_BROKERS)
				return -EBADMSG;
			e = &c->brokers[c->n_brokers++];
		}
		*e = b;
		return 0;
	}
	case HW_CTRL_REC_TOPIC: {
		ctrl_topic t = { 0 };
		t.info.id = (uint32_t)hw_bytes_le(&r, 4);
		t.info.min_insync_replicas = (int16_t)(uint16_t)hw_bytes_le(&r, 2);
		t.info.unclean_leader_election = (uint8_t)hw_bytes_le(&r, 1);
		r_str(&r, t.info.name, sizeof(t.info.name));
		t.info.partitions = (int32_t)(uint32_t)hw_bytes_le(&r, 4);
		t.info.replication_factor = (int16_t)(uint16_t)hw_bytes_le(&r, 2);
		if (r.bad || t.info.partitions < 1 || t.info.partitions > HW_CTRL_MAX_PARTITIONS ||
		    ctrl_topic_by_id(c, t.info.id))
			return -EBADMSG;
		t.parts = calloc((size_t)t.info.partitions, sizeof(*t.parts));
		if (!t.parts)
			return -ENOMEM;
		for (int i = 0; i < t.info.partitions; i++) {
			ctrl_part *p = &t.parts[i];
			p->replicas = r_set(&r);
			p->isr = p->replicas;
			p->leader = p->replicas.n ? p->replicas.id[0] : HW_NO_NODE;
		}
		r_throttle(&r, &t.info);
		if (!r.bad && r.pos < r.len)
			ctrl_r_tconf(c, &r, &t.info);
		if (r.bad || r.pos != r.len) {
			free(t.parts);
			return -EBADMSG;
		}
		int rc = ctrl_topic_add(c, &t);
		if (rc < 0)
			free(t.parts);
		return rc;
	}
	case HW_CTRL_REC_TOPIC_CONFIG: {
		uint32_t id = (uint32_t)hw_bytes_le(&r, 4);
		int16_t min_isr = (int16_t)(uint16_t)hw_bytes_le(&r, 2);
		uint8_t unclean = (uint8_t)hw_bytes_le(&r, 1);
		hw_ctrl_topic_info th = { .name = "" };
		r_throttle(&r, &th);
		int tconf = !r.bad && r.pos < r.len;
		if (tconf)
			ctrl_r_tconf(c, &r, &th);
		ctrl_topic *t = ctrl_topic_by_id(c, id);
		if (tconf && !r.bad && r.pos < r.len) {
			r_str(&r, th.name, sizeof(th.name));
			if (!r.bad && t && strcmp(th.name, t->info.name))
				r.bad = 1;
		}
		if (r.bad || r.pos != r.len || !t)
			return -EBADMSG;
		t->info.min_insync_replicas = min_isr;
		t->info.unclean_leader_election = unclean;
		t->info.tc_set = th.tc_set;
		memcpy(t->info.tc_value, th.tc_value, sizeof(th.tc_value));
		memcpy(t->info.leader_throttled_replicas, th.leader_throttled_replicas,
		       sizeof(th.leader_throttled_replicas));
		memcpy(t->info.follower_throttled_replicas, th.follower_throttled_replicas,
		       sizeof(th.follower_throttled_replicas));
		return 0;
	}
	case HW_CTRL_REC_TOPIC_DELETE:
		return ctrl_replay_delete(c, payload, len);
	case HW_CTRL_REC_PRODUCER_IDS:
		return ctrl_replay_producer_ids(c, payload, len);
	case HW_CTRL_REC_BASE: {
		uint64_t base = hw_bytes_le(&r, 8);
		if (r.bad || base < c->records - 1)
			return -EBADMSG;
		c->records = base; /* epochs keep growing across compactions */
		return 0;
	}
	case HW_CTRL_REC_PARTITION: {
		uint32_t id = (uint32_t)hw_bytes_le(&r, 4);
		uint32_t pi = (uint32_t)hw_bytes_le(&r, 4);
		ctrl_topic *t = ctrl_topic_by_id(c, id);
		if (r.bad || !t || pi >= (uint32_t)t->info.partitions)
			return -EBADMSG;
		ctrl_part p = t->parts[pi];
		p.leader = (int32_t)(uint32_t)hw_bytes_le(&r, 4);
		p.leader_epoch = (int32_t)(uint32_t)hw_bytes_le(&r, 4);
		p.partition_epoch = (int32_t)(uint32_t)hw_bytes_le(&r, 4);
		p.lrs = (uint8_t)hw_bytes_le(&r, 1);
		p.isr = r_set(&r);
		p.elr = r_set(&r);
		p.lke = r_set(&r);
		if (r.bad || !subset(&p.isr, &p.replicas) || !subset(&p.elr, &p.replicas) ||
		    (p.leader != HW_NO_NODE && !hw_idset_has(&p.isr, p.leader)))
			return -EBADMSG;
		t->parts[pi] = p;
		return 0;
	}
	}
	return -EBADMSG;
}

static int replay_nothing(void *arg, uint8_t type, const uint8_t *payload, size_t len)
{
	(void)arg;
	(void)type;
	(void)payload;
	(void)len;
	return 0;
}

int ctrl_compact(hw_ctrl *c)
{
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.compact", c->path);
	unlink(tmp);
	hw_mlog *nl = NULL;
	uint64_t n0, t0;
	int rc = hw_mlog_open(tmp, 0, replay_nothing, NULL, &nl, &n0, &t0);
	if (rc)
		return rc < 0 ? rc : -EIO;
	hw_mlog *old = c->mlog;
	uint64_t base = c->records, before = hw_mlog_size(old);
	c->mlog = nl;
	wbuf w = hw_bytes_wr_grow();
	hw_bytes_put_le(&w, base, 8);
	rc = write_record(c, HW_CTRL_REC_BASE, &w);
	uint64_t k = 0;
	for (int i = 0; rc == 0 && i < c->n_brokers; i++, k++)
		rc = ctrl_persist_broker(c, &c->brokers[i]);
	for (int t = 0; rc == 0 && t < c->n_topics; t++) {
		ctrl_topic *tp = &c->topics[t];
		rc = ctrl_persist_topic(c, tp);
		k++;
		for (int p = 0; rc == 0 && p < tp->info.partitions; p++, k++)
			rc = persist_part(c, tp, (uint32_t)p, &tp->parts[p]);
	}
	if (rc == 0) {
		int ki = ctrl_compact_ids(c);
		rc = ki < 0 ? ki : 0;
		k += ki > 0 ? (uint64_t)ki : 0;
	}
	if (rc == 0)
		rc = hw_mlog_sync(nl);
	if (rc == 0)
		rc = hw_mlog_install(tmp, c->path);
	hw_mlog_close(nl);
	c->mlog = old;
	c->records = base + k;
	if (rc < 0) {
		unlink(tmp);
		HW_LOG(WARN, "ctrl", "metadata log compaction failed: %s (keeping the old log)", strerror(-rc));
		c->records = base;
		return rc;
	}
	/* Switch to the compacted file (its content is what we just wrote). */
	hw_mlog_close(old);
	c->mlog = NULL;
	rc = hw_mlog_open(c->path, c->cfg.fsync, replay_nothing, NULL, &c->mlog, &n0, &t0);
	if (rc)
		return rc < 0 ? rc : -EIO;
	HW_LOG(INFO, "ctrl", "metadata log compacted: %llu -> %llu bytes, %llu records (record base %llu)",
	       (unsigned long long)before, (unsigned long long)hw_mlog_size(c->mlog),
	       (unsigned long long)k + 1, (unsigned long long)base);
	return 0;
}

/* ----------------------------------------------------------- apply/push */

void ctrl_part_to_state(const ctrl_topic *t, uint32_t pi, hw_partition_state *out)
{
	const ctrl_part *p = &t->parts[pi];
	memset(out, 0, sizeof(*out));
	out->tp = (hw_tp){ .topic_id = t->info.id, .partition = pi };
	out->leader = p->leader;
	out->leader_epoch = p->leader_epoch;
	out->partition_epoch = p->partition_epoch;
	out->replicas = p->replicas;
	out->isr = p->isr;
	out->elr = p->elr;
	out->last_known_elr = p->lke;
	out->leader_recovery_state = p->lrs;
	out->min_insync_replicas = t->info.min_insync_replicas;
	out->unclean_leader_election = t->info.unclean_leader_election;
	snprintf(out->topic, sizeof(out->topic), "%s", t->info.name);
	ctrl_tc_to_state(&t->info, &out->tconf);
	/* validated when set: a failure leaves the set empty (unthrottled) */
	hw_ctrl_throttled_replicas_resolve(t->info.leader_throttled_replicas, pi, &p->replicas,
					   &out->leader_throttled);
	hw_ctrl_throttled_replicas_resolve(t->info.follower_throttled_replicas, pi, &p->replicas,
					   &out->follower_throttled);
}

void ctrl_part_push(hw_ctrl *c, const ctrl_topic *t, uint32_t pi, int32_t only)
{
	if (c->replaying || !c->net)
		return;
	hw_msg m = { .type = HW_MSG_PARTITION_STATE, .src = c->cfg.node_id };
	ctrl_part_to_state(t, pi, &m.u.pstate);
	m.u.pstate.controller_epoch = c->cfg.controller_epoch;
	const hw_idset *rs = &t->parts[pi].replicas;
	/* each replica's registered broker epoch: the leader refuses a
	 * follower fetch from an older incarnation (docs/security.md
	 * "Sender identity") */
	m.u.pstate.n_replica_epochs = (uint8_t)rs->n;
	for (int i = 0; i < rs->n; i++) {
		const ctrl_broker *b = ctrl_broker_find(c, rs->id[i]);
		m.u.pstate.replica_epochs[i] = b && b->state != HW_CTRL_BROKER_UNREGISTERED ? b->epoch : -1;
	}
	for (int i = 0; i < rs->n; i++) {
		if (only >= 0 && rs->id[i] != only)
			continue;
		m.dst = rs->id[i];
		if (hw_net_send(c->net, &m) < 0)
			c->counters[HW_CTRL_C_PUSH_SEND_FAILED]++;
		else
			c->counters[HW_CTRL_C_PARTITION_STATE_PUSHED]++;
	}
}

int ctrl_part_apply(hw_ctrl *c, ctrl_topic *t, uint32_t pi, const ctrl_change *ch,
		    hw_ctrl_election *election)
{
	ctrl_part *p = &t->parts[pi];
	ctrl_part np;
	hw_ctrl_election how;
	int changed = build(c, t, p, ch, &np, &how);
	if (election)
		*election = how;
	if (!changed)
		return 0;
	int rc = persist_part(c, t, pi, &np);
	if (rc < 0)
		return rc;
	char a[48], b[48], e1[48], e2[48], k1[48], k2[48];
	HW_LOG(INFO, "ctrl",
	       "%s-%u: leader %d -> %d (%s, epoch %d -> %d), isr %s -> %s, elr %s -> %s, "
	       "last known elr %s -> %s, recovery %s -> %s, partition epoch %d -> %d (%s)",
	       t->info.name, pi, p->leader, np.leader, hw_ctrl_election_name(how), p->leader_epoch,
	       np.leader_epoch, hw_ctrl_idset_str(&p->isr, a, sizeof(a)),
	       hw_ctrl_idset_str(&np.isr, b, sizeof(b)), hw_ctrl_idset_str(&p->elr, e1, sizeof(e1)),
	       hw_ctrl_idset_str(&np.elr, e2, sizeof(e2)), hw_ctrl_idset_str(&p->lke, k1, sizeof(k1)),
	       hw_ctrl_idset_str(&np.lke, k2, sizeof(k2)), hw_ctrl_lrs_name(p->lrs),
	       hw_ctrl_lrs_name(np.lrs), p->partition_epoch, np.partition_epoch,
	       ch->reason ? ch->reason : "?");
	if (np.leader != p->leader) {
		if (how == HW_CTRL_ELECT_ISR)
			c->counters[HW_CTRL_C_ELECTIONS_CLEAN]++;
		else if (how == HW_CTRL_ELECT_ELR)
			c->counters[HW_CTRL_C_ELECTIONS_ELR]++;
		else if (how == HW_CTRL_ELECT_UNCLEAN || how == HW_CTRL_ELECT_LAST_KNOWN_LEADER)
			c->counters[HW_CTRL_C_ELECTIONS_UNCLEAN]++;
		else if (how == HW_CTRL_ELECT_PREFERRED)
			c->counters[HW_CTRL_C_ELECTIONS_PREFERRED]++;
		if (np.leader == HW_NO_NODE)
			c->counters[HW_CTRL_C_PARTITIONS_OFFLINE_TRANSITIONS]++;
	}
	*p = np;
	ctrl_part_push(c, t, pi, -1);
	return 1;
}
