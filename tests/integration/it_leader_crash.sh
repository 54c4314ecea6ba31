#!/usr/bin/env bash
# it_leader_crash.sh TRANSPORT — docs/scenarios.md#the-failover-story:
# SIGKILL of the leader under acks=all load. The controller fences
# it after the session timeout and elects a new leader from the ISR with a
# higher epoch; the load (retrying, idempotent) continues on it with no
# acknowledged record lost. The old leader restarts, truncates its
# uncommitted tail to the new leader's epoch boundary, and rejoins the ISR.
source "$(dirname "$0")/it_lib.sh"
source "$(dirname "$0")/it_failover_lib.sh"
transport=${1:?transport}

it_up "$transport" --config broker.session.timeout.ms=1500 \
	--config broker.heartbeat.interval.ms=250 --config replica.lag.time.max.ms=5000
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
old=$(it_field t1 0 Leader); ep0=$(it_field t1 0 LeaderEpoch); isr0=$(it_field t1 0 Isr)
it_log "leader $old (epoch $ep0, Isr $isr0): SIGKILL under acks=all load"

hw bench --topic t1 --acks all --rate 500 --record-size 100 --batch-size 8 --duration 10s \
	--warmup 0 --verify --no-progress --timeout 300ms >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" &
bench=$!; IT_PIDS+=($bench)
it_load_flowing t1 0
# Give the leader an uncommitted tail: with both followers paused, acks=1
# records land on the leader only; then it crashes.
for f in $(tr ',' ' ' <<<"$isr0"); do [ "$f" = "$old" ] || hw cluster pause "$f" -q; done
# The followers' fetches parked at the leader when they stopped are answered
# by the next append; if that were the tail, its records would sit in the
# stopped followers' rings and be replicated when they resume (as in Kafka,
# had they fetched it before the crash). Let the bench's appends use up those
# fetches first (a batch every ~16 ms): after that nobody fetches the tail.
sleep 0.3
seq -f 'tail-%g' 1 5 | hw produce --topic t1 --partition 0 --acks 1 --verbose --timeout 2000 \
	>"$IT_DIR/tail.out" 2>/dev/null || it_fail "acks=1 tail not acknowledged"
leo_old=$(it_field t1 0 LEO); hw_old=$(it_field t1 0 HW)
hw cluster kill "$old" -q || it_fail "cluster kill"
for f in $(tr ',' ' ' <<<"$isr0"); do [ "$f" = "$old" ] || hw cluster resume "$f" -q; done
it_log "leader $old killed with HW $hw_old, LEO $leo_old (acks=1 tail at $(cut -d ' ' -f 2 "$IT_DIR/tail.out" | tr '\n' ' '))"
new_leader() { local l; l=$(it_field t1 0 Leader); [ -n "$l" ] && [ "$l" != "$old" ] && [ "$l" != -1 ]; }
it_wait 8 new_leader || it_fail "no new leader: $(hw topic describe t1)"
new=$(it_field t1 0 Leader); ep1=$(it_field t1 0 LeaderEpoch)
[[ ",$isr0," == *",$new,"* ]] || it_fail "new leader $new was not in the ISR $isr0"
[ "$ep1" -gt "$ep0" ] || it_fail "leader epoch $ep0 -> $ep1 did not grow"
it_log "new leader $new from the ISR, epoch $ep0 -> $ep1, Isr $(it_field t1 0 Isr)"
sleep 1
hw cluster start "$old" -q || it_fail "cluster start $old"
it_wait 10 isr_has t1 0 "$old" || it_fail "old leader $old not back in the ISR: $(hw topic describe t1)"
trunc=$({ grep -E "truncat" "$IT_DIR/c/node-$old/hiwaterd.log" || true; } | tail -n 1)
[ -n "$trunc" ] || it_fail "old leader $old rejoined without truncating its uncommitted tail"
it_log "old leader $old back in the ISR as a follower after: ${trunc#* repl: }"

rc=0; wait "$bench" || rc=$?
it_bench_check "$IT_DIR/bench.out" "$IT_DIR/bench.err" $rc
it_final_check t1 0
# the acks=1 tail was never committed: no replica may still serve it
if grep -q "tail-" "$IT_DIR/consumed-t1-0"; then it_fail "uncommitted acks=1 tail survived the failover"; fi
it_log "PASS"
