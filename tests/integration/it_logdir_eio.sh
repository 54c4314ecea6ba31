#!/usr/bin/env bash
# it_logdir_eio.sh FAULTFS — docs/logdirs.md, Kafka's JBOD handling, with a
# real EIO: broker 3 has two log.dirs, its own data dir and a FUSE file
# system (tests/integration/faultfs.c) over a directory of this test. Under
# `bench --acks all --verify` the FUSE disk starts answering EIO: the logs
# on it fail, broker 3 takes only that log dir offline and reports its
# replicas, the controller moves their leaderships away and drops broker 3
# from their ISRs within seconds, while broker 3 stays in the ISRs of (and
# keeps leading) the partitions on its healthy dir; its metrics show one
# offline dir and those replicas; `bench --verify` finds every acknowledged
# record. With the disk healed, a restart brings broker 3 back everywhere.
# Then a log dir that cannot be listed at start (a file where the FUSE dir
# should be): broker 3 starts with that dir offline and serves the other
# (docs/logdirs.md "Start-up: recovery and deleted logs"); its partitions
# whose logs were in that dir are not new, so no empty log is created in
# their place: broker 3 stays out of their ISRs, and where it is the only
# replica (t2, acks=all records) the partition stays offline until the dir
# is back, then serves every record; hiwater_offline_replicas counts each
# of those partitions once.
source "$(dirname "$0")/it_lib.sh"
FAULTFS=${1:?faultfs binary}
FFB="$IT_DIR/ff-backing"
FFM="$IT_DIR/ff-disk"
mkdir -p "$FFB" "$FFM"
"$FAULTFS" "$FFB" "$FFM" 2>"$IT_DIR/faultfs.log" &
ffpid=$!
IT_PIDS+=($ffpid)
printf '#!/bin/sh\nkill %d 2>/dev/null; umount -l "%s" 2>/dev/null || true\n' "$ffpid" "$FFM" >"$IT_DIR/on-exit"
chmod +x "$IT_DIR/on-exit"
it_wait 5 mountpoint -q "$FFM" || it_fail "faultfs did not mount: $(cat "$IT_DIR/faultfs.log")"

it_up udp --config broker.heartbeat.interval.ms=500 --config broker.session.timeout.ms=6000
# broker 3: a second log dir on the FUSE disk (cluster up writes one)
hw cluster kill 3 -q >/dev/null || it_fail "kill broker 3"
sed -i "s|^log.dirs=.*|log.dirs=$IT_DIR/c/node-3/data,$FFM|" "$IT_DIR/c/node-3/server.properties"
hw cluster start 3 -q >/dev/null || it_fail "start broker 3"
active() { curl -sf "http://127.0.0.1:$((IT_PORT + 400))/metrics" | grep -q '^hiwater_controller_brokers{state="ACTIVE"} 3$'; }
it_wait 15 bash -c "[ \$(grep -c 'FENCED -> RUNNING' \"$IT_DIR/c/node-3/hiwaterd.log\") -ge 2 ]" &&
	it_wait 10 active || it_fail "broker 3 not back: $(tail -5 "$IT_DIR/c/node-3/hiwaterd.log")"
hw topic create t1 --partitions 6 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
it_wait 10 bash -c "[ \$(ls \"$FFB\" \"$IT_DIR/c/node-3/data\" | grep -c '^t1-') = 6 ]" ||
	it_fail "broker 3 has not all of t1: $(ls "$FFB" "$IT_DIR/c/node-3/data")"
on_ff=$(ls "$FFB" | sed -n 's/^t1-//p' | sort -n | tr '\n' ' ')
on_ok=$(ls "$IT_DIR/c/node-3/data" | sed -n 's/^t1-//p' | sort -n | tr '\n' ' ')
[ -n "$on_ff" ] && [ -n "$on_ok" ] || it_fail "broker 3 did not spread t1 over both dirs: $on_ff / $on_ok"
# broker 3 leads a partition on each dir (preferred leaders: the controller
# hands them out round robin; move one if placement put both on one dir)
leader() { it_field t1 "$1" Leader; }
it_wait 10 bash -c "\"$HIWATER\" topic describe t1 --dir \"$IT_DIR/c\" | grep -q 'Leader: 3	'" ||
	it_fail "broker 3 leads nothing: $(hw topic describe t1)"
led_ff=""; for p in $on_ff; do [ "$(leader "$p")" = 3 ] && led_ff+="$p "; done
led_ok=""; for p in $on_ok; do [ "$(leader "$p")" = 3 ] && led_ok+="$p "; done
it_log "broker 3: FUSE dir holds t1 partitions $on_ff(leads $led_ff), healthy dir $on_ok(leads $led_ok)"
[ -n "$led_ff" ] || it_fail "broker 3 leads no partition on the FUSE dir: $(hw topic describe t1)"

hw bench --topic t1 --acks all --rate 800 --record-size 1000 --batch-size 8 --duration 9s \
	--warmup 0 --verify --no-progress --timeout 300ms >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" &
IT_PIDS+=($!)
bench=$!
it_load_flowing t1 0 50
kill -USR1 "$ffpid"     # the disk fails: EIO from now on
fenced3() { grep -c 'ctrl: broker 3 (epoch [0-9]*): ACTIVE -> FENCED' "$IT_DIR/c/node-0/hiwaterd.log" || true; }
fenced_before=$(fenced3)
t_fail=$(date +%s%N)
moved() {
	local p
	for p in $on_ff; do [ "$(leader "$p")" != 3 ] && isr_lacks t1 "$p" 3 || return 1; done
}
it_wait 10 moved || it_fail "broker 3 still leads or is in the ISR of its FUSE dir's partitions: $(hw topic describe t1)
$(grep -v ' INFO ' "$IT_DIR/c/node-3/hiwaterd.log" | tail -10)"
it_log "FUSE dir's partitions led elsewhere, broker 3 out of their ISRs $(( ($(date +%s%N) - t_fail) / 1000000 )) ms after the EIO"
for p in $on_ok; do isr_has t1 "$p" 3 || it_fail "broker 3 left the ISR of t1-$p on its healthy dir: $(hw topic describe t1)"; done
for p in $led_ok; do [ "$(leader "$p")" = 3 ] || it_fail "broker 3 lost t1-$p on its healthy dir: $(hw topic describe t1)"; done
# the controller never fenced broker 3 for its failed dir (its log says
# every transition); the metric is read until the scrape answers
[ "$(fenced3)" = "$fenced_before" ] ||
	it_fail "broker 3 was fenced after its dir failed: $(grep 'broker 3' "$IT_DIR/c/node-0/hiwaterd.log" | tail -3)"
it_wait 5 active || it_fail "broker 3 not ACTIVE: $(grep brokers "$IT_DIR/c/node-0/hiwaterd.log" | tail -3)"
m=$(curl -sf "http://127.0.0.1:$((IT_PORT + 403))/metrics")
grep -q '^hiwater_offline_log_directories 1$' <<<"$m" || it_fail "offline log dirs not 1: $(grep offline <<<"$m")"
n_ff=$(wc -w <<<"$on_ff")
off=$(awk '$1 == "hiwater_offline_replicas" { print $2 }' <<<"$m")
[ "${off:-0}" = "$n_ff" ] || it_fail "offline replicas $off, want $n_ff"
grep -q "Input/output error\|EIO" "$IT_DIR/c/node-3/hiwaterd.log" || it_fail "broker 3 logged no EIO"
grep -q "1 of 2 log directories offline" "$IT_DIR/c/node-3/hiwaterd.log" || it_fail "broker 3 did not report its offline dir"
mc=$(curl -sf "http://127.0.0.1:$((IT_PORT + 400))/metrics")
grep -Eq '^hiwater_controller_events_total\{event="OFFLINE_REPLICAS_REPORTED"\} [1-9]' <<<"$mc" ||
	it_fail "controller counted no offline replicas: $(grep OFFLINE <<<"$mc")"

brc=0; wait "$bench" || brc=$?; [ $brc = 0 ] || { cat "$IT_DIR/bench.out" "$IT_DIR/bench.err" >&2; it_fail "bench exited $brc"; }
grep -q "verify          OK" "$IT_DIR/bench.out" || { cat "$IT_DIR/bench.out" >&2; it_fail "verify not OK"; }
grep -E "^(throughput|records|verify)" "$IT_DIR/bench.out"

# the disk answers again: a restart brings the dir and its replicas back
kill -USR2 "$ffpid"
hw cluster kill 3 -q >/dev/null || it_fail "kill broker 3"
hw cluster start 3 -q >/dev/null || it_fail "start broker 3"
back() { local p; for p in 0 1 2 3 4 5; do isr_has t1 "$p" 3 || return 1; done; }
it_wait 25 back || it_fail "broker 3 not back in every ISR after the restart: $(hw topic describe t1)
$(grep -v ' INFO ' "$IT_DIR/c/node-3/hiwaterd.log" | tail -20)"
m=$(curl -sf "http://127.0.0.1:$((IT_PORT + 403))/metrics")
grep -q '^hiwater_offline_log_directories 0$' <<<"$m" || it_fail "offline log dirs not 0 after the restart"

# t2: broker 3 its only replica (so the last ISR member), a partition of it
# on the FUSE dir, 40 records acknowledged with acks=all
hw topic create t2 --replica-assignment 3,3,3,3 -q >/dev/null || it_fail "topic create t2"
it_wait 10 bash -c "[ \$(ls \"$FFB\" \"$IT_DIR/c/node-3/data\" | grep -c '^t2-') = 4 ]" ||
	it_fail "broker 3 has not all of t2: $(ls "$FFB" "$IT_DIR/c/node-3/data")"
t2p=$(ls "$FFB" | sed -n 's/^t2-//p' | sort -n | head -1)
[ -n "$t2p" ] || it_fail "no t2 partition on the FUSE dir: $(ls "$FFB")"
it_wait 10 bash -c "[ \"\$(\"$HIWATER\" topic describe t2 --dir \"$IT_DIR/c\" --json | jq -r '.partitions[] | select(.partition == $t2p) | .leader')\" = 3 ]" ||
	it_fail "t2-$t2p not led by broker 3: $(hw topic describe t2)"
seq -f 'keep-%g' 1 40 | hw produce --topic t2 --partition "$t2p" --acks all -q --timeout 3000 >/dev/null ||
	it_fail "produce to t2-$t2p"

hw cluster stop 3 -q >/dev/null || it_fail "stop broker 3"
: >"$IT_DIR/not-a-dir"
sed -i "s|^log.dirs=.*|log.dirs=$IT_DIR/c/node-3/data,$IT_DIR/not-a-dir|" "$IT_DIR/c/node-3/server.properties"
hw cluster start 3 -q >/dev/null || it_fail "start broker 3 with an unlistable log dir"
back_ok() { local p; for p in $on_ok; do isr_has t1 "$p" 3 || return 1; done; }
it_wait 25 back_ok || it_fail "broker 3 not back in the ISRs of its healthy dir's partitions: $(hw topic describe t1)
$(grep -v ' INFO ' "$IT_DIR/c/node-3/hiwaterd.log" | tail -20)"
kept_off() {
	local p
	for p in $on_ff; do [ "$(leader "$p")" != 3 ] && isr_lacks t1 "$p" 3 || return 1; done
	[ "$(it_field t2 "$t2p" Leader)" = -1 ]
}
it_wait 10 kept_off || it_fail "broker 3 leads or is in the ISR of a partition whose log is on the unlistable dir: $(hw topic describe t1; hw topic describe t2)"
for p in $on_ff; do [ ! -e "$IT_DIR/c/node-3/data/t1-$p" ] || it_fail "an empty log for t1-$p was created"; done
[ ! -e "$IT_DIR/c/node-3/data/t2-$t2p" ] || it_fail "an empty log for t2-$t2p was created"
m=$(curl -sf "http://127.0.0.1:$((IT_PORT + 403))/metrics")
grep -q '^hiwater_offline_log_directories 1$' <<<"$m" || it_fail "unlistable log dir not offline: $(grep offline <<<"$m")"
# each refused partition counted once (it is also OFFLINE in its replica
# manager: no log): t1's and t2's partitions of the unlistable dir
n_t2ff=$(ls "$FFB" | grep -c '^t2-')
off_is() { [ "$(curl -sf "http://127.0.0.1:$((IT_PORT + 403))/metrics" | awk '$1 == "hiwater_offline_replicas" { print $2 }')" = "$1" ]; }
it_wait 5 off_is $((n_ff + n_t2ff)) || it_fail "offline replicas $(curl -sf "http://127.0.0.1:$((IT_PORT + 403))/metrics" |
	awk '$1 == "hiwater_offline_replicas" { print $2 }'), want $((n_ff + n_t2ff)) (t1 $n_ff, t2 $n_t2ff)"
grep -q "not-a-dir cannot be listed" "$IT_DIR/c/node-3/hiwaterd.log" || it_fail "broker 3 did not log its unlistable dir"
grep -q "no log for t2-$t2p" "$IT_DIR/c/node-3/hiwaterd.log" || it_fail "broker 3 did not log refusing t2-$t2p"
it_wait 5 active || it_fail "broker 3 not ACTIVE with one log dir offline: $(grep -i 'broker 3\|brokers' "$IT_DIR/c/node-0/hiwaterd.log" | tail -5)"
it_log "a log dir that cannot be listed at start: offline; broker 3 back in the ISRs of its other dir, no empty log created; t2-$t2p (broker 3 its only replica) offline"

# the dir is back: t2-$t2p led by broker 3 again with every record
hw cluster stop 3 -q >/dev/null || it_fail "stop broker 3"
sed -i "s|^log.dirs=.*|log.dirs=$IT_DIR/c/node-3/data,$FFM|" "$IT_DIR/c/node-3/server.properties"
hw cluster start 3 -q >/dev/null || it_fail "start broker 3 with both dirs"
it_wait 25 back || it_fail "broker 3 not back in every ISR with the dir back: $(hw topic describe t1)"
it_wait 10 bash -c "[ \"\$(\"$HIWATER\" topic describe t2 --dir \"$IT_DIR/c\" --json | jq -r '.partitions[] | select(.partition == $t2p) | .leader')\" = 3 ]" ||
	it_fail "t2-$t2p not led by broker 3 with its dir back: $(hw topic describe t2)"
got=$(hw consume --topic t2 --partition "$t2p" --from-beginning --max-messages 40 --timeout 3000 2>/dev/null | grep -c '^keep-')
[ "$got" = 40 ] || it_fail "t2-$t2p: read $got of 40 acknowledged records"
it_log "the dir back: t2-$t2p led by broker 3, all 40 acknowledged records read"
it_log "PASS"
