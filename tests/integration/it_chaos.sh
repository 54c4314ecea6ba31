#!/usr/bin/env bash
# it_chaos.sh TRANSPORT — docs/security.md "Chaos": a seeded schedule of
# SIGKILL, SIGSTOP/SIGCONT and SIGTERM of brokers and of the controller at
# random moments while `bench --acks all --verify` runs: every acknowledged
# record must be found exactly once at its offset afterwards (records the
# cluster refused or timed out are not acknowledged and not counted). The
# seed and a one-line repro are printed first; HW_TEST_SEED replays it.
source "$(dirname "$0")/it_lib.sh"
transport=${1:-udp}
seed=${HW_TEST_SEED:-$(( $(date +%s) % 100000 ))}
echo "# seed $seed (repro: HW_TEST_SEED=$seed meson test -C build chaos_$transport)"
RANDOM=$seed
it_up "$transport" --config broker.session.timeout.ms=3000 --config broker.heartbeat.interval.ms=500 \
	--config replica.lag.time.max.ms=3000 --config hiwater.controlled.shutdown.timeout.ms=4000
hw topic create t1 --partitions 3 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"

dur=20
hw bench --topic t1 --acks all --rate 400 --record-size 200 --batch-size 4 --duration "${dur}s" \
	--warmup 0 --verify --no-progress --timeout 500ms >"$IT_DIR/bench.out" 2>"$IT_DIR/bench.err" &
IT_PIDS+=($!)
bench=$!
t0=$(date +%s)
pick() { echo $(( RANDOM % $1 )); }
nap() { sleep "$(( 1 + $(pick 2) )).$(pick 10)"; }
actions=0
while [ $(( $(date +%s) - t0 )) -lt $((dur - 4)) ]; do
	nap
	node=$(( 1 + $(pick 3) ))
	case $(pick 8) in
	0|1) it_log "SIGKILL broker $node"; hw cluster kill "$node" -q >/dev/null; nap
	     hw cluster start "$node" -q >/dev/null || it_fail "restart broker $node (seed $seed)" ;;
	2|3) it_log "SIGSTOP broker $node"; hw cluster pause "$node" -q >/dev/null; nap
	     it_log "SIGCONT broker $node"; hw cluster resume "$node" -q >/dev/null ;;
	4|5) it_log "SIGTERM broker $node"; hw cluster stop "$node" -q --timeout 15000 >/dev/null || true
	     hw cluster start "$node" -q >/dev/null || it_fail "restart broker $node (seed $seed)" ;;
	6)   it_log "SIGKILL controller"; hw cluster kill 0 -q >/dev/null; nap
	     hw cluster start 0 -q >/dev/null || it_fail "restart the controller (seed $seed)" ;;
	7)   it_log "SIGSTOP controller"; hw cluster pause 0 -q >/dev/null; nap
	     it_log "SIGCONT controller"; hw cluster resume 0 -q >/dev/null ;;
	esac
	actions=$((actions + 1))
done
brc=0; wait "$bench" || brc=$?
cat "$IT_DIR/bench.out"
# exit 0, or 1 when some records were refused / timed out (not acknowledged);
# never the verify failure
[ "$brc" = 0 ] || [ "$brc" = 1 ] || { cat "$IT_DIR/bench.err" >&2; it_fail "bench exited $brc (seed $seed)"; }
grep -q "verify          OK" "$IT_DIR/bench.out" || it_fail "verify not OK (seed $seed, repro: HW_TEST_SEED=$seed meson test -C build chaos_$transport)"
acked=$(sed -n 's/^records .*acked \([0-9]*\).*/\1/p' "$IT_DIR/bench.out")
[ "${acked:-0}" -gt 0 ] || it_fail "nothing acknowledged under chaos (seed $seed)"
it_log "PASS: $actions faults, $acked acknowledged records, 0 lost (seed $seed)"
