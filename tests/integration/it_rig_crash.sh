#!/usr/bin/env bash
# it_rig_crash.sh PORT — crashes on a `--rig netns` cluster (every node in
# its own network namespace, data plane on PORT):
#  1. a follower SIGKILLed while 12.5 MB of acks=all records (16 KiB, batches
#     of 3) are written without it; restarted, it fetches them all over its
#     data link and is back in the ISR, its log >= 10 MB;
#  2. the leader SIGKILLed under acks=all load: a new leader is elected,
#     acks=all writes continue on it (the HW advances after the failover)
#     and the load's --verify finds every acknowledged record exactly once.
source "$(dirname "$0")/it_lib.sh"
port=${1:?port}
NB=800

it_rig_up "$port" --config replica.lag.time.max.ms=1500 --config broker.session.timeout.ms=1500 \
	--config broker.heartbeat.interval.ms=250
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
leader=$(it_field t1 0 Leader)
follower=$(it_field t1 0 Replicas | tr ',' '\n' | grep -vx "$leader" | head -1)
[ -n "$follower" ] || it_fail "no follower in $(hw topic describe t1)"

it_log "1. SIGKILL follower $follower (leader $leader), write $NB x 16 KiB without it"
hw cluster kill "$follower" -q || it_fail "cluster kill $follower"
it_wait 10 isr_lacks t1 0 "$follower" || it_fail "killed follower still in ISR: $(hw topic describe t1)"
awk -v n=$NB 'BEGIN { s = "0123456789abcdef"; while (length(s) < 16377) s = s s
	for (i = 0; i < n; i++) printf "%06d-%s\n", i, substr(s, 1 + i % 16, 16377) }' |
	hw produce --topic t1 --acks all --batch-size 3 -q || it_fail "produce without the follower exited $?"
leo=$(it_field t1 0 LEO)
[ "$leo" -ge $NB ] || it_fail "leader LEO $leo after $NB records"
t0=$(date +%s)
hw cluster start "$follower" -q || it_fail "cluster start $follower"
it_wait 60 isr_has t1 0 "$follower" || it_fail "restarted follower not back in ISR: $(hw topic describe t1)"
logbytes() { cat "$(find "$IT_DIR/c/node-$1/data" -type d -name t1-0)"/*.log 2>/dev/null | wc -c; }
caught_up() { [ "$(logbytes "$follower")" -ge 10000000 ]; }
it_wait 10 caught_up || it_fail "follower $follower's log holds $(logbytes "$follower") bytes, want >= 10 MB"
it_log "follower $follower caught up $(logbytes "$follower") bytes in $(( $(date +%s) - t0 )) s, back in the ISR"

it_log "2. SIGKILL leader $leader under acks=all load"
# "$HIWATER" itself, not the hw function: $! must be the bench's pid (a
# backgrounded function is a subshell, and it_cleanup's kill of it would
# leave the bench running)
"$HIWATER" bench --dir "$IT_DIR/c" --topic t1 --acks all --rate 400 --record-size 1024 --batch-size 16 \
	--duration 11s --warmup 0 --verify --no-progress --timeout 300ms >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" &
IT_PIDS+=($!)
bench=$!
it_load_flowing t1 0
hw cluster kill "$leader" -q || it_fail "cluster kill leader $leader"
new_leader() { local l; l=$(it_field t1 0 Leader); [ -n "$l" ] && [ "$l" != "$leader" ] && [ "$l" != -1 ]; }
it_wait 15 new_leader || it_fail "no new leader after killing $leader: $(hw topic describe t1)"
nl=$(it_field t1 0 Leader)
hw1=$(it_field t1 0 HW)
it_wait 10 it_hw_past t1 0 "$hw1" || it_fail "acks=all writes did not continue on new leader $nl (HW still $hw1)"
hw2=$(it_field t1 0 HW)
it_log "new leader $nl; HW $hw1 -> $hw2 after the failover"
brc=0; wait "$bench" || brc=$?
[ $brc = 0 ] || { cat "$IT_DIR/bench.out" "$IT_DIR/bench.err" >&2; it_fail "bench exited $brc"; }
grep -q "verify          OK" "$IT_DIR/bench.out" || { cat "$IT_DIR/bench.out" >&2; it_fail "verify not OK"; }
grep -E "^(throughput|records|verify)" "$IT_DIR/bench.out"
it_log "PASS ($port)"
