#!/usr/bin/env bash
# it_all_down.sh TRANSPORT off|on — docs/scenarios.md#every-replica-down:
# RF 3, min ISR 2. Follower F1 dies; records committed by
# [L, F2] afterwards are missing on F1. Then F2 and the leader L die: every
# replica is down. F1, the stale one, comes back first.
#   off (unclean.leader.election.enable=false): the partition stays offline;
#        when L returns it leads again and nothing acknowledged is lost;
#   on: the partition is offline too until `hiwater topic alter-config t1
#        unclean.leader.election.enable=true` (at runtime, over the wire);
#        then F1 is elected (unclean, leader recovery RECOVERING) and the
#        partition is available again; when L and F2 return they truncate to
#        F1's log. The test prints the acknowledged records that were lost
#        and checks they are exactly the ones F1 never had.
source "$(dirname "$0")/it_lib.sh"
source "$(dirname "$0")/it_failover_lib.sh"
transport=${1:?transport}
unclean=${2:?off or on}

it_up "$transport" --config broker.session.timeout.ms=1500 \
	--config broker.heartbeat.interval.ms=250 --config replica.lag.time.max.ms=30000
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 \
	--config unclean.leader.election.enable=false -q >/dev/null || it_fail "topic create"
L=$(it_field t1 0 Leader)
read -r F1 F2 <<<"$(it_field t1 0 Replicas | tr , '\n' | grep -vx "$L" | tr '\n' ' ')"
acked="$IT_DIR/acked"
produce_values() { # ACKS PREFIX N: N records PREFIX-1.., "<offset> <value>" appended to $acked
	seq -f "$2-%g" 1 "$3" >"$IT_DIR/vals"
	hw produce --topic t1 --partition 0 --acks "$1" --verbose --timeout 3000 <"$IT_DIR/vals" \
		>"$IT_DIR/p.out" || it_fail "produce $2 (acks=$1)"
	[ "$(wc -l <"$IT_DIR/p.out")" = "$3" ] || it_fail "produce $2: not all acknowledged"
	paste -d ' ' <(cut -d ' ' -f 2 "$IT_DIR/p.out") "$IT_DIR/vals" >>"$acked"
}
offline() { local l; l=$(it_field t1 0 Leader); [ "$l" = -1 ] || [ "$l" = none ]; }
leads() { [ "$(it_field t1 0 Leader)" = "$1" ]; }

produce_values all early 20
hw cluster kill "$F1" -q || it_fail "kill $F1"
it_wait 8 isr_lacks t1 0 "$F1" || it_fail "$F1 still in the ISR"
produce_values all mid 10
it_log "F1=$F1 dead, 10 records committed by Isr $(it_field t1 0 Isr) without it; killing F2=$F2 and L=$L"
hw cluster kill "$F2" -q || it_fail "kill $F2"
only_leader() { [ "$(it_field t1 0 Isr)" = "$L" ]; }
it_wait 8 only_leader || it_fail "ISR not [$L]"
hw cluster kill "$L" -q || it_fail "kill $L"
it_wait 8 offline || it_fail "not offline with every replica down: $(hw topic describe t1)"
hw cluster start "$F1" -q || it_fail "start $F1"

if [ "$unclean" = off ]; then
	end=$(( $(it_ms) + 3000 ))
	while [ "$(it_ms)" -lt $end ]; do
		offline || it_fail "stale $F1 elected with unclean election off: $(hw topic describe t1)"
		sleep 0.3
	done
	it_log "stale $F1 back, unclean election off: offline ($(hw topic describe t1 | grep Partition: | tr '\t' ' '))"
	# L lost its ELR place by crashing while F2 (also crashed) still holds
	# one: the controller waits for both (F2 loses its place when it
	# registers after a crash, then L is elected as the last known leader).
	hw cluster start "$L" -q && hw cluster start "$F2" -q || it_fail "restart $L $F2"
	in_sync_leader() { leads "$L" || leads "$F2"; }
	it_wait 8 in_sync_leader || it_fail "neither $L nor $F2 elected on return: $(hw topic describe t1)"
	it_log "$L and $F2 back: $(hw topic describe t1 | grep Partition: | tr '\t' ' ')"
	it_final_check t1 0 "$acked"
else
	sleep 1.5
	offline || it_fail "stale $F1 elected before unclean election was enabled"
	rc=0; hw topic alter-config t1 no.such.key=1 -q 2>/dev/null || rc=$?
	[ $rc = 4 ] || it_fail "alter-config of an unknown key: exit $rc, expected 4 (INVALID_CONFIG)"
	hw topic alter-config t1 unclean.leader.election.enable=true || it_fail "alter-config"
	it_wait 8 leads "$F1" || it_fail "stale $F1 not elected with unclean election on: $(hw topic describe t1)"
	it_log "unclean election: $(hw topic describe t1 | grep Partition: | tr '\t' ' ')"
	produce_values 1 after 5
	it_log "available again: 5 acks=1 records at $(cut -d ' ' -f 2 "$IT_DIR/p.out" | tr '\n' ' ')"
	hw cluster start "$L" -q && hw cluster start "$F2" -q || it_fail "restart $L $F2"
	it_final_check t1 0
	rc=0; python3 "$IT_CHECK" acked "$acked" "$IT_DIR/consumed-t1-0" >"$IT_DIR/lost" || rc=$?
	echo "records lost by the unclean election:"; cat "$IT_DIR/lost"
	[ $rc = 1 ] || it_fail "unclean election lost nothing (expected the 10 records $F1 missed)"
	lost=$(grep -c "^acknowledged record" "$IT_DIR/lost")
	lost_mid=$(grep -c "^acknowledged record b'mid-" "$IT_DIR/lost")
	[ "$lost" = 10 ] && [ "$lost_mid" = 10 ] ||
		it_fail "lost $lost records ($lost_mid of the 10 $F1 missed); expected exactly those 10"
fi
it_log "PASS"
