#!/usr/bin/env bash
# it_throttle.sh TRANSPORT — the replication throttle (KIP-73) on real
# processes: a follower stopped while its leader took a backlog of B bytes
# restarts outside the ISR and copies the backlog at the configured
# leader.replication.throttled.rate R, so catching up takes about B/R
# seconds (unthrottled it takes well under a second), then rejoins the ISR.
# The topic's leader.replication.throttled.replicas is set at runtime with
# `hiwater topic alter-config` ('*'); a malformed list is INVALID_CONFIG.
source "$(dirname "$0")/it_lib.sh"
source "$(dirname "$0")/it_failover_lib.sh"
transport=${1:?transport}
rate=400000 # bytes/s

it_up "$transport" --config broker.session.timeout.ms=3000 --config broker.heartbeat.interval.ms=300 \
	--config replica.lag.time.max.ms=3000 --config leader.replication.throttled.rate=$rate
hw topic create t1 --partitions 1 --replication-factor 2 --config min.insync.replicas=1 -q \
	>/dev/null || it_fail "topic create"
rc=0; hw topic alter-config t1 leader.replication.throttled.replicas=0:x -q 2>/dev/null || rc=$?
[ $rc = 4 ] || it_fail "alter-config of a malformed replica list: exit $rc, expected 4 (INVALID_CONFIG)"
hw topic alter-config t1 'leader.replication.throttled.replicas=*' -q || it_fail "alter-config"
hw topic describe t1 | grep -q 'leader.replication.throttled.replicas=\*' ||
	it_fail "describe does not show the throttle config: $(hw topic describe t1)"
leader=$(it_field t1 0 Leader)
f=$(it_field t1 0 Replicas | tr ',' '\n' | grep -vx "$leader" | head -1)

hw cluster stop "$f" -q || it_fail "cluster stop $f"
it_wait 5 isr_lacks t1 0 "$f" || it_fail "$f still in the ISR after a clean stop"
# the backlog: ~4 MB acknowledged by the leader alone
hw bench --topic t1 --acks 1 --rate 2000 --record-size 1000 --batch-size 20 --duration 2s \
	--warmup 0 --verify --no-progress >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" ||
	{ cat "$IT_DIR/bench.out" "$IT_DIR/bench.err" >&2; it_fail "bench"; }
grep -q "verify          OK" "$IT_DIR/bench.out" || it_fail "bench verify not OK"

t0=$(date +%s%N)
hw cluster start "$f" -q || it_fail "cluster start $f"
metric() { hw metrics "$1" 2>/dev/null | awk -v k="$2" 'index($1, k) == 1 { s += $2 } END { print s + 0 }'; }
if ! it_wait 40 isr_has t1 0 "$f"; then
	hw topic describe t1 >&2 || true
	for n in "$leader" "$f"; do
		hw metrics "$n" 2>/dev/null | grep -E "replication|replica_bytes|fetch" | grep -v '^#' >&2 || true
	done
	it_fail "$f did not rejoin the ISR within 40 s"
fi
t1=$(date +%s%N)
copied=$(metric "$f" hiwater_partition_replica_bytes_appended_total)
held=$(metric "$leader" hiwater_leader_replication_throttled_fetches_total)
sent=$(metric "$leader" hiwater_leader_replication_throttled_bytes_total)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
expect=$(awk -v c="$copied" -v r="$rate" 'BEGIN { printf "%.2f", c / r }')
it_log "follower $f copied $copied B at $rate B/s: back in the ISR after $secs s (B/R = $expect s);" \
	"leader held back $held answers, recorded $sent B"
awk -v c="$copied" 'BEGIN { exit !(c >= 3000000) }' || it_fail "backlog too small: $copied B"
[ "$held" -gt 0 ] || it_fail "the leader never held a fetch back"
# restart and registration add a second or two; the throttle admits one
# window (1 s) of credit at once and then holds R (unthrottled: < 1 s)
awk -v s="$secs" -v e="$expect" 'BEGIN { exit !(s >= 0.7 * e && s <= 1.3 * e + 3) }' ||
	it_fail "catch-up took $secs s, expected about $expect s"
it_final_check t1 0
it_log "PASS"
