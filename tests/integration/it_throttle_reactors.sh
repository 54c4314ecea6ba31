#!/usr/bin/env bash
# it_throttle_reactors.sh TRANSPORT — the replication throttle is per broker
# (Kafka's follower.replication.throttled.rate) also when the broker runs two
# reactors, each with its own quota (hwd_shard.h "Replication throttle":
# each reactor holds rate/2). A follower stopped while both partitions of a
# topic took a backlog restarts outside the ISR on two reactors (the two
# partitions are sharded to different reactors) and copies the backlog; its
# throttled fetch byte rate, sampled over a few seconds mid catch-up, must
# be the configured rate R, not 2R (what two full-rate quotas let through).
source "$(dirname "$0")/it_lib.sh"
source "$(dirname "$0")/it_failover_lib.sh"
transport=${1:?transport}
rate=300000 # bytes/s, the broker's

it_up "$transport" --reactors 2 --config broker.session.timeout.ms=3000 \
	--config broker.heartbeat.interval.ms=300 --config replica.lag.time.max.ms=3000 \
	--config replica.fetch.max.bytes=32768 --config follower.replication.throttled.rate=$rate
hw topic create t1 --partitions 2 --replication-factor 3 --config min.insync.replicas=1 \
	--config 'follower.replication.throttled.replicas=*' -q >/dev/null || it_fail "topic create"
f=3
hw cluster stop "$f" -q || it_fail "cluster stop $f"
it_wait 5 isr_lacks t1 0 "$f" || it_fail "$f still in the ISR of t1-0 after a clean stop"
it_wait 5 isr_lacks t1 1 "$f" || it_fail "$f still in the ISR of t1-1 after a clean stop"
# the backlog: ~4 MB over both partitions, acknowledged without broker $f
hw bench --topic t1 --acks 1 --rate 2000 --record-size 1000 --batch-size 20 --duration 2s \
	--warmup 0 --verify --no-progress >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" ||
	{ cat "$IT_DIR/bench.out" "$IT_DIR/bench.err" >&2; it_fail "bench"; }
grep -q "verify          OK" "$IT_DIR/bench.out" || it_fail "bench verify not OK"

metric() { hw metrics "$1" 2>/dev/null | awk -v k="$2" 'index($1, k) == 1 { s += $2 } END { printf "%d\n", s }'; }
throttled() { metric "$f" hiwater_follower_replication_throttled_bytes_total; }
started() { [ "$(throttled)" -gt 0 ]; }
hw cluster start "$f" -q || it_fail "cluster start $f"
it_wait 15 started || it_fail "broker $f recorded no follower-throttled bytes"
bound=$(metric "$f" hiwater_follower_replication_throttled_rate_bytes_per_second)
[ "$bound" = "$rate" ] || it_fail "broker $f reports a follower throttle bound of $bound, configured $rate"
# past the first window's credit (each quota admits one window at once)
sleep 1.5
b0=$(throttled); t0=$(date +%s%N)
sleep 3
b1=$(throttled); t1=$(date +%s%N)
r0=$(metric "$f" 'hiwater_partition_follower_throttled_bytes_total{topic="t1",partition="0"}')
r1=$(metric "$f" 'hiwater_partition_follower_throttled_bytes_total{topic="t1",partition="1"}')
measured=$(awk -v a="$b0" -v b="$b1" -v s="$t0" -v e="$t1" 'BEGIN { printf "%d", (b - a) / ((e - s) / 1e9) }')
it_log "broker $f on 2 reactors copied $((b1 - b0)) throttled bytes in $(( (t1 - t0) / 1000000 )) ms:" \
	"$measured B/s against a broker rate of $rate B/s (partition 0: $r0 B, partition 1: $r1 B so far)"
[ "$r0" -gt 0 ] && [ "$r1" -gt 0 ] || it_fail "not both partitions were throttled (p0 $r0, p1 $r1 B)"
isr_has t1 0 "$f" && isr_has t1 1 "$f" && it_fail "broker $f caught up before the second sample: backlog too small"
awk -v m="$measured" -v r="$rate" 'BEGIN { exit !(m >= 0.6 * r && m <= 1.3 * r) }' ||
	it_fail "throttled catch-up at $measured B/s, expected about the broker's $rate B/s (two reactors' quotas must share it)"
it_wait 40 isr_has t1 0 "$f" || it_fail "$f did not rejoin the ISR of t1-0"
it_wait 20 isr_has t1 1 "$f" || it_fail "$f did not rejoin the ISR of t1-1"
it_final_check t1 0
it_final_check t1 1
it_log "PASS"
