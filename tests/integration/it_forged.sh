#!/usr/bin/env bash
# it_forged.sh TRANSPORT — docs/security.md "Attacks the tests replay": the
# forged datagrams of a local attacker (and of a key holder that is not the
# controller or the replica) against a live cluster: PARTITION_STATE moving
# leadership and truncating ISRs, follower FETCHes acknowledging records
# nobody has (also from the replica's own id at a stale broker epoch), a far-future incarnation meant to mute the controller, a topic
# name that is a path. Every broker refuses every one of them for its known
# reason (the counters grow by exactly what was sent), the partition state
# does not move, no directory is created outside the log dirs, the controller
# still reaches every broker, and after the leader is killed no acknowledged
# record is lost.
source "$(dirname "$0")/it_lib.sh"
transport=${1:-udp}
it_up "$transport"
ls -ld "$IT_DIR/c" | grep -q '^drwx------' || it_fail "cluster dir is not 0700: $(ls -ld "$IT_DIR/c")"
[ "$(stat -c %a "$IT_DIR/c/cluster.secret")" = 600 ] || it_fail "cluster.secret is not 0600"
[ "$(stat -c %a "$IT_DIR/c/cluster.properties")" = 600 ] || it_fail "cluster.properties is not 0600"

hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
seq 1 200 | hw produce --topic t1 --acks all -q >/dev/null || it_fail "produce 200 acks=all"
it_wait 15 isr_has t1 0 1 && it_wait 15 isr_has t1 0 2 && it_wait 15 isr_has t1 0 3 || it_fail "ISR not full"
tid=$(hw topic describe t1 | awk '{ for (i = 1; i <= NF; i++) if ($i == "TopicId:") { print $(i + 1); exit } }')
leader=$(it_field t1 0 Leader) epoch=$(it_field t1 0 LeaderEpoch)
[ -n "$tid" ] && [ -n "$leader" ] || it_fail "no topic id / leader"

metric() { # NODE FAMILY REASON: summed over planes
	curl -sf "http://127.0.0.1:$((IT_PORT + 400 + $1))/metrics" |
		awk -v f="$2" -v r="reason=\"$3\"" '$1 ~ "^"f"[{]" && index($1, r) { s += $2 } END { print s + 0 }'
}
reasons="NO_MAC BAD_MAC WRONG_PEER NOT_CONTROLLER REPLICA_NOT_SENDER STALE_BROKER_EPOCH"
family() { case $1 in NO_MAC|BAD_MAC|WRONG_PEER) echo hiwater_transport_drops_total ;;
	*) echo hiwater_messages_rejected_total ;; esac; }
declare -A before
for b in 1 2 3; do for r in $reasons; do before[$b.$r]=$(metric "$b" "$(family "$r")" "$r"); done; done

for b in 1 2 3; do
	"$HIWATER" fuzz-send --dir "$IT_DIR/c" --node "$b" --mode hostile --count 2400 --topic-id "$tid" \
		>"$IT_DIR/h$b" || it_fail "fuzz-send --mode hostile to broker $b"
done
# a stale-epoch follower fetch is refused by the partition's leader; the
# other brokers answer it NOT_LEADER_OR_FOLLOWER, which counts nowhere
want() {
	[ "$2" != STALE_BROKER_EPOCH ] || [ "$1" = "$leader" ] || { echo 0; return; }
	awk -v r="$2" '$2 == r { s += $3 } END { print s + 0 }' "$IT_DIR/h$1"
}
check() {
	local b r d
	for b in 1 2 3; do for r in $reasons; do
		d=$(( $(metric "$b" "$(family "$r")" "$r") - ${before[$b.$r]} ))
		[ "$d" = "$(want "$b" "$r")" ] || { echo "broker $b $r: counted $d, sent $(want "$b" "$r")"; return 1; }
	done; done
}
it_wait 10 check >/dev/null || it_fail "refusals do not account for the forged frames: $(check)"
it_log "every forged frame refused and counted: $(for r in $reasons; do echo -n "$r=$(( $(want 1 "$r") + $(want 2 "$r") + $(want 3 "$r") )) "; done)"
# the stale-epoch fetches claimed offset 2^40: the HW did not move there
hwm=$(it_field t1 0 HW)
[ -n "$hwm" ] && [ "$hwm" -le 200 ] || it_fail "the HW moved to $hwm after the forged fetches"

# nothing moved, nothing was created where the forged name points
[ "$(it_field t1 0 Leader)" = "$leader" ] && [ "$(it_field t1 0 LeaderEpoch)" = "$epoch" ] ||
	it_fail "partition state moved: leader $(it_field t1 0 Leader) epoch $(it_field t1 0 LeaderEpoch)"
[ ! -e /tmp/hw-forged ] && [ -z "$(find "$IT_DIR" -name '*hw-forged*' -print -quit)" ] ||
	it_fail "a forged topic name became a directory"
# the controller still reaches the brokers (no muted replay window): a new
# topic gets leaders and a full ISR
hw topic create t2 --partitions 1 --replication-factor 3 -q >/dev/null || it_fail "topic create t2"
seq 1 10 | hw produce --topic t2 --acks all -q >/dev/null || it_fail "produce to t2"
it_wait 15 isr_has t2 0 1 && it_wait 15 isr_has t2 0 2 && it_wait 15 isr_has t2 0 3 ||
	it_fail "t2's ISR not full after the attack"

# no acknowledged record lost when the leader dies
hw cluster kill "$leader" -q >/dev/null || it_fail "kill the leader"
it_wait 20 bash -c "l=\$(\"$HIWATER\" topic describe t1 --dir \"$IT_DIR/c\" 2>/dev/null | awk '/Partition: 0/ { for (i = 1; i <= NF; i++) if (\$i == \"Leader:\") print \$(i + 1) }'); [ -n \"\$l\" ] && [ \"\$l\" != \"$leader\" ] && [ \"\$l\" != -1 ]" ||
	it_fail "no new leader after killing $leader"
n=$(hw consume --topic t1 --from-beginning --max-messages 200 -q | sort -n | uniq | wc -l)
[ "$n" = 200 ] || it_fail "consumed $n of the 200 acknowledged records after the leader died"
it_log "PASS"
