#!/usr/bin/env bash
# it_bench_producers.sh TRANSPORT [REACTORS] — `hiwater bench
# --producers N` runs N client threads, each a full idempotent producer with
# its own endpoint (udp: its own socket; dpdk: its own memif queue of the
# client slot). Against a 3-broker cluster (RF 3, min.insync.replicas=2, 4
# partitions; brokers with REACTORS reactors, default 1):
#   - open loop, 2 producers, acks=all, --verify --end-to-end: exit 0, every
#     producer acknowledged about its half of the offered records (the
#     per-producer counts of the JSON add up to ackedRecords), verify checked
#     every acknowledged record: 0 lost, 0 duplicated, 0 misplaced, 0 corrupt;
#     end-to-end latency measured for the records of both producers;
#   - closed loop, 3 producers, --inflight 2 per producer: every producer
#     acknowledged records, verify clean;
#   - over dpdk, answers that arrived on another producer's queue were
#     handed over (a one-reactor broker answers every producer on queue 0).
source "$(dirname "$0")/it_lib.sh"
transport=${1:?transport}
reactors=${2:-1}
RATE=4000
SECS=3

if [ "$reactors" -gt 1 ]; then it_up "$transport" --reactors "$reactors"; else it_up "$transport"; fi
hw topic create tb --partitions 4 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"

# check_json FILE PRODUCERS MIN_EACH: per-producer counts and the verify verdict
check_json() {
	python3 - "$@" <<'EOF' || it_fail "bench JSON $1: see above"
import json, sys
path, n, min_each = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = json.load(open(path))[0]
per = r["ackedRecordsPerProducer"]
v = r.get("verify")
ok = True
def bad(msg):
    global ok
    print("bench JSON:", msg, file=sys.stderr)
    ok = False
if len(per) != n:
    bad(f"{len(per)} producers in ackedRecordsPerProducer, want {n}")
if any(x < min_each for x in per):
    bad(f"a producer acknowledged fewer than {min_each} records: {per}")
if sum(per) != r["ackedRecords"]:
    bad(f"per-producer counts {per} do not add up to ackedRecords {r['ackedRecords']}")
if r["failedRecords"] != 0:
    bad(f"failedRecords {r['failedRecords']}")
if not v:
    bad("no verify result")
else:
    if v["checked"] != r["ackedRecords"]:
        bad(f"verify checked {v['checked']} of {r['ackedRecords']} acknowledged records")
    for k in ("lost", "duplicated", "misplaced", "corrupt"):
        if v[k] != 0:
            bad(f"verify {k} = {v[k]}")
print("per producer", per, "acked", r["ackedRecords"], "verify", v)
sys.exit(0 if ok else 1)
EOF
}

it_log "open loop: 2 producers, $RATE records/s for $SECS s, acks=all, --verify --end-to-end ($transport, $reactors reactor(s))"
rc=0
hw bench --topic tb --acks all --producers 2 --rate $RATE --record-size 200 --duration ${SECS}s \
	--warmup 0 --verify --end-to-end --no-progress --json "$IT_DIR/open.json" \
	>"$IT_DIR/open.out" 2>"$IT_DIR/open.err" || rc=$?
[ $rc = 0 ] || { cat "$IT_DIR/open.out" "$IT_DIR/open.err" >&2; it_fail "bench exited $rc"; }
grep -q "verify          OK" "$IT_DIR/open.out" || { cat "$IT_DIR/open.out" >&2; it_fail "verify not OK"; }
grep -qE "^acked/producer +[0-9]+ [0-9]+$" "$IT_DIR/open.out" ||
	{ cat "$IT_DIR/open.out" >&2; it_fail "no per-producer line for 2 producers"; }
# each producer offers RATE/2 records/s: nearly all of its half acknowledged
check_json "$IT_DIR/open.json" 2 $((RATE * SECS / 2 * 95 / 100))
e2e=$(awk '/^end-to-end latency/ { gsub(/[^0-9 ]/, " "); print $NF }' "$IT_DIR/open.out")
[ "${e2e:-0}" -ge $((RATE * SECS * 95 / 100)) ] ||
	{ cat "$IT_DIR/open.out" >&2; it_fail "end-to-end latency of only ${e2e:-0} records"; }
if [ "$transport" = dpdk ]; then
	fwd=$(sed -n 's/.* \([0-9][0-9]*\) responses handed between producer endpoints, \([0-9]*\) dropped.*/\1 \2/p' \
		"$IT_DIR/open.err")
	[ -n "$fwd" ] && [ "${fwd% *}" -gt 0 ] ||
		{ cat "$IT_DIR/open.err" >&2; it_fail "no answer was handed between producer queues"; }
	it_log "answers handed between producer queues, dropped: $fwd"
fi
grep -E "^(throughput|records|acked/producer|verify)" "$IT_DIR/open.out"

it_log "closed loop: 3 producers, --inflight 2 each, 1 s"
rc=0
hw bench --topic tb --acks all --producers 3 --closed-loop --inflight 2 --record-size 200 \
	--duration 1s --warmup 0 --verify --no-progress --json "$IT_DIR/closed.json" \
	>"$IT_DIR/closed.out" 2>"$IT_DIR/closed.err" || rc=$?
[ $rc = 0 ] || { cat "$IT_DIR/closed.out" "$IT_DIR/closed.err" >&2; it_fail "closed-loop bench exited $rc"; }
check_json "$IT_DIR/closed.json" 3 1
grep -E "^(throughput|acked/producer|verify)" "$IT_DIR/closed.out"
it_log "OK"
