#!/usr/bin/env bash
# it_logdir_full.sh TRANSPORT — docs/security.md "Faults", Kafka's
# offline-log-dir handling: broker 3's log.dirs on a small tmpfs this test
# mounts (and removes). Under acks=all load the file system fills up: broker
# 3's logs fail (ENOSPC), it reports its log directory offline, the
# controller fences it, so within seconds it leads nothing and is in no ISR;
# produce continues on the others, `bench --verify` finds every acknowledged
# record; its metrics show the offline directory and replicas. With space
# again (the tmpfs grown), a restart brings it back into every ISR.
source "$(dirname "$0")/it_lib.sh"
transport=${1:-udp}
MNT="$IT_DIR/c/node-3/data"
mkdir -p "$MNT"
mount -t tmpfs -o size=6m,mode=0700 hws-logdir "$MNT" || it_fail "mount a tmpfs on $MNT"
printf '#!/bin/sh\numount -l "%s" 2>/dev/null || true\n' "$MNT" >"$IT_DIR/on-exit"
chmod +x "$IT_DIR/on-exit"
it_up "$transport" --config broker.heartbeat.interval.ms=500 --config broker.session.timeout.ms=6000
hw topic create t1 --partitions 3 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
leads3() { hw topic describe t1 | grep -c "Leader: 3	" || true; }
in_isr3() { local p n=0; for p in 0 1 2; do isr_has t1 "$p" 3 && n=$((n + 1)); done; echo $n; }
it_wait 10 bash -c "[ \$(\"$HIWATER\" topic describe t1 --dir \"$IT_DIR/c\" | grep -c 'Leader: 3	') -ge 1 ]" ||
	it_fail "broker 3 leads nothing to start with: $(hw topic describe t1)"

hw bench --topic t1 --acks all --rate 800 --record-size 1000 --batch-size 8 --duration 9s \
	--warmup 0 --verify --no-progress --timeout 300ms >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" &
IT_PIDS+=($!)
bench=$!
it_load_flowing t1 0 100
dd if=/dev/zero of="$MNT/filler" bs=64k 2>/dev/null || true      # until ENOSPC
t_full=$(date +%s%N)
gone() { [ "$(leads3)" = 0 ] && [ "$(in_isr3)" = 0 ]; }
it_wait 10 gone || it_fail "broker 3 still leads $(leads3) / is in $(in_isr3) ISRs: $(hw topic describe t1)"
it_log "broker 3 led nothing and was in no ISR $(( ($(date +%s%N) - t_full) / 1000000 )) ms after its disk filled"
m=$(curl -sf "http://127.0.0.1:$((IT_PORT + 403))/metrics")
grep -q '^hiwater_offline_log_directories 1$' <<<"$m" || it_fail "offline log dirs not 1: $(grep offline <<<"$m")"
off=$(awk '$1 == "hiwater_offline_replicas" { print $2 }' <<<"$m")
[ "${off:-0}" -ge 1 ] || it_fail "offline replicas $off"
grep -q "log directories offline" "$IT_DIR/c/node-3/hiwaterd.log" || it_fail "broker 3 did not say its log dir is offline"

brc=0; wait "$bench" || brc=$?; [ $brc = 0 ] || { cat "$IT_DIR/bench.out" "$IT_DIR/bench.err" >&2; it_fail "bench exited $brc"; }
grep -q "verify          OK" "$IT_DIR/bench.out" || { cat "$IT_DIR/bench.out" >&2; it_fail "verify not OK"; }
grep -E "^(throughput|records|verify)" "$IT_DIR/bench.out"

# the disk has room again (the file system grown, as an operator would):
# a restart brings the broker back
rm -f "$MNT/filler"
mount -o remount,size=64m "$MNT" || it_fail "grow the tmpfs"
hw cluster kill 3 -q >/dev/null || it_fail "kill broker 3"
hw cluster start 3 -q >/dev/null || it_fail "start broker 3"
back() { [ "$(in_isr3)" = 3 ]; }
it_wait 25 back || it_fail "broker 3 is in $(in_isr3) of 3 ISRs after the restart: $(hw topic describe t1)
$(grep -v " INFO " "$IT_DIR/c/node-3/hiwaterd.log" | tail -20)
$(tail -5 "$IT_DIR/c/node-0/hiwaterd.log")"
it_log "PASS"
