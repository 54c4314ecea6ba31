#!/usr/bin/env bash
# it_follower_pause.sh TRANSPORT — docs/scenarios.md#a-follower-pauses-and-comes-back
# (the GC pause on real processes): SIGSTOP a follower for longer than
# replica.lag.time.max.ms (1 s here): under acks=all load it leaves the
# ISR, the HW moves on without it, and after SIGCONT it catches up and
# rejoins the ISR.
source "$(dirname "$0")/it_lib.sh"
transport=${1:?transport}

it_up "$transport" --config replica.lag.time.max.ms=1000
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
leader=$(it_field t1 0 Leader)
follower=$(it_field t1 0 Replicas | tr ',' '\n' | grep -vx "$leader" | head -1)
it_log "leader $leader, pausing follower $follower"

hw bench --topic t1 --acks all --rate 1000 --record-size 200 --batch-size 16 --duration 9s \
	--warmup 0 --verify --no-progress >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" &
IT_PIDS+=($!)
bench=$!
it_load_flowing t1 0
isr_has t1 0 "$follower" || it_fail "follower not in ISR before the pause"
hw cluster pause "$follower" -q || it_fail "pause"
it_wait 8 isr_lacks t1 0 "$follower" || it_fail "paused follower still in ISR after 8 s: $(hw topic describe t1)"
hw1=$(it_field t1 0 HW)
it_wait 5 it_hw_past t1 0 "$hw1" || it_fail "HW stuck while the follower is paused (still $hw1)"
hw2=$(it_field t1 0 HW)
it_log "paused follower left the ISR ($(it_field t1 0 Isr)); HW $hw1 -> $hw2"
hw cluster resume "$follower" -q || it_fail "resume"
it_wait 15 isr_has t1 0 "$follower" || it_fail "resumed follower did not rejoin: $(hw topic describe t1)"
it_log "follower $follower rejoined: Isr $(it_field t1 0 Isr)"
brc=0; wait "$bench" || brc=$?; [ $brc = 0 ] || { cat "$IT_DIR/bench.out" "$IT_DIR/bench.err" >&2; it_fail "bench exited $brc"; }
grep -q "verify          OK" "$IT_DIR/bench.out" || { cat "$IT_DIR/bench.out" >&2; it_fail "verify not OK"; }
it_log "PASS"
