#!/usr/bin/env bash
# it_retention.sh TRANSPORT — retention on real brokers (Kafka's
# LogManager.cleanupLogs): with small segments, log.retention.bytes and a
# short log.retention.check.interval.ms, every replica deletes its own
# oldest whole segments, never past its HW; the log start offset moves up
# on all three replicas; a consumer --from-beginning continues from the log
# start (auto.offset.reset=earliest) and reads every record that is left, in
# order; nothing at or above the log start is lost.
source "$(dirname "$0")/it_lib.sh"
transport=${1:?transport}
N=8000
SEG=16384
KEEP=49152

it_up "$transport" --config log.segment.bytes=$SEG --config log.retention.bytes=$KEEP \
	--config log.retention.check.interval.ms=300
hw topic create r1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
it_log "producing $N records of ~100 bytes with acks=all (about $((N * 170 / 1024)) KiB of batches)"
seq 0 $((N - 1)) | awk '{ printf "record-%06d-%s\n", $1, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" }' \
	>"$IT_DIR/in"
hw produce --topic r1 --acks all --batch-size 40 -q <"$IT_DIR/in" || it_fail "produce exited $?"

# the first segment's base offset (its file name) of broker B's replica
first_base() {
	local d
	d=$(find "$IT_DIR/c/node-$1/data" -type d -name 'r1-0' | head -1)
	[ -n "$d" ] || { echo -1; return; }
	local f
	f=$(ls "$d" | grep '\.log$' | sort | head -1)
	[ -n "$f" ] || { echo -1; return; }
	echo $((10#${f%.log}))
}
seg_bytes() {
	local d
	d=$(find "$IT_DIR/c/node-$1/data" -type d -name 'r1-0' | head -1)
	cat "$d"/*.log | wc -c
}
retained() {
	for b in 1 2 3; do
		[ "$(first_base $b)" -gt 0 ] || return 1
		# Kafka's rule: delete oldest while what remains stays >= retention.bytes
		[ "$(seg_bytes $b)" -lt $((KEEP + 2 * SEG)) ] || return 1
	done
}
it_wait 20 retained || it_fail "retention did not run on every replica: first bases $(first_base 1) $(first_base 2) $(first_base 3), bytes $(seg_bytes 1) $(seg_bytes 2) $(seg_bytes 3)"
for b in 1 2 3; do
	[ "$(seg_bytes $b)" -ge $KEEP ] || it_fail "broker $b kept $(seg_bytes $b) bytes < log.retention.bytes $KEEP"
done
start=$(first_base 1)
it_log "log start offsets after retention: $(first_base 1) $(first_base 2) $(first_base 3); segment bytes $(seg_bytes 1) $(seg_bytes 2) $(seg_bytes 3)"

# A consumer from the beginning continues from the leader's log start and
# reads every record that is left, at its offset.
hw consume --topic r1 --from-beginning --print-offsets --timeout 3000 >"$IT_DIR/out" 2>"$IT_DIR/err" || true
grep -q "below the log start" "$IT_DIR/err" || it_fail "consumer did not report the reset to the log start: $(cat "$IT_DIR/err")"
got_first=$(head -1 "$IT_DIR/out" | cut -f1)
[ -n "$got_first" ] && [ "$got_first" -gt 0 ] || it_fail "consumer started at '$got_first', want the log start (> 0)"
paste <(seq "$got_first" $((N - 1))) <(tail -n +$((got_first + 1)) "$IT_DIR/in") | cmp -s - "$IT_DIR/out" ||
	it_fail "records from $got_first on differ from what was produced ($(wc -l <"$IT_DIR/out") lines read)"
# Regression: a batch larger than log.segment.bytes (but under
# message.max.bytes) is the client's error, RECORD_LIST_TOO_LARGE (Kafka's
# RecordBatchTooLargeException), not a KAFKA_STORAGE_ERROR of the broker.
rc=0
for i in 1 2; do head -c $((SEG * 3 / 4)) /dev/zero | tr '\0' 'x'; echo; done |
	hw produce --topic r1 --acks all --batch-size 2 --timeout 5000 2>"$IT_DIR/err2" >/dev/null || rc=$?
[ $rc = 4 ] && grep -q RECORD_LIST_TOO_LARGE "$IT_DIR/err2" ||
	it_fail "a batch larger than a segment: exit $rc, $(cat "$IT_DIR/err2"), want 4 and RECORD_LIST_TOO_LARGE"
it_log "PASS: retention moved the log start to ~$start on all replicas; consumer read offsets $got_first..$((N - 1)) intact"
