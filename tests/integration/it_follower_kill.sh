#!/usr/bin/env bash
# it_follower_kill.sh TRANSPORT — docs/scenarios.md#the-isr-after-a-broker-kill:
# SIGKILL of a follower
# under continuous acks=all load. Writes continue (ISR 2 >= min ISR 2: the HW
# keeps advancing while the follower is dead), the restarted follower
# catches up and `topic describe` shows it back in the ISR; the load's
# --verify finds every acknowledged record exactly once.
source "$(dirname "$0")/it_lib.sh"
transport=${1:?transport}

it_up "$transport" --config replica.lag.time.max.ms=1500
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
leader=$(it_field t1 0 Leader)
follower=$(it_field t1 0 Replicas | tr ',' '\n' | grep -vx "$leader" | head -1)
[ -n "$follower" ] || it_fail "no follower in $(hw topic describe t1)"
it_log "leader $leader, killing follower $follower under load"

hw bench --topic t1 --acks all --rate 1000 --record-size 200 --batch-size 16 --duration 10s \
	--warmup 0 --verify --no-progress --timeout 300ms >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" &
IT_PIDS+=($!)
bench=$!
it_load_flowing t1 0
hw cluster kill "$follower" -q || it_fail "cluster kill"
t_kill=$(date +%s)
hw1=$(it_field t1 0 HW)
it_wait 8 isr_lacks t1 0 "$follower" || it_fail "killed follower $follower still in ISR: $(hw topic describe t1)"
it_wait 5 it_hw_past t1 0 "$hw1" || it_fail "HW did not advance with the follower dead (still $hw1)"
hw2=$(it_field t1 0 HW)
it_log "follower out of the ISR after $(( $(date +%s) - t_kill )) s; HW $hw1 -> $hw2 while it is dead"
# The describe filters: under-replicated yes (ISR 2 < 3 replicas), under
# min ISR no (2 >= 2), unavailable no (there is a leader).
hw topic describe t1 --under-replicated-partitions | grep -q "Partition: 0" ||
	it_fail "--under-replicated-partitions does not list t1-0"
[ -z "$(hw topic describe t1 --under-min-isr-partitions)" ] || it_fail "--under-min-isr-partitions lists t1-0"
[ -z "$(hw topic describe t1 --unavailable-partitions)" ] || it_fail "--unavailable-partitions lists t1-0"

hw cluster start "$follower" -q || it_fail "cluster start $follower"
it_wait 20 isr_has t1 0 "$follower" || it_fail "restarted follower $follower not back in ISR: $(hw topic describe t1)"
it_log "follower $follower back in the ISR: $(it_field t1 0 Isr)"
[ -z "$(hw topic describe t1 --under-replicated-partitions)" ] ||
	it_fail "--under-replicated-partitions still lists t1-0 with a full ISR"

brc=0; wait "$bench" || brc=$?; [ $brc = 0 ] || { cat "$IT_DIR/bench.out" "$IT_DIR/bench.err" >&2; it_fail "bench exited $brc"; }
grep -q "verify          OK" "$IT_DIR/bench.out" || { cat "$IT_DIR/bench.out" >&2; it_fail "verify not OK"; }
grep -E "^(throughput|records|verify)" "$IT_DIR/bench.out"
it_log "PASS"
