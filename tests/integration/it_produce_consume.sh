#!/usr/bin/env bash
# it_produce_consume.sh TRANSPORT — a 3-broker cluster
# of separate hiwaterd processes (plus the controller), a topic with RF 3 and
# min.insync.replicas=2; 10,000 records produced with acks=all through
# `hiwater produce` are all read back in order at their offsets through
# `hiwater consume`; the three replicas' segment files are byte-identical
# below the HW.
#   it_produce_consume.sh TRANSPORT [direct]   direct: direct writes
#   (hiwater.log.direct.io=true: O_DIRECT appends into segments
#   preallocated in steps, here of 2 MiB; the clean stop trims block padding
#   and preallocation, so the replicas' files must still be byte-identical
#   and exactly as long as their batches); without it Kafka's buffered
#   page-cache writes (set explicitly: hiwater.log.direct.io=false).
#   it_produce_consume.sh TRANSPORT auto   the default hiwater.log.direct.io=auto
#   (docs/storage.md#write-mode): t1's log then also takes 16 KiB records
#   in 49 KB batches (direct) and small records again (buffered), and every
#   replica must have switched both ways and still hold identical, exact files
source "$(dirname "$0")/it_lib.sh"
transport=${1:?transport}
direct=${2:-}
N=10000
up_args=(--config hiwater.log.direct.io=false)
[ "$direct" = direct ] && up_args=(--config hiwater.log.direct.io=true --config log.segment.bytes=8388608
	--config hiwater.log.preallocate.step.bytes=2097152)
[ "$direct" = auto ] && up_args=(--config hiwater.log.direct.io=auto)

it_up "$transport" ${up_args[@]+"${up_args[@]}"}
# `cluster up` is idempotent: a second run leaves the running nodes alone.
pids() { hw cluster status | awk '$1 ~ /^[0-9]+$/ { print $1, $3, $4 }'; }
before=$(pids)
it_up "$transport" ${up_args[@]+"${up_args[@]}"}
[ "$(pids)" = "$before" ] || it_fail "second cluster up changed the nodes: $before -> $(pids)"
[ "$(echo "$before" | grep -c RUNNING)" = 4 ] || it_fail "not 4 running nodes: $before"
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
# Exit codes scripts rely on: 4 for a broker/controller error, 2 for usage, 3 no cluster.
rc=0; hw topic create t1 --partitions 1 --replication-factor 3 -q 2>/dev/null || rc=$?
[ $rc = 4 ] || it_fail "creating an existing topic exited $rc, want 4 (TOPIC_ALREADY_EXISTS)"
rc=0; hw consume --topic nosuch --max-messages 1 -q 2>/dev/null || rc=$?
[ $rc = 4 ] || it_fail "consuming a missing topic exited $rc, want 4"
rc=0; hw topic create t2 --partitions 1 -q 2>/dev/null || rc=$?
[ $rc = 2 ] || it_fail "create without --replication-factor exited $rc, want 2"
rc=0; "$HIWATER" cluster status --dir "$IT_DIR/none" >/dev/null 2>&1 || rc=$?
[ $rc = 3 ] || it_fail "status of a missing cluster exited $rc, want 3"

it_log "producing $N records with acks=all over $transport"
seq 0 $((N - 1)) | sed 's/^/record-/' >"$IT_DIR/in"
hw produce --topic t1 --acks all --verbose -q <"$IT_DIR/in" >"$IT_DIR/acks" ||
	it_fail "produce exited $?"
# Every record acknowledged at the next offset: "0 <i>" for i = 0..N-1.
seq 0 $((N - 1)) | sed 's/^/0 /' | cmp -s - "$IT_DIR/acks" ||
	it_fail "acknowledged offsets are not 0..$((N - 1)) in order ($(head -3 "$IT_DIR/acks" | tr '\n' ' ')...)"

it_log "consuming them back"
hw consume --topic t1 --from-beginning --max-messages $N --print-offsets -q >"$IT_DIR/out" ||
	it_fail "consume exited $?"
paste <(seq 0 $((N - 1))) "$IT_DIR/in" | cmp -s - "$IT_DIR/out" ||
	it_fail "consumed records differ from produced (first diff: $(paste <(seq 0 $((N - 1))) "$IT_DIR/in" | diff - "$IT_DIR/out" | head -3 | tr '\n' ' '))"

it_log "waiting for HW=$N and a full ISR"
hw_is_n() { [ "$(it_field t1 0 HW)" = "$N" ] && [ "$(it_field t1 0 Isr | tr ',' '\n' | wc -l)" = 3 ]; }
it_wait 20 hw_is_n || it_fail "HW/ISR not $N/3 replicas: $(hw topic describe t1)"

if [ "$direct" = auto ]; then
	# large batches: every replica of t1-0 goes direct, then back to
	# buffered with small records; acks=all and read back (--verify)
	hw bench --topic t1 --acks all --closed-loop --inflight 1 --record-size 16384 --batch-size 3 \
		--duration 1s --warmup 0 --verify --no-progress -q >"$IT_DIR/auto.out" 2>&1 ||
		{ cat "$IT_DIR/auto.out" >&2; it_fail "16 KiB bench into t1 exited $?"; }
	grep -q "verify          OK" "$IT_DIR/auto.out" || { cat "$IT_DIR/auto.out" >&2; it_fail "16 KiB verify"; }
	seq 0 1999 | sed "s/^/after-/" | hw produce --topic t1 --acks all --batch-size 20 -q >/dev/null ||
		it_fail "produce after the bench"
	N=$(it_field t1 0 LEO)
	it_wait 20 hw_is_n || it_fail "HW/ISR not $N/3 replicas after the bench: $(hw topic describe t1)"
	for b in 1 2 3; do
		for sw in "buffered -> direct" "direct -> buffered"; do
			grep -q "t1-0: writes $sw" "$IT_DIR/c/node-$b/hiwaterd.log" ||
				it_fail "broker $b: t1-0 never switched $sw: $(grep 't1-0: writes' "$IT_DIR/c/node-$b/hiwaterd.log")"
		done
	done
	it_log "t1-0 switched buffered -> direct -> buffered on every replica; LEO $N"
fi

# DPDK: fetch responses carry the records by reference (external mbufs on
# the log's chunks, also on memif: hw_dpdk.h) — the brokers copied only
# frame headers into mbufs, never record bytes.
if [ "$transport" = dpdk ]; then
	zc=0 copied=0 frames=0
	for b in 1 2 3; do
		m=$(hw metrics "$b" 2>/dev/null) || it_fail "metrics of broker $b"
		v() { awk -v k="$1" '$1 == k { printf "%.0f", $2; exit }' <<<"$m"; }
		zc=$((zc + $(v hiwater_dpdk_tx_bytes_zero_copy_total)))
		copied=$((copied + $(v hiwater_dpdk_tx_bytes_copied_total)))
		frames=$((frames + $(v 'hiwater_transport_tx_frames_total{plane="data"}')))
	done
	it_log "brokers: $zc record bytes sent by reference, $copied bytes copied in $frames frames"
	# per-port counters (rte_eth_stats) are exported for every memif port,
	# with their MTU (0: memif has none; it never fragments)
	grep -q '^# TYPE hiwater_dpdk_port_rx_packets_total counter' <<<"$m" || it_fail "no DPDK port counters"
	rx=$(awk '$1 ~ /^hiwater_dpdk_port_rx_packets_total\{port="net_memif_/ { s += $2 } END { printf "%.0f", s }' <<<"$m")
	[ "$rx" -gt 0 ] || it_fail "broker 3's memif ports counted no packets received"
	[ "$(v hiwater_dpdk_tx_fragments_total)" = 0 ] || it_fail "memif frames were fragmented"
	it_log "broker 3: $rx packets received on its memif ports (rte_eth_stats)"
fi
if [ "$transport" = dpdk ] && [ -z "$direct" ]; then
	# Followers write large fetched batches from the memif mbuf they arrived
	# in (hw_rxhold.h), not from a copy: 16 KiB records, acks=all, verified.
	hw topic create big --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
		>/dev/null || it_fail "topic create big"
	hw bench --topic big --acks all --closed-loop --inflight 1 --record-size 16384 --batch-size 3 \
		--duration 1s --warmup 0 --verify --no-progress -q >"$IT_DIR/big.out" 2>&1 ||
		{ cat "$IT_DIR/big.out" >&2; it_fail "16 KiB bench exited $?"; }
	grep -q "verify          OK" "$IT_DIR/big.out" || { cat "$IT_DIR/big.out" >&2; it_fail "16 KiB verify"; }
	held=0 holds=0
	for b in 1 2 3; do
		m=$(hw metrics "$b" 2>/dev/null) || it_fail "metrics of broker $b"
		held=$((held + $(awk '$1 ~ /^hiwater_partition_replica_bytes_rx_held_total\{/ { s += $2 } END { printf "%.0f", s }' <<<"$m")))
		holds=$((holds + $(awk '$1 == "hiwater_dpdk_rx_mbuf_holds_total" { printf "%.0f", $2 }' <<<"$m")))
	done
	acked=$(awk '/^records/ { for (i = 1; i <= NF; i++) if ($i == "acked") { gsub(",", "", $(i + 1)); print $(i + 1) } }' "$IT_DIR/big.out")
	it_log "followers: $held fetched bytes written from held mbufs ($holds holds) for $acked acked 16 KiB records"
	# two followers fetched every acked record; most of it in >= 16 KiB responses
	[ "$holds" -gt 0 ] && [ "$held" -ge $(( acked * 16384 )) ] ||
		it_fail "followers held $held bytes in $holds mbufs, want >= one replica's $((acked * 16384))"
fi

# Segment files of the three replicas: byte-identical below the HW. All N
# records are below the HW here, so every replica's segments must hold
# exactly the same bytes (followers copy the leader's batches verbatim).
# The log keeps its tail in memory until it fills or the broker stops:
# stop the brokers cleanly (SIGTERM: flush, close segments) first.
if [ "$direct" = direct ]; then
	# running: each replica's active segment holds ~80 KB of batches and is
	# preallocated one first step (1 MiB) ahead, not to the 2 MiB step's
	# maximum nor to log.segment.bytes (8 MiB)
	for f in $(find "$IT_DIR"/c/node-*/data -path '*t1-0/*.log'); do
		[ "$(stat -c %s "$f")" = 1048576 ] || it_fail "$f: $(stat -c %s "$f") bytes, not preallocated to one 1 MiB first step"
	done
fi
for b in 1 2 3; do hw cluster stop "$b" -q || it_fail "clean stop of broker $b"; done
segs_equal() { it_segs_equal "${1:-t1-0}" $((N * 8)); }
it_wait 10 segs_equal || {
	ls -l "$IT_DIR"/c/node-*/data/*/ >&2 || true
	it_fail "replica segment files differ"
}
# the followers wrote big-0 from held mbufs: byte-identical to the leader's
if [ "$transport" = dpdk ] && [ -z "$direct" ]; then
	it_wait 10 segs_equal big-0 || {
		ls -l "$IT_DIR"/c/node-*/data/*/ >&2 || true
		it_fail "big-0 replica segment files differ (written from held mbufs)"
	}
fi
bytes=$(cat "$(find "$IT_DIR/c/node-1/data" -type d -name 't1-0')"/*.log | wc -c)
if [ "$direct" = direct ]; then
	# every broker's partition log ran with O_DIRECT (no silent fallback)
	for b in 1 2 3; do
		grep -q "t1-0: opened: .*O_DIRECT on" "$IT_DIR/c/node-$b/hiwaterd.log" ||
			it_fail "broker $b did not open t1-0 with O_DIRECT: $(grep 't1-0: opened' "$IT_DIR/c/node-$b/hiwaterd.log")"
	done
	# the files hold exactly their batches: the clean stop trimmed the
	# block padding of the O_DIRECT writes
	python3 "$(dirname "$0")/it_logcheck.py" exact $(find "$IT_DIR"/c/node-*/data -type d -name 't1-0') ||
		it_fail "segment files end in padding or a torn batch after a clean stop"
fi
if [ "$direct" = auto ]; then
	# no padding left and no torn batch where the modes met
	python3 "$(dirname "$0")/it_logcheck.py" exact $(find "$IT_DIR"/c/node-*/data -type d -name 't1-0') ||
		it_fail "segment files end in padding or a torn batch after a clean stop"
fi
if [ "$transport" = dpdk ]; then
	# two followers fetched every byte of the log (and the consumer once more)
	[ "$zc" -ge $((2 * bytes)) ] ||
		it_fail "only $zc bytes sent by reference, the followers alone fetched $((2 * bytes))"
	# headers only: <= 200 bytes per frame (no record bytes copied)
	[ "$copied" -le $((200 * frames)) ] ||
		it_fail "$copied bytes copied in $frames frames: more than headers"
fi
it_log "PASS: $N records at offsets 0..$((N - 1)), consumed in order, 3 identical replicas ($bytes bytes of segments)"
