#!/usr/bin/env bash
# it_rig_netem.sh PORT — a real lossy, reordering link: on a `--rig netns`
# cluster one follower's data link gets `cluster netem N 'delay 100us
# reorder 10% loss 5%'` (tc netem on both ends of its data veth) while
# `bench --verify` writes with acks=all. Every acknowledged record is read
# back exactly once (0 lost, 0 duplicated): lost fetch datagrams are
# healed by the next fetch, lost produce answers by the idempotent
# producer's retries. The qdiscs really dropped frames (tc statistics), and
# `netem N off` removes them. Then `cluster partition N` / `heal N`.
source "$(dirname "$0")/it_lib.sh"
port=${1:?port}

# A lost fetch (request or response) is re-sent after replica.fetch.wait.max.ms
# + 200 ms (hw_rm.h fetch_request_timeout_ms): a short wait keeps the HW moving
# on a link that loses one datagram in ten round trips.
it_rig_up "$port" --config replica.fetch.wait.max.ms=50 --config replica.lag.time.max.ms=3000 \
	--config broker.session.timeout.ms=2000 --config broker.heartbeat.interval.ms=250
tag=$(hw cluster status | sed -n 's/^rig=netns port=[a-z_]* tag=\([0-9a-f]*\) .*/\1/p')
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
leader=$(it_field t1 0 Leader)
follower=$(it_field t1 0 Replicas | tr ',' '\n' | grep -vx "$leader" | head -1)
[ -n "$follower" ] || it_fail "no follower in $(hw topic describe t1)"

hw cluster netem "$follower" 'delay 100us reorder 10% loss 5%' -q ||
	it_fail "cluster netem $follower (tc netem refused: see above)"
hw cluster status | grep "^rig node $follower:.*netem" ||
	it_fail "cluster status shows no netem on node $follower: $(hw cluster status)"
it_log "follower $follower's data link: delay 100us reorder 10% loss 5%; bench --verify (leader $leader)"
brc=0
hw bench --topic t1 --acks all --rate 500 --record-size 1024 --batch-size 16 --duration 12s \
	--warmup 0 --verify --no-progress --timeout 300ms >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" || brc=$?
[ $brc = 0 ] || { cat "$IT_DIR/bench.out" "$IT_DIR/bench.err" >&2; it_fail "bench exited $brc"; }
grep -E "^(throughput|records|errors|verify)" "$IT_DIR/bench.out"
grep -q "verify          OK: .* 0 lost, 0 duplicated, 0 misplaced, 0 corrupt" "$IT_DIR/bench.out" ||
	it_fail "verify did not find every record exactly once"
acked=$(awk '/^records/ { for (i = 1; i <= NF; i++) if ($i == "acked") { gsub(",", "", $(i + 1)); print $(i + 1) } }' "$IT_DIR/bench.out")
[ "${acked:-0}" -ge 3000 ] || it_fail "only ${acked:-0} records acknowledged in 12 s at 500/s"

# the follower's link really lost frames, in both directions
drops() { tc -n "$1" -s qdisc show dev "$2" | awk '/dropped/ { gsub(",", "", $7); print $7; exit }'; }
d_node=$(drops "hwr$tag-n$follower" data0) d_sw=$(drops "hwr$tag-sw" "hwrd$follower")
it_log "netem dropped $d_node frames from follower $follower and $d_sw frames to it"
[ "${d_node:-0}" -gt 0 ] && [ "${d_sw:-0}" -gt 0 ] || it_fail "no frame dropped on the lossy link"

hw cluster netem "$follower" off -q || it_fail "netem off"
hw cluster status | grep -q "^rig node $follower:.*netem" && it_fail "netem still on after off"
it_wait 30 isr_has t1 0 "$follower" || it_fail "follower $follower not in the ISR after the link healed"

# A partition: the follower's control and data links down. It leaves the
# ISR (and is fenced), acks=all writes go on with the other two; healed,
# it catches up and is back in the ISR.
hw cluster partition "$follower" -q || it_fail "cluster partition $follower"
hw cluster status | grep -q "^rig node $follower:.*link=PARTITIONED" || it_fail "status does not show the partition"
it_wait 15 isr_lacks t1 0 "$follower" || it_fail "partitioned follower $follower still in ISR: $(hw topic describe t1)"
seq 1 200 | hw produce --topic t1 --acks all --batch-size 16 -q || it_fail "acks=all produce with $follower partitioned"
hw cluster heal "$follower" -q || it_fail "cluster heal $follower"
it_wait 30 isr_has t1 0 "$follower" || it_fail "healed follower $follower not back in ISR: $(hw topic describe t1)"
it_log "partitioned follower $follower left the ISR, writes went on, healed it is back: $(it_field t1 0 Isr)"
it_log "PASS ($port)"
