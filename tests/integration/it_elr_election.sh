#!/usr/bin/env bash
# it_elr_election.sh TRANSPORT clean|crash —
# docs/scenarios.md#isr-2-elr-3-which-broker-leads-next: a topic shows
# Isr 2 and Elr 3, broker 2 crashes, and broker 3 is started again.
# RF 3, min ISR 2, leader L, followers A and B. A is killed (ISR [L,B]), then
# B leaves while the ISR would drop below min ISR, so B enters the ELR
# (KIP-966): Isr [L], Elr [B]. L crashes: ISR and live ELR are empty, the
# partition is offline. B starts again:
#   clean: B stopped with SIGTERM (controlled shutdown, clean-shutdown epoch
#          on disk) keeps its ELR place and is elected leader;
#   crash: B was SIGKILLed; on restart it loses its ELR place (its unflushed
#          data may be gone) and the partition stays offline until L returns.
# No acknowledged record is lost in either variant.
source "$(dirname "$0")/it_lib.sh"
source "$(dirname "$0")/it_failover_lib.sh"
transport=${1:?transport}
variant=${2:?clean or crash}

it_up "$transport" --config broker.session.timeout.ms=1500 \
	--config broker.heartbeat.interval.ms=250 --config replica.lag.time.max.ms=30000
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
L=$(it_field t1 0 Leader)
read -r A B <<<"$(it_field t1 0 Replicas | tr , '\n' | grep -vx "$L" | tr '\n' ' ')"
acked="$IT_DIR/acked"
seq -f 'rec-%g' 1 30 | hw produce --topic t1 --partition 0 --acks all --verbose --timeout 3000 \
	>"$IT_DIR/p.out" || it_fail "produce"
paste -d ' ' <(cut -d ' ' -f 2 "$IT_DIR/p.out") <(seq -f 'rec-%g' 1 30) >"$acked"
[ "$(wc -l <"$acked")" = 30 ] || it_fail "30 records not all acknowledged"

hw cluster kill "$A" -q || it_fail "kill $A"
it_wait 8 isr_lacks t1 0 "$A" || it_fail "$A still in the ISR"
if [ "$variant" = clean ]; then
	hw cluster stop "$B" -q || it_fail "stop $B"
else
	hw cluster kill "$B" -q || it_fail "kill $B"
fi
only_leader() { [ "$(it_field t1 0 Isr)" = "$L" ]; }
it_wait 8 only_leader || it_fail "ISR not [$L]: $(hw topic describe t1)"
[[ ",$(it_field t1 0 Elr)," == *",$B,"* ]] || it_fail "Elr lacks $B: $(hw topic describe t1)"
it_log "A=$A killed, B=$B ${variant}: Isr $(it_field t1 0 Isr) Elr $(it_field t1 0 Elr); SIGKILL of leader $L"

hw cluster kill "$L" -q || it_fail "kill $L"
offline() { local l; l=$(it_field t1 0 Leader); [ "$l" = -1 ] || [ "$l" = none ]; }
it_wait 8 offline || it_fail "partition not offline with Isr/Elr members down: $(hw topic describe t1)"
it_log "offline: $(hw topic describe t1 | grep Partition: | tr '\t' ' ')"

hw cluster start "$B" -q || it_fail "start $B"
if [ "$variant" = clean ]; then
	leads_b() { [ "$(it_field t1 0 Leader)" = "$B" ]; }
	it_wait 8 leads_b || it_fail "cleanly stopped ELR member $B not elected: $(hw topic describe t1)"
	it_log "$B elected from the ELR: $(hw topic describe t1 | grep Partition: | tr '\t' ' ')"
else
	end=$(( $(it_ms) + 4000 ))   # > 2 session timeouts after B's restart
	while [ "$(it_ms)" -lt $end ]; do
		offline || it_fail "crashed $B was elected: $(hw topic describe t1)"
		sleep 0.3
	done
	[[ ",$(it_field t1 0 Elr)," != *",$B,"* ]] || it_fail "$B kept its ELR place after a crash"
	it_log "$B restarted after a crash: still offline, $(hw topic describe t1 | grep Partition: | tr '\t' ' ')"
	hw cluster start "$L" -q || it_fail "start $L"
	leads_l() { [ "$(it_field t1 0 Leader)" = "$L" ]; }
	it_wait 8 leads_l || it_fail "$L not elected on its return: $(hw topic describe t1)"
	it_log "$L returned and leads: $(hw topic describe t1 | grep Partition: | tr '\t' ' ')"
fi
for n in "$L" "$A"; do hw cluster start "$n" -q || it_fail "start $n"; done
it_final_check t1 0 "$acked"
it_log "PASS"
