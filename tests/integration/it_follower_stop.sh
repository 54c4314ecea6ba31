#!/usr/bin/env bash
# it_follower_stop.sh TRANSPORT — a clean stop (controlled shutdown) of a
# follower under acks=all load must not stall writes: the controller drops
# it from the ISR at once (ISR 2 >= min ISR 2), and a fetch of it that was
# still in flight must not make it "caught up" again for the leader's HW
# (Kafka's isReplicaIsrEligible). Regression: that fetch held the HW for
# up to replica.lag.time.max.ms (here 5 s), i.e. the whole time it was down.
source "$(dirname "$0")/it_lib.sh"
source "$(dirname "$0")/it_failover_lib.sh"
transport=${1:?transport}

it_up "$transport" --config broker.session.timeout.ms=3000 \
	--config broker.heartbeat.interval.ms=300 --config replica.lag.time.max.ms=5000
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
leader=$(it_field t1 0 Leader)
f=$(it_field t1 0 Replicas | tr ',' '\n' | grep -vx "$leader" | head -1)
hw bench --topic t1 --acks all --rate 400 --record-size 100 --batch-size 8 --duration 7s \
	--warmup 0 --verify --no-progress --timeout 300ms >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" &
bench=$!; IT_PIDS+=($bench)
it_load_flowing t1 0
hw cluster stop "$f" -q || it_fail "cluster stop $f"
sleep 2.5
hw cluster start "$f" -q || it_fail "cluster start $f"
rc=0; wait "$bench" || rc=$?
it_bench_check "$IT_DIR/bench.out" "$IT_DIR/bench.err" $rc
max_us=$(awk '$1 == "max" { print $2; exit }' "$IT_DIR/bench.out")
it_log "follower $f stopped for 2.5 s: max publish latency $max_us us"
awk -v m="$max_us" 'BEGIN { exit !(m > 0 && m < 1500000) }' ||
	it_fail "acks=all stalled $max_us us while a cleanly stopped follower was down"
it_final_check t1 0
it_log "PASS"
