#!/usr/bin/env bash
# it_session_fence.sh TRANSPORT — docs/scenarios.md#the-isr-after-a-broker-kill:
# RF 3, min ISR
# 2, a follower is SIGKILLed under acks=all load. The controller fences it
# after broker.session.timeout.ms without heartbeats and drops it from the
# ISR then — not after replica.lag.time.max.ms, set 10x longer here. The
# measured kill -> ISR shrink time over the session timeout must lie in
# [0.8, 2]. Restarted, it rejoins the ISR within a few seconds. Ends with
# bench --verify and the common final check (it_final_check).
source "$(dirname "$0")/it_lib.sh"
source "$(dirname "$0")/it_failover_lib.sh"
transport=${1:?transport}
session_ms=3000

it_up "$transport" --config broker.session.timeout.ms=$session_ms \
	--config broker.heartbeat.interval.ms=300 --config replica.lag.time.max.ms=30000
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
leader=$(it_field t1 0 Leader)
victim=$(it_field t1 0 Replicas | tr ',' '\n' | grep -vx "$leader" | tail -1)
it_log "leader $leader, SIGKILL of follower $victim under acks=all load"

hw bench --topic t1 --acks all --rate 500 --record-size 100 --batch-size 8 --duration 12s \
	--warmup 0 --verify --no-progress --timeout 300ms >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" &
bench=$!; IT_PIDS+=($bench)
it_load_flowing t1 0
t0=$(it_ms)
hw cluster kill "$victim" -q || it_fail "cluster kill"
it_wait 10 isr_lacks t1 0 "$victim" || it_fail "killed $victim still in the ISR: $(hw topic describe t1)"
dt=$(( $(it_ms) - t0 ))
ratio=$(awk -v a=$dt -v b=$session_ms 'BEGIN { printf "%.2f", a / b }')
it_log "ISR dropped $victim after $dt ms: $ratio x broker.session.timeout.ms ($session_ms ms)"
awk -v r="$ratio" 'BEGIN { exit !(r >= 0.8 && r <= 2.0) }' ||
	it_fail "ISR shrink after $dt ms, ratio $ratio to the session timeout outside [0.8, 2]"
hw1=$(it_field t1 0 HW)
it_wait 5 it_hw_past t1 0 "$hw1" || it_fail "HW stuck at $hw1 with ISR $(it_field t1 0 Isr) >= min ISR"

t1=$(it_ms)
hw cluster start "$victim" -q || it_fail "cluster start $victim"
it_wait 5 isr_has t1 0 "$victim" || it_fail "restarted $victim not back in the ISR in 5 s: $(hw topic describe t1)"
it_log "$victim back in the ISR $(( $(it_ms) - t1 )) ms after the restart: Isr $(it_field t1 0 Isr)"

rc=0; wait "$bench" || rc=$?
it_bench_check "$IT_DIR/bench.out" "$IT_DIR/bench.err" $rc
it_final_check t1 0
it_log "PASS"
