#!/usr/bin/env bash
# it_rolling_restart.sh TRANSPORT — docs/scenarios.md#the-failover-story: a
# rolling restart of all three
# brokers, one at a time (SIGTERM: controlled shutdown moves leadership away
# first; then start and wait until the ISR is full again), under continuous
# acks=all load on 2 partitions. Nothing acknowledged is lost (bench
# --verify, final check on both partitions), and writes never stop longer
# than broker.session.timeout.ms: the load is open loop with latency from
# each record's intended send time, so its max publish latency bounds the
# longest write stall; it must stay below the session timeout. (Before the
# repl fix for ISR-ineligible replicas each restart stalled a partition for
# up to replica.lag.time.max.ms; now the max is ~0.6 s, client start-up.)
source "$(dirname "$0")/it_lib.sh"
source "$(dirname "$0")/it_failover_lib.sh"
transport=${1:?transport}
session_ms=3000

it_up "$transport" --config broker.session.timeout.ms=$session_ms \
	--config broker.heartbeat.interval.ms=300 --config replica.lag.time.max.ms=3000
hw topic create t1 --partitions 2 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
it_log "leaders $(it_field t1 0 Leader) $(it_field t1 1 Leader); rolling restart under acks=all load"
hw bench --topic t1 --acks all --rate 400 --record-size 100 --batch-size 8 --duration 16s \
	--warmup 0 --verify --no-progress --timeout 300ms >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" &
bench=$!; IT_PIDS+=($bench)
it_load_flowing t1 0
full_isr() { isr_has t1 0 "$1" && isr_has t1 1 "$1"; }
for n in 1 2 3; do
	t0=$(it_ms)
	hw cluster stop "$n" -q || it_fail "cluster stop $n"
	hw cluster start "$n" -q || it_fail "cluster start $n"
	it_wait 10 full_isr "$n" || it_fail "$n not back in both ISRs: $(hw topic describe t1)"
	it_log "broker $n restarted, back in the ISRs after $(( $(it_ms) - t0 )) ms; leaders $(it_field t1 0 Leader) $(it_field t1 1 Leader)"
	kill -0 "$bench" 2>/dev/null || it_fail "load ended before the rolling restart did"
	sleep 0.5
done
rc=0; wait "$bench" || rc=$?
it_bench_check "$IT_DIR/bench.out" "$IT_DIR/bench.err" $rc
max_us=$(awk '$1 == "max" { print $2; exit }' "$IT_DIR/bench.out")
it_log "longest write stall <= max publish latency $max_us us (session timeout $session_ms ms)"
awk -v m="$max_us" -v s=$session_ms 'BEGIN { exit !(m > 0 && m < s * 1000) }' ||
	it_fail "writes stalled up to $max_us us, longer than the session timeout"
it_final_check t1 0
it_final_check t1 1
it_log "PASS"
