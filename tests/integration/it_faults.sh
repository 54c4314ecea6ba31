#!/usr/bin/env bash
# it_faults.sh TRANSPORT — docs/security.md "Faults", on real processes:
#  1. the controller's metadata log on a small full file system (a 256 KiB
#     tmpfs this test mounts and removes): CREATE_TOPIC is answered with
#     KAFKA_STORAGE_ERROR instead of silence, the controller retries with
#     backoff (a bounded number of log lines, no hot loop), and once space is
#     back a topic is created and a dead broker is fenced;
#  2. a corrupt record in the middle of the metadata log: the controller
#     refuses to start, naming the offset, and the file is left as it was;
#  3. `cluster down --purge` on a --dir with a quote and a command in its
#     name removes that directory and runs nothing (no shell sees it).
source "$(dirname "$0")/it_lib.sh"
transport=${1:-udp}
MNT="$IT_DIR/c/node-0/data"
mkdir -p "$MNT"
mount -t tmpfs -o size=256k,mode=0700 hws-meta "$MNT" || it_fail "mount a tmpfs on $MNT"
printf '#!/bin/sh\numount -l "%s" 2>/dev/null || true\n' "$MNT" >"$IT_DIR/on-exit"
chmod +x "$IT_DIR/on-exit"
it_up "$transport" --config broker.session.timeout.ms=3000 --config broker.heartbeat.interval.ms=500
hw topic create t1 --partitions 1 --replication-factor 3 -q >/dev/null || it_fail "topic create"
log="$IT_DIR/c/node-0/hiwaterd.log"

# ---- 1. full disk under the metadata log
dd if=/dev/zero of="$MNT/filler" bs=4k 2>/dev/null || true    # until ENOSPC
lines0=$(grep -c "metadata log append" "$log" || true)
# the log's last page may still have room: create topics until one is refused
for i in $(seq 1 60); do
	rc=0; out=$(timeout 20 "$HIWATER" topic create "f$i" --partitions 8 --replication-factor 3 \
		--dir "$IT_DIR/c" 2>&1) || rc=$?
	[ "$rc" = 0 ] || break
done
[ "$rc" != 0 ] && [ "$rc" != 124 ] || it_fail "topic create on a full metadata disk: exit $rc: $out"
grep -q KAFKA_STORAGE_ERROR <<<"$out" || it_fail "create on a full disk did not say KAFKA_STORAGE_ERROR: $out"
it_log "create on a full disk: $out"
# an alter-config record is smaller than a creation's: the space a refused
# creation left may still take one or two; alter until one is refused
for i in $(seq 1 20); do
	rc=0; out=$(timeout 20 "$HIWATER" topic alter-config t1 min.insync.replicas=$((1 + i % 2)) --dir "$IT_DIR/c" 2>&1) ||
		rc=$?
	[ "$rc" = 0 ] || break
done
grep -q KAFKA_STORAGE_ERROR <<<"$out" || it_fail "alter-config on a full disk: exit $rc: $out"
# a broker dies: fencing it needs a record; the controller must not hot-loop
hw cluster kill 3 -q >/dev/null || it_fail "kill broker 3"
sleep 6
lines=$(( $(grep -c "metadata log append" "$log" || true) - lines0 ))
[ "$lines" -le 40 ] || it_fail "$lines metadata-log error lines in 6 s: a hot loop"
it_log "6 s on a full disk with a dead broker: $lines log lines"
rm -f "$MNT/filler"
isr_lacks_3() { isr_lacks t1 0 3; }
it_wait 15 isr_lacks_3 || it_fail "broker 3 was not fenced out of the ISR once the disk had space"
it_wait 10 hw topic create t2 --partitions 1 --replication-factor 2 -q >/dev/null 2>&1 ||
	it_fail "topic create after space came back"
hw cluster start 3 -q >/dev/null || it_fail "restart broker 3"

# ---- 2. mid-file corruption of the metadata log
hw cluster stop 0 -q >/dev/null || it_fail "stop the controller"
mlog=$(find "$MNT" -name '*metadata*.log' -type f | head -1)
[ -n "$mlog" ] || it_fail "no metadata log under $MNT"
size=$(stat -c %s "$mlog")
printf '\x5a' | dd of="$mlog" bs=1 seek=20 conv=notrunc 2>/dev/null   # in the first record's payload
sum=$(sha256sum <"$mlog")
rc=0; hw cluster start 0 -q >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] || it_fail "the controller started on a corrupt metadata log"
grep -q "corrupt record at offset 8 followed by valid records" "$log" ||
	it_fail "no error naming the offset: $(tail -3 "$log")"
[ "$(sha256sum <"$mlog")" = "$sum" ] && [ "$(stat -c %s "$mlog")" = "$size" ] ||
	it_fail "the corrupt metadata log was modified"
# No controller will run again: a clean stop of each broker would wait out
# its controlled shutdown (SIGKILL at the end of \`cluster down\`'s 5 s)
for b in 1 2 3; do hw cluster kill "$b" -q >/dev/null || it_fail "kill broker $b"; done

# ---- 3. no shell built from --dir
evil="$IT_DIR/x'; touch $IT_DIR/pwned; echo '"
mkdir -p "$evil/node-0" "$IT_DIR/keep"
printf 'brokers=1\ntransport=udp\nbase.port=%d\ncluster.id=1\n' "$IT_PORT" >"$evil/cluster.properties"
"$HIWATER" cluster down --purge --dir "$evil" -q >/dev/null 2>&1 || it_fail "cluster down --purge on a quoted dir"
[ ! -e "$evil" ] || it_fail "the quoted cluster dir was not removed"
[ ! -e "$IT_DIR/pwned" ] && [ -d "$IT_DIR/keep" ] || it_fail "cluster down --purge ran a command built from --dir"
it_log "PASS"
