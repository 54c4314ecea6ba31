#!/usr/bin/env bash
# it_breakdown.sh — `hiwater bench --breakdown` (docs/breakdown.md) against a
# 3-broker memif cluster (RF 3, min.insync.replicas=2), closed loop, one
# record in flight, acks=all:
#   - every measured record came back with the leader's stage timing (none
#     untimed) and its critical replica is a follower or the leader's write,
#     the counts adding up to the records;
#   - every stage row is in the JSON, each column non-negative;
#   - both followers' acknowledgements (append -> their acking fetch) are
#     there for (nearly) every record, above zero;
#   - the follower's own rows are there: the leader<->follower network and
#     the follower write are above zero at the median (a round trip to
#     another process and a write cannot take no time), so the turnaround
#     the follower reports in its FETCH and the leader's stamps arrived;
#   - the stages of the median records ("at p50") add up to the measured p50
#     within 10% (they are those records' own latencies, so only the band's
#     spread around the median separates them), and the stage means to the
#     mean latency within 2% (an identity, up to histogram rounding);
#   - the brokers' hiwater_produce_stage_time_seconds histograms counted
#     every timed record in every stage;
#   - without --breakdown the JSON has no breakdown (nothing asked, nothing
#     timed), and --breakdown with acks=1 is a usage error.
source "$(dirname "$0")/it_lib.sh"

it_up dpdk
hw topic create tb --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"

it_log "closed loop acks=all --breakdown, 3 s"
hw bench --topic tb --acks all --closed-loop --inflight 1 --record-size 100 --batch-size 1 \
	--duration 3s --warmup 1s --no-progress --breakdown --json "$IT_DIR/bd.json" -q \
	>"$IT_DIR/bd.txt" || { cat "$IT_DIR/bd.txt"; it_fail "bench --breakdown exited $?"; }
sed -n '/^breakdown/,/^  critical/p' "$IT_DIR/bd.txt"
python3 - "$IT_DIR/bd.json" <<'PY' || it_fail "breakdown JSON: see above"
import json, sys
r = json.load(open(sys.argv[1]))[0]
b = r.get("breakdown")
ok = True
def bad(msg):
    global ok
    print("breakdown:", msg, file=sys.stderr)
    ok = False
if not b:
    print("no breakdown in the JSON", file=sys.stderr); sys.exit(1)
want = ["client_queue", "client_to_leader", "queue", "append", "leader_write", "dispatch_wait", "dispatch_send",
        "follower_net", "follower_write", "follower_send", "hw_advance", "respond", "leader_to_client"]
got = [s["stage"] for s in b["stages"]]
if got != want:
    bad(f"stages {got}, want {want}")
for s in b["stages"]:
    for k in ("atP50Us", "atP99Us", "p50Us", "p99Us", "meanUs"):
        if not (s[k] >= 0):
            bad(f"{s['stage']} {k} = {s[k]}")
if b["records"] < 100:
    bad(f"only {b['records']} timed records")
if b["untimed"] != 0:
    bad(f"{b['untimed']} acknowledged records without timing")
if sum(b["critical"].values()) != b["records"]:
    bad(f"critical counts {b['critical']} do not add up to {b['records']}")
st = {s["stage"]: s for s in b["stages"]}
if sum(v for k, v in b["critical"].items() if k != "leader") > 0:
    for k in ("follower_net", "follower_write"):
        if st[k]["atP50Us"] <= 0:
            bad(f"{k} at p50 is {st[k]['atP50Us']}: the follower's part is missing")
fol = {f["id"]: f for f in b["followers"]}
if len(fol) != 2:
    bad(f"followers {sorted(fol)}: want both followers' acknowledgements")
for fid, f in fol.items():
    if f["records"] < b["records"] * 0.9 or not f["ackP50Us"] > 0:
        bad(f"follower {fid}: {f['records']} acknowledgements, ack p50 {f['ackP50Us']} us")
m50, s50 = b["measuredP50Us"], b["sumAtP50Us"]
if abs(s50 - m50) > 0.10 * m50:
    bad(f"stages at p50 add up to {s50:.1f} us, measured p50 {m50:.1f} us (> 10% apart)")
mm, sm = b["measuredMeanUs"], b["sumMeanUs"]
if abs(sm - mm) > 0.02 * mm:
    bad(f"stage means add up to {sm:.1f} us, measured mean {mm:.1f} us (> 2% apart)")
print(f"breakdown: {b['records']} records, stages at p50 {s50:.1f} us vs measured p50 {m50:.1f} us, "
      f"means {sm:.1f} vs {mm:.1f} us, critical {b['critical']}")
sys.exit(0 if ok else 1)
PY

# the brokers keep the same stages as histograms: the leader's
# hiwater_produce_stage_time_seconds counted one per timed record, per stage
recs=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["breakdown"]["records"])' "$IT_DIR/bd.json")
hw metrics --grep 'hiwater_produce_stage_time_seconds_count' >"$IT_DIR/m.txt" || it_fail "hiwater metrics exited $?"
for st in queue append leader_write dispatch_wait dispatch_send follower_net follower_write follower_send hw_advance respond; do
	n=$(awk -v k="hiwater_produce_stage_time_seconds_count{stage=\"$st\"}" '$2 == k { s += $3 } END { print s + 0 }' "$IT_DIR/m.txt")
	[ "$n" -ge "$recs" ] || it_fail "stage $st: brokers counted $n timed produces, the bench $recs"
done
it_log "brokers' stage histograms: every stage counted >= $recs timed produces"

it_log "without --breakdown: no breakdown in the JSON"
hw bench --topic tb --acks all --closed-loop --inflight 1 --record-size 100 --batch-size 1 \
	--duration 500ms --warmup 200ms --no-progress --json "$IT_DIR/plain.json" -q >/dev/null ||
	it_fail "plain bench exited $?"
! grep -q '"breakdown"' "$IT_DIR/plain.json" || it_fail "a breakdown without --breakdown"

rc=0
hw bench --topic tb --acks 1 --breakdown --duration 200ms -q >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || it_fail "--breakdown --acks 1 exited $rc, want 2 (usage)"
it_log "OK"
