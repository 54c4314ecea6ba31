#!/usr/bin/env bash
# it_metrics.sh TRANSPORT — issue 6 "Operations surface": every node serves
# Prometheus text on a real HTTP listener, `hiwater metrics` prints it, and
# the gauges an operator alerts on move with the cluster: under-replicated
# 0 -> 1 on the leader when a follower's broker is fenced, the controller
# counts the fenced broker, ISR shrinks are counted, a dead node's endpoint
# makes `hiwater metrics` exit 3.
source "$(dirname "$0")/it_lib.sh"
transport=${1:?transport}

it_up "$transport" --config broker.session.timeout.ms=2000 --config broker.heartbeat.interval.ms=500
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
seq 1 50 | hw produce --topic t1 --acks all -q >/dev/null 2>&1 || it_fail "produce"
leader=$(it_field t1 0 Leader)
follower=$(it_field t1 0 Replicas | tr ',' '\n' | grep -vx "$leader" | head -1)

# metric VALUE of NAME (exact series, labels included) on NODE
metric() { hw metrics "$1" 2>/dev/null | awk -v k="$2" '$1 == k { print $2; exit }'; }

all=$(hw metrics) || it_fail "hiwater metrics exited $?"
for name in hiwater_under_replicated_partitions hiwater_under_min_isr_partitions \
	hiwater_offline_partitions hiwater_isr_shrinks_total hiwater_isr_expands_total \
	hiwater_partition_follower_max_lag_offsets hiwater_reactor_busy_iterations_total \
	hiwater_reactor_idle_iterations_total \
	hiwater_produce_requests_total hiwater_follower_fetch_requests_total; do
	grep -q "^node=[0-9]* $name[ {]" <<<"$all" || it_fail "no $name in \`hiwater metrics\`"
done
# jemalloc's gauges exist where hiwaterd links jemalloc (not in sanitizer
# builds, whose allocator owns malloc).
if ldd "$HIWATER_BIN_DIR/hiwaterd" | grep -q libjemalloc; then
	grep -q "^node=1 hiwater_jemalloc_allocated_bytes [1-9]" <<<"$all" ||
		it_fail "hiwaterd links jemalloc but reports no allocated bytes"
fi
[ "$(metric "$leader" hiwater_under_replicated_partitions)" = 0 ] || it_fail "leader under-replicated before any failure"
[ "$(metric "$leader" hiwater_produce_requests_total)" -gt 0 ] || it_fail "leader counted no produce requests"
[ "$(metric 0 hiwater_offline_partitions)" = 0 ] || it_fail "controller reports offline partitions"

hw cluster kill "$follower" -q || it_fail "cluster kill"
it_wait 10 bash -c "[ \"\$($HIWATER metrics $leader --dir $IT_DIR/c 2>/dev/null | awk '\$1==\"hiwater_under_replicated_partitions\"{print \$2}')\" = 1 ]" ||
	it_fail "leader's UnderReplicatedPartitions did not become 1 after killing $follower"
[ "$(metric 0 'hiwater_controller_brokers{state="FENCED"}')" = 1 ] || it_fail "controller does not count the fenced broker"
set +e
hw metrics "$follower" >/dev/null 2>&1
rc=$?
set -e
[ "$rc" = 3 ] || it_fail "metrics of a dead node exited $rc, want 3"
it_log "metrics: under-replicated 0 -> 1 on leader $leader after killing $follower; dead node -> exit 3"
