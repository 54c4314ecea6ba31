/* hw_broker_view.c — METADATA / DESCRIBE_TOPIC answers (hw_broker_view.h). */
#include "hw_broker_view.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hw_err.h"

static hw_broker_view_part *push(hw_broker_view *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		hw_broker_view_part *nv = realloc(v->v, cap * sizeof(*nv));
		if (!nv)
			return NULL;
		v->v = nv;
		v->cap = cap;
	}
	hw_broker_view_part *p = &v->v[v->n++];
	memset(p, 0, sizeof(*p));
	return p;
}

int hw_broker_view_add_controller(hw_broker_view *v, const hw_ctrl *ctrl)
{
	hw_ctrl_topic_info ti;
	for (int t = 0; hw_ctrl_topic_at(ctrl, t, &ti) == 0; t++)
		for (int p = 0; p < ti.partitions; p++) {
			hw_partition_state s;
			if (hw_ctrl_partition(ctrl, (hw_tp){ ti.id, (uint32_t)p }, &s))
				continue;
			hw_broker_view_part *vp = push(v);
			if (!vp)
				return -ENOMEM;
			snprintf(vp->topic, sizeof(vp->topic), "%s", ti.name);
			vp->topic_id = ti.id;
			vp->pm.partition = (uint32_t)p;
			vp->pm.leader = s.leader;
			vp->pm.leader_epoch = s.leader_epoch;
			vp->pm.partition_epoch = s.partition_epoch;
			vp->pm.leader_recovery_state = s.leader_recovery_state;
			vp->pm.replicas = s.replicas;
			vp->pm.isr = s.isr;
			vp->pm.elr = s.elr;
			vp->pm.last_known_elr = s.last_known_elr;
			vp->pm.high_watermark = vp->pm.log_end_offset = vp->pm.log_start_offset = -1;
		}
	return 0;
}

int hw_broker_view_add_replicas(hw_broker_view *v, const hw_rm_part_info *infos, size_t np)
{
	for (size_t i = 0; i < np; i++) {
		const hw_rm_part_info *info = &infos[i];
		hw_tp tp = info->tp;
		hw_broker_view_part *vp = NULL;
		for (size_t j = 0; j < v->n && !vp; j++)
			if (v->v[j].topic_id == tp.topic_id && v->v[j].pm.partition == tp.partition)
				vp = &v->v[j];
		if (!vp) {
			if (!(vp = push(v)))
				return -ENOMEM;
			snprintf(vp->topic, sizeof(vp->topic), "%s", info->topic);
			vp->topic_id = tp.topic_id;
			vp->pm.partition = tp.partition;
			vp->pm.leader = info->leader;
			vp->pm.leader_epoch = info->leader_epoch;
			vp->pm.partition_epoch = info->partition_epoch;
			vp->pm.replicas = info->replicas;
			vp->pm.isr = info->isr;
			vp->pm.elr = info->elr;
			vp->pm.last_known_elr = info->last_known_elr;
		}
		vp->pm.high_watermark = info->hw;
		vp->pm.log_end_offset = info->leo;
		vp->pm.log_start_offset = info->log_start;
		vp->pm.error = info->role == HW_PART_OFFLINE ? HW_ERR_LEADER_NOT_AVAILABLE : HW_ERR_NONE;
	}
	return 0;
}

void hw_broker_view_free(hw_broker_view *v)
{
	free(v->v);
	memset(v, 0, sizeof(*v));
}

static int cmp_part(const void *a, const void *b)
{
	const hw_broker_view_part *x = a, *y = b;
	int c = strcmp(x->topic, y->topic);
	if (c)
		return c;
	return (x->pm.partition > y->pm.partition) - (x->pm.partition < y->pm.partition);
}

/* Group the sorted view into topics: every one (n_names 0) or the named
 * ones in request order, unknown names marked. */
static void group_topics(const hw_broker_view *v, hw_partition_meta *pm, hw_topic_meta *tm, uint16_t n_names,
			 const hw_topic_name *names)
{
	for (size_t i = 0; i < v->n; i++)
		pm[i] = v->v[i].pm;
	size_t k = 0;
	for (size_t i = 0; i < v->n;) {
		size_t j = i;
		while (j < v->n && !strcmp(v->v[j].topic, v->v[i].topic))
			j++;
		int want = !n_names;
		size_t slot = k;
		for (uint16_t q = 0; q < n_names; q++)
			if (!strncmp(names[q].s, v->v[i].topic, sizeof(names[q].s))) {
				want = 1;
				slot = q;
			}
		if (want) {
			snprintf(tm[slot].name, sizeof(tm[slot].name), "%s", v->v[i].topic);
			tm[slot].topic_id = v->v[i].topic_id;
			tm[slot].n_parts = (uint32_t)(j - i);
			tm[slot].parts = &pm[i];
			if (!n_names)
				k++;
		}
		i = j;
	}
	for (uint16_t q = 0; q < n_names; q++)
		if (!tm[q].n_parts) {
			snprintf(tm[q].name, sizeof(tm[q].name), "%.*s", (int)sizeof(tm[q].name) - 1, names[q].s);
			tm[q].error = HW_ERR_UNKNOWN_TOPIC_OR_PARTITION;
		}
}

int hw_broker_view_answer(hw_broker_view *v, const hw_broker_view_src *src, const hw_msg *m, uint16_t n_names,
			  const hw_topic_name *names, hw_net *net)
{
	if (src->n_brokers < 0 || src->n_brokers > HW_BROKER_VIEW_MAX_BROKERS)
		return -EINVAL;
	qsort(v->v, v->n, sizeof(*v->v), cmp_part);
	size_t n_topics = 0;
	for (size_t i = 0; i < v->n; i++)
		if (i == 0 || strcmp(v->v[i].topic, v->v[i - 1].topic))
			n_topics++;
	size_t nt = n_names ? n_names : n_topics;
	hw_topic_meta *tm = calloc(nt ? nt : 1, sizeof(*tm));
	hw_partition_meta *pm = calloc(v->n ? v->n : 1, sizeof(*pm));
	int rc = -ENOMEM;
	if (!tm || !pm)
		goto out;
	group_topics(v, pm, tm, n_names, names);
	hw_msg out = { .src = src->node_id, .dst = m->src, .correlation_id = m->correlation_id };
	/* the brokers, and the controller's control endpoint for a client
	 * that bootstrapped here (--bootstrap-server): an entry with the
	 * controller's id and no data endpoint, unless it is a broker too */
	hw_broker_info bl[HW_BROKER_VIEW_MAX_BROKERS + 1];
	int nb = 0, have_ctrl = 0;
	for (int i = 0; i < src->n_brokers; i++) {
		bl[nb++] = src->brokers[i];
		have_ctrl |= src->brokers[i].id == src->controller_id;
	}
	if (!have_ctrl) {
		memset(&bl[nb], 0, sizeof(bl[nb]));
		bl[nb].id = src->controller_id;
		bl[nb].broker_epoch = -1;
		bl[nb].state = HW_BROKER_UNKNOWN;
		snprintf(bl[nb].control_ep, sizeof(bl[nb].control_ep), "%s", src->controller_ep);
		nb++;
	}
	hw_metadata_resp mr;
	hw_describe_topic_resp dr;
	if (m->type == HW_MSG_METADATA) {
		mr = (hw_metadata_resp){ .controller_id = src->controller_id, .metadata_offset = -1,
					 .n_brokers = (uint16_t)nb, .brokers = bl,
					 .n_topics = (uint16_t)nt, .topics = tm,
					 .controller_epoch = src->controller_epoch };
		out.type = HW_MSG_METADATA_RESP;
		out.u.other = &mr;
	} else {
		dr = (hw_describe_topic_resp){ .responder_id = src->node_id, .n_topics = (uint16_t)nt,
					       .topics = tm };
		out.type = HW_MSG_DESCRIBE_TOPIC_RESP;
		out.u.other = &dr;
	}
	rc = hw_net_send(net, &out);
out:
	free(tm);
	free(pm);
	return rc;
}
