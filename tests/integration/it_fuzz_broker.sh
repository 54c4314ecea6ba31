#!/usr/bin/env bash
# it_fuzz_broker.sh — docs/wire.md#decoding-and-drops: a broker receiving
# 100,000 random
# and mutated datagrams (half on its control endpoint, half on its udp data
# endpoint) keeps serving, and its drop counters account for them: the
# Prometheus hiwater_transport_drops_total of the broker grows by exactly the
# number sent (less what the kernel itself dropped on a full socket buffer,
# read from /proc/net/udp), and the kinds with one possible reason match
# that reason's counter exactly.
source "$(dirname "$0")/it_lib.sh"
seed=${HW_TEST_SEED:-$(date +%s)}
echo "# seed $seed (repro: HW_TEST_SEED=$seed meson test -C build fuzz_broker_udp)"

it_up udp
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
leader=$(it_field t1 0 Leader)
mport=$((IT_PORT + 400 + leader))

metrics() { curl -sf "http://127.0.0.1:$mport/metrics"; }
drops() { metrics | awk -v r="$1" '/^hiwater_transport_drops_total/ && $0 ~ r { s += $2 } END { print s + 0 }'; }
# Kernel drops on the broker's UDP sockets (last column of /proc/net/udp).
kdrops() {
	local total=0
	for p in $((IT_PORT + leader)) $((IT_PORT + 100 + leader)); do
		local hex
		hex=$(printf '%04X' "$p")
		total=$((total + $(awk -v h=":$hex" '$2 ~ h"$" { s += $NF } END { print s + 0 }' /proc/net/udp)))
	done
	echo $total
}

seq 1 100 | hw produce --topic t1 --acks all -q >/dev/null || it_fail "produce before fuzzing"
before=$(drops .) kbefore=$(kdrops)
fb=$(drops FOREIGN_CLUSTER) vb=$(drops BAD_VERSION) gb=$(drops BAD_FLAGS)
[ -n "$before" ] || it_fail "no metrics on 127.0.0.1:$mport"

it_log "fuzzing broker $leader: 50,000 datagrams on control, 50,000 on data"
"$HIWATER" fuzz-send --dir "$IT_DIR/c" --node "$leader" --count 50000 --seed "$seed" --plane control \
	>"$IT_DIR/f1" || it_fail "fuzz-send control"
"$HIWATER" fuzz-send --dir "$IT_DIR/c" --node "$leader" --count 50000 --seed $((seed + 1)) --plane data \
	>"$IT_DIR/f2" || it_fail "fuzz-send data"
sent=$(( $(sed -n 's/^fuzz_sent=//p' "$IT_DIR/f1") + $(sed -n 's/^fuzz_sent=//p' "$IT_DIR/f2") ))
[ "$sent" = 100000 ] || it_fail "sent $sent datagrams, wanted 100000"
kind() { awk -v k="$1" '$1 == k { s += $2 } END { print s + 0 }' "$IT_DIR/f1" "$IT_DIR/f2"; }

# Still serving: same broker process, answers describe, takes and serves records.
state=$(hw cluster status | awk -v n="$leader" '$1 == n { print $4 }')
[ "$state" = RUNNING ] || it_fail "broker $leader is $state after fuzzing"
seq 101 200 | hw produce --topic t1 --acks all -q >/dev/null || it_fail "produce after fuzzing"
n=$(hw consume --topic t1 --from-beginning --max-messages 200 -q | wc -l)
[ "$n" = 200 ] || it_fail "consumed $n of 200 records after fuzzing"

settled() { [ $(( $(drops .) - before + $(kdrops) - kbefore )) -ge "$sent" ]; }
it_wait 10 settled || true
counted=$(( $(drops .) - before )) kernel=$(( $(kdrops) - kbefore ))
it_log "sent $sent, broker counted $counted drops, kernel dropped $kernel"
[ $((counted + kernel)) = "$sent" ] || it_fail "drop counters do not account for the datagrams: $counted + $kernel kernel != $sent
$(metrics | grep -E '^hiwater_transport_drops_total' | grep -v ' 0$')"
if [ "$kernel" = 0 ]; then
	# Kinds with exactly one possible reason, exactly.
	[ $(( $(drops FOREIGN_CLUSTER) - fb )) = "$(kind foreign)" ] || it_fail "FOREIGN_CLUSTER != foreign sent"
	[ $(( $(drops BAD_VERSION) - vb )) = "$(kind version)" ] || it_fail "BAD_VERSION != version sent"
	[ $(( $(drops BAD_FLAGS) - gb )) = "$(kind flags)" ] || it_fail "BAD_FLAGS != flags sent"
fi
metrics | grep -E '^hiwater_transport_drops_total' | grep -v ' 0$'
it_log "PASS"
