#!/usr/bin/env bash
# it_min_isr.sh TRANSPORT — docs/scenarios.md#acksall-against-min-isr:
# RF 3, min ISR 2,
# both followers SIGKILLed, only the leader left. describe shows Isr=[leader]
# and Elr holding the follower(s) that left while the ISR was below min ISR
# (KIP-966); acks=all is refused with NOT_ENOUGH_REPLICAS; acks=1 is
# acknowledged past the HW, and no consumer can read it until a follower is
# back in the ISR, then it can. Final check: every acknowledged record
# (acks=all before, acks=1 during) exactly once at its offset.
source "$(dirname "$0")/it_lib.sh"
source "$(dirname "$0")/it_failover_lib.sh"
transport=${1:?transport}

it_up "$transport" --config broker.session.timeout.ms=1500 \
	--config broker.heartbeat.interval.ms=250 --config replica.lag.time.max.ms=30000
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
leader=$(it_field t1 0 Leader)
read -r f1 f2 <<<"$(it_field t1 0 Replicas | tr , "\n" | grep -vx "$leader" | tr "\n" " ")"
acked="$IT_DIR/acked"

# produce_values ACKS V...: produce one record per value, append "<offset> <value>" to $acked
produce_values() {
	local acks=$1; shift
	printf '%s\n' "$@" | hw produce --topic t1 --partition 0 --acks "$acks" --verbose --timeout 3000 \
		>"$IT_DIR/p.out" 2>"$IT_DIR/p.err" || return $?
	[ "$(wc -l <"$IT_DIR/p.out")" = $# ] || it_fail "produce acked $(wc -l <"$IT_DIR/p.out") of $#"
	paste -d ' ' <(cut -d ' ' -f 2 "$IT_DIR/p.out") <(printf '%s\n' "$@") >>"$acked"
}
produce_values all $(seq -f 'before-%g' 1 20) || it_fail "acks=all with a full ISR"

hw cluster kill "$f1" -q && hw cluster kill "$f2" -q || it_fail "cluster kill"
only_leader() { [ "$(it_field t1 0 Isr)" = "$leader" ]; }
it_wait 10 only_leader || it_fail "ISR is not [$leader]: $(hw topic describe t1)"
elr=$(it_field t1 0 Elr)
it_log "followers $f1 $f2 killed: Isr $(it_field t1 0 Isr) Elr $elr HW $(it_field t1 0 HW)"
[ -n "$elr" ] || it_fail "Elr empty with Isr [$leader] below min ISR 2"
for e in ${elr//,/ }; do [ "$e" = "$f1" ] || [ "$e" = "$f2" ] || it_fail "Elr $elr holds $e"; done

rc=0; produce_values all must-fail || rc=$?
[ $rc != 0 ] || it_fail "acks=all acknowledged with Isr [$leader] < min ISR 2"
grep -Eq "NOT_ENOUGH_REPLICAS|time" "$IT_DIR/p.err" || { cat "$IT_DIR/p.err" >&2; it_fail "acks=all failed for another reason"; }
it_log "acks=all refused (exit $rc): $(tail -n 2 "$IT_DIR/p.err" | tr '\n' ' ')"

hw0=$(it_field t1 0 HW)
produce_values 1 acks1-late || it_fail "acks=1 not acknowledged"
off=$(tail -n 1 "$acked" | cut -d ' ' -f 1)
it_log "acks=1 record acknowledged at offset $off, HW $(it_field t1 0 HW)"
[ "$off" -ge "$hw0" ] || it_fail "acks=1 record at $off below the HW $hw0"
[ "$(it_field t1 0 HW)" = "$hw0" ] || it_fail "HW moved with the ISR below min ISR"
it_no_read_at t1 0 "$off"

hw cluster start "$f1" -q || it_fail "cluster start $f1"
it_wait 10 isr_has t1 0 "$f1" || it_fail "$f1 not back in the ISR: $(hw topic describe t1)"
got=$(hw consume --topic t1 --partition 0 --offset "$off" --max-messages 1 --timeout 3000) ||
	it_fail "acks=1 record at $off unreadable after the ISR recovered: $(hw topic describe t1)"
[ "$got" = acks1-late ] || it_fail "read '$got' at offset $off"
it_log "ISR $(it_field t1 0 Isr), HW $(it_field t1 0 HW): offset $off now readable"
produce_values all after-1 after-2 || it_fail "acks=all with the ISR back at min ISR"

hw cluster start "$f2" -q || it_fail "cluster start $f2"
it_final_check t1 0 "$acked"
it_log "PASS"
