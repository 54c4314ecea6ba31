#!/usr/bin/env bash
# it_reactors.sh TRANSPORT — apps/hiwaterd/README.md "Reactors": every
# broker runs two pinned
# reactors (`cluster up --reactors 2`: hiwater.reactor.lcores=0,1) that share nothing; partitions are
# sharded over them ((topic id + partition) mod 2). A 3-broker cluster, a
# topic of 4 partitions (RF 3, min ISR 2) so both reactors of every broker
# own partitions; acks=all produce to every partition, every record consumed
# back at its offset, HW and ISR complete, and each broker's metrics show
# both reactors did data work (busy iterations, messages handled, produce
# requests led by each reactor somewhere in the cluster).
source "$(dirname "$0")/it_lib.sh"
transport=${1:?transport}
P=4
N=1000   # records per partition

it_up "$transport" --reactors 2
grep -qE '^hiwater\.reactor\.lcores=[0-9]+,[0-9]+$' "$IT_DIR/c/node-1/server.properties" ||
	it_fail "cluster up --reactors 2 did not configure two reactors: $(grep lcores "$IT_DIR/c/node-1/server.properties")"
hw topic create tr --partitions $P --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"

for p in $(seq 0 $((P - 1))); do
	seq 0 $((N - 1)) | sed "s/^/p$p-record-/" >"$IT_DIR/in$p"
	hw produce --topic tr --partition "$p" --acks all --batch-size 100 --verbose -q <"$IT_DIR/in$p" \
		>"$IT_DIR/acks$p" ||
		it_fail "produce to partition $p exited $?"
	seq 0 $((N - 1)) | sed "s/^/$p /" | cmp -s - "$IT_DIR/acks$p" ||
		it_fail "partition $p: acknowledged offsets are not 0..$((N - 1)) ($(head -2 "$IT_DIR/acks$p" | tr '\n' ' ')...)"
done
it_log "produced $N records with acks=all to each of $P partitions"

for p in $(seq 0 $((P - 1))); do
	hw consume --topic tr --partition "$p" --from-beginning --max-messages $N --print-offsets -q \
		>"$IT_DIR/out$p" || it_fail "consume of partition $p exited $?"
	paste <(seq 0 $((N - 1))) "$IT_DIR/in$p" | cmp -s - "$IT_DIR/out$p" ||
		it_fail "partition $p: consumed records differ ($(paste <(seq 0 $((N - 1))) "$IT_DIR/in$p" | diff - "$IT_DIR/out$p" | head -3 | tr '\n' ' '))"
done
it_log "consumed every record back at its offset"

all_full() {
	local p
	for p in $(seq 0 $((P - 1))); do
		[ "$(it_field tr "$p" HW)" = "$N" ] || return 1
		[ "$(it_field tr "$p" Isr | tr ',' '\n' | wc -l)" = 3 ] || return 1
	done
}
it_wait 20 all_full || it_fail "HW/ISR not $N/3 on every partition: $(hw topic describe tr)"

# metric VALUE of the exact series NAME on NODE
# (the whole page first: awk stopping early must not SIGPIPE the CLI)
metric() { local page; page=$(hw metrics "$1" 2>/dev/null) || true; awk -v k="$2" '$1 == k { print $2; exit }' <<<"$page"; }
declare -A led
for b in 1 2 3; do
	for r in 0 1; do
		busy=$(metric "$b" "hiwater_reactor_shard_busy_iterations_total{reactor=\"$r\"}")
		parts=$(metric "$b" "hiwater_reactor_shard_partitions{reactor=\"$r\"}")
		local_msgs=$(metric "$b" "hiwater_reactor_shard_frames_total{reactor=\"$r\",what=\"local\"}")
		prod=$(metric "$b" "hiwater_reactor_shard_produce_requests_total{reactor=\"$r\"}")
		it_log "broker $b reactor $r: busy iterations $busy, partitions $parts, messages handled $local_msgs, produce requests $prod"
		[ "${busy:-0}" -gt 0 ] || it_fail "broker $b reactor $r: no busy iterations"
		[ "${parts:-0}" = $((P / 2)) ] || it_fail "broker $b reactor $r owns ${parts:-0} partitions, want $((P / 2))"
		[ "${local_msgs:-0}" -gt 0 ] || it_fail "broker $b reactor $r handled no messages"
		led[$r]=$(( ${led[$r]:-0} + ${prod:-0} ))
	done
done
for r in 0 1; do
	[ "${led[$r]}" -gt 0 ] || it_fail "no reactor $r in the cluster served a produce request"
done
# Request-latency histograms (Kafka RequestMetrics) count every reactor's
# requests: on each broker the Produce series' _count (summed over acks)
# equals the produce requests its reactors counted per partition. Data
# reactors publish their partition counters every <= 500 ms: retry a while.
sum_series() { # NODE PREFIX: the sum of every series whose name starts with PREFIX
	local page; page=$(hw metrics "$1" 2>/dev/null) || true
	awk -v k="$2" 'index($1, k) == 1 { s += $2 } END { printf "%d\n", s }' <<<"$page"
}
hist_matches() {
	local b=$1 h r
	h=$(sum_series "$b" 'hiwater_request_total_time_seconds_count{request="Produce"')
	r=$(sum_series "$b" 'hiwater_reactor_shard_produce_requests_total{')
	echo "$h $r" >"$IT_DIR/hist$b"
	[ "$r" -gt 0 ] && [ "$h" = "$r" ]
}
hist_total=0
for b in 1 2 3; do
	it_wait 5 hist_matches "$b" ||
		it_fail "broker $b: Produce requests in the latency histograms / counted by its reactors: $(cat "$IT_DIR/hist$b") (every reactor's requests must be in /metrics)"
	read -r h _ <"$IT_DIR/hist$b"
	hist_total=$((hist_total + h))
done
[ "$hist_total" = $(( ${led[0]} + ${led[1]} )) ] ||
	it_fail "Produce requests in the histograms over all brokers $hist_total, led by the reactors ${led[0]} + ${led[1]}"
it_log "request histograms: $hist_total Produce requests across brokers = reactor 0's ${led[0]} + reactor 1's ${led[1]}"
# reactor 0 of each broker hands client requests for reactor 1's partitions over
fwd=0
for b in 1 2 3; do
	v=$(metric "$b" "hiwater_reactor_shard_frames_total{reactor=\"1\",what=\"forwarded_in\"}")
	fwd=$((fwd + ${v:-0}))
done
[ "$fwd" -gt 0 ] || it_fail "no frame was handed from reactor 0 to reactor 1 on any broker"
if [ "$transport" = dpdk ]; then
	# DPDK: one queue pair per reactor. Brokers have the same reactor count,
	# so reactor 1 of a follower fetches from reactor 1 of the leader on
	# queue 1 both ways: every broker's reactor 1 must have received packets
	# on RX queue 1 and sent packets on TX queue 1 itself (not via reactor 0).
	fb=0
	for b in 1 2 3; do
		rx1=$(metric "$b" "hiwater_reactor_shard_dpdk_rx_packets_total{reactor=\"1\",queue=\"1\"}")
		tx1=$(metric "$b" "hiwater_reactor_shard_dpdk_tx_packets_total{reactor=\"1\",queue=\"1\"}")
		rx0=$(metric "$b" "hiwater_reactor_shard_dpdk_rx_packets_total{reactor=\"0\",queue=\"0\"}")
		v=$(metric "$b" "hiwater_reactor_shard_frames_total{reactor=\"1\",what=\"tx_fallback\"}")
		fb=$((fb + ${v:-0}))
		it_log "broker $b: reactor 1 received ${rx1:-0} packets on queue 1 and sent ${tx1:-0} on it; reactor 0 received ${rx0:-0} on queue 0; reactor 1 fallbacks ${v:-0}"
		[ "${rx1:-0}" -gt 0 ] || it_fail "broker $b: reactor 1 received nothing on its own RX queue"
		[ "${tx1:-0}" -gt 0 ] || it_fail "broker $b: reactor 1 sent nothing on its own TX queue"
		[ "${rx0:-0}" -gt 0 ] || it_fail "broker $b: reactor 0 received nothing on queue 0"
	done
	# the CLI clients connect one memif ring pair: reactor 1's answers to
	# them (produce acks, consumer fetches) cannot use queue 1 and go out
	# through reactor 0 — the fallback the produce/consume above relied on
	[ "$fb" -gt 0 ] || it_fail "no reactor 1 fell back to reactor 0 for the one-queue CLI client"

	# Link down/up on every queue: SIGKILL broker 1 (the memif server of
	# both its broker links: brokers 2 and 3 must re-dial both ring pairs
	# while their reactor 1 keeps polling queue 1), start it again, produce
	# more with acks=all. The new broker 1 can only see packets on its queue
	# 1 if the peers reconnected with two rings and announced them.
	hw cluster kill 1 -q || it_fail "cluster kill 1"
	sleep 1
	hw cluster start 1 -q || it_fail "cluster start 1"
	for p in $(seq 0 $((P - 1))); do
		seq $N $((2 * N - 1)) | sed "s/^/p$p-record-/" >>"$IT_DIR/in$p"
		seq $N $((2 * N - 1)) | sed "s/^/p$p-record-/" |
			hw produce --topic tr --partition "$p" --acks all --batch-size 100 -q >/dev/null ||
			it_fail "produce to partition $p after the restart of broker 1 exited $?"
	done
	all_full2() {
		local p
		for p in $(seq 0 $((P - 1))); do
			[ "$(it_field tr "$p" HW)" = "$((2 * N))" ] || return 1
			[ "$(it_field tr "$p" Isr | tr ',' '\n' | wc -l)" = 3 ] || return 1
		done
	}
	it_wait 30 all_full2 || it_fail "after restarting broker 1: HW/ISR not $((2 * N))/3: $(hw topic describe tr)"
	rx1=$(metric 1 "hiwater_reactor_shard_dpdk_rx_packets_total{reactor=\"1\",queue=\"1\"}")
	tx1=$(metric 1 "hiwater_reactor_shard_dpdk_tx_packets_total{reactor=\"1\",queue=\"1\"}")
	it_log "restarted broker 1: reactor 1 received ${rx1:-0} packets on queue 1, sent ${tx1:-0}"
	[ "${rx1:-0}" -gt 0 ] || it_fail "restarted broker 1: nothing arrived on queue 1 (peers did not reconnect it)"
	[ "${tx1:-0}" -gt 0 ] || it_fail "restarted broker 1: nothing sent on queue 1"
	for p in $(seq 0 $((P - 1))); do
		hw consume --topic tr --partition "$p" --from-beginning --max-messages $((2 * N)) --print-offsets -q \
			>"$IT_DIR/out$p" || it_fail "consume of partition $p after the restart exited $?"
		paste <(seq 0 $((2 * N - 1))) "$IT_DIR/in$p" | cmp -s - "$IT_DIR/out$p" ||
			it_fail "partition $p: records after the restart differ"
	done
	it_log "broker 1 killed and restarted: every queue reconnected, $((2 * N)) records per partition read back"

	# Different reactor counts: broker 3 comes back with ONE reactor. It is
	# the memif client of both its broker links, so it connects one ring
	# pair to each: brokers 1 and 2 learn that from its hello, their
	# reactor 1 cannot send to it on queue 1 and falls back to reactor 0,
	# and what broker 3 sends lands on their reactor 0, which hands reactor
	# 1's partitions over. Replication must go on regardless.
	hw cluster stop 3 -q || it_fail "cluster stop 3"
	sed -i 's/^hiwater\.reactor\.lcores=.*/hiwater.reactor.lcores=0/' "$IT_DIR/c/node-3/server.properties"
	hw cluster start 3 -q || it_fail "cluster start 3 with one reactor"
	unc0=0
	for b in 1 2; do
		v=$(metric "$b" "hiwater_reactor_shard_dpdk_tx_unconnected_total{reactor=\"1\"}")
		unc0=$((unc0 + ${v:-0}))
	done
	for p in $(seq 0 $((P - 1))); do
		seq $((2 * N)) $((3 * N - 1)) | sed "s/^/p$p-record-/" |
			hw produce --topic tr --partition "$p" --acks all --batch-size 100 -q >/dev/null ||
			it_fail "produce to partition $p with broker 3 on one reactor exited $?"
	done
	all_full3() {
		local p
		for p in $(seq 0 $((P - 1))); do
			[ "$(it_field tr "$p" HW)" = "$((3 * N))" ] || return 1
			[ "$(it_field tr "$p" Isr | tr ',' '\n' | wc -l)" = 3 ] || return 1
		done
	}
	it_wait 30 all_full3 || it_fail "broker 3 on one reactor: HW/ISR not $((3 * N))/3: $(hw topic describe tr)"
	unc=0
	for b in 1 2; do
		v=$(metric "$b" "hiwater_reactor_shard_dpdk_tx_unconnected_total{reactor=\"1\"}")
		unc=$((unc + ${v:-0}))
	done
	[ "$unc" -gt "$unc0" ] ||
		it_fail "brokers 1-2: reactor 1 never found queue 1 unconnected towards the one-reactor broker 3"
	it_log "broker 3 on one reactor: replication complete, reactor 1 of brokers 1-2 fell back $((unc - unc0)) times"
fi
# sanitizer builds: no report in any daemon's log
if grep -rlsE "AddressSanitizer|LeakSanitizer|runtime error:" "$IT_DIR/c" >"$IT_DIR/san"; then
	it_fail "sanitizer report in $(tr '\n' ' ' <"$IT_DIR/san")"
fi
it_log "PASS: $P partitions x $N records over 2 reactors per broker ($transport); produce requests led by reactor 0: ${led[0]}, reactor 1: ${led[1]}; frames handed to reactor 1: $fwd"
