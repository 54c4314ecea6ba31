#!/usr/bin/env bash
# it_rig_reactors.sh PORT — `cluster up --rig netns --port PORT --reactors 2`:
# every broker runs two reactors on a two-queue port (af_packet qpairs=2 on
# a two-queue veth), the client a 4-queue port. `bench --producers 2
# --verify` over 4 partitions: every acknowledged record read back exactly
# once, no frame dropped as STALE_SENDER or REPLAYED (each reactor and each
# producer is a wire stream of its own), and both reactors of every broker
# received frames on their own queue.
source "$(dirname "$0")/it_lib.sh"
port=${1:?port}

it_rig_up "$port" --reactors 2
hw topic create t1 --partitions 4 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
brc=0
hw bench --topic t1 --acks all --rate 1000 --record-size 1024 --batch-size 16 --duration 8s \
	--warmup 0 --verify --no-progress --producers 2 >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" || brc=$?
[ $brc = 0 ] || { cat "$IT_DIR/bench.out" "$IT_DIR/bench.err" >&2; it_fail "bench exited $brc"; }
grep -E "^(throughput|records|errors|verify)" "$IT_DIR/bench.out"
grep -q "verify          OK: .* 0 lost, 0 duplicated, 0 misplaced, 0 corrupt" "$IT_DIR/bench.out" ||
	it_fail "verify did not find every record exactly once"
for b in 1 2 3; do
	m=$(hw metrics "$b" 2>/dev/null) || it_fail "metrics of broker $b"
	bad=$(awk '$1 ~ /^hiwater_transport_drops_total\{.*reason="(STALE_SENDER|REPLAYED)"/ { s += $2 } END { print s + 0 }' <<<"$m")
	[ "$bad" = 0 ] || it_fail "broker $b dropped $bad frames as STALE_SENDER/REPLAYED"
	for r in 0 1; do
		n=$(awk -v r="$r" '$1 ~ ("^hiwater_reactor_shard_dpdk_rx_packets_total\\{reactor=\"" r "\",queue=\"" r "\"") { print $2 }' <<<"$m")
		[ "${n:-0}" -gt 0 ] 2>/dev/null || it_fail "broker $b reactor $r received nothing on queue $r"
	done
done
it_log "PASS ($port): 2 producers, 2 reactors per broker on 2-queue ports"
