#!/usr/bin/env bash
# it_zk_stray.sh — docs/logdirs.md "Stray logs": ZooKeeper mode, 3 ZooKeeper
# servers, 3 controllers, 3 brokers. First a deletion the controller still
# remembers: topic `rem` deleted while broker 3 is down; back, broker 3
# deletes its logs when the deletion is pushed (none moved aside, the
# replica manager holds no such partition). Then broker 3 is killed; meanwhile topic
# `gone` is deleted and topic `again` deleted and created again under its
# name (a new id, broker 3 among its replicas); then the active controller
# is killed: the one taking over loads the metadata from the znodes and no
# longer knows either deletion, so nothing tells broker 3 about them. Back,
# broker 3 must move the logs of `gone` aside as `gone-P.<hex>-stray` (kept,
# never served, not recovered at its next start) and must not serve the
# deleted `again`'s records as the new topic's: its `again` logs are new and
# the recreated topic reads back only what was produced to it. Its other
# topic's logs stay where they were, with their records.
source "$(dirname "$0")/../it_lib.sh"
source "$(dirname "$0")/../it_failover_lib.sh"
source "$(dirname "$0")/zk_lib.sh"

ZK_SESSION_MS=3000 zk_up
it_wait 10 zk_other_active || it_fail "no active controller: $(hw cluster status)"
D3="$IT_DIR/c/node-3/data"
for t in keep gone again rem; do
	hw topic create "$t" --partitions 2 --replication-factor 3 -q >/dev/null || it_fail "topic create $t"
done
# produce_to TOPIC PREFIX: 5 acks=all records into each partition
produce_to() {
	local p i
	for p in 0 1; do
		for i in 1 2 3 4 5; do echo "$2-$p-$i"; done |
			hw produce --topic "$1" --partition "$p" --acks all --timeout 3000 -q >/dev/null 2>&1 || return 1
	done
}
for t in keep gone again; do
	it_wait 10 produce_to "$t" old || it_fail "produce to $t: $(hw topic describe "$t")"
done
# all_in TOPIC...: broker 3 in the ISR of both partitions of each
all_in() { local t p; for t in "$@"; do for p in 0 1; do isr_has "$t" "$p" 3 || return 1; done; done; }
it_wait 15 all_in keep gone again rem || it_fail "broker 3 not in every ISR: $(hw topic describe gone)"
# every log of broker 3 on disk, with a partition.metadata naming its topic id
for t in keep gone again rem; do
	for p in 0 1; do
		[ -f "$D3/$t-$p/partition.metadata" ] || it_fail "no $D3/$t-$p/partition.metadata"
	done
done
# a deletion made while broker 3 is down, which the controller remembers
hw cluster kill 3 -q || it_fail "kill broker 3"
hw topic delete rem | grep -q '^Deleted topic rem' || it_fail "topic delete rem"
hw cluster start 3 -q || it_fail "start broker 3 (rem)"
rem_gone() { [ -z "$(find "$D3" -maxdepth 1 -name 'rem-*')" ]; }
it_wait 15 rem_gone || it_fail "rem's logs left on broker 3: $(find "$D3" -maxdepth 1 -name 'rem-*')"
grep -q "deleted log $D3/rem-0 (topic deleted while this broker was away)" "$IT_DIR/c/node-3/hiwaterd.log" ||
	it_fail "broker 3 did not delete rem-0 on the pushed deletion: $(grep 'rem-0' "$IT_DIR/c/node-3/hiwaterd.log" | tail -n 5)"
it_wait 15 all_in keep gone again || it_fail "broker 3 not back in every ISR: $(hw topic describe gone)"
it_log "rem deleted while broker 3 was down: its logs deleted on the pushed deletion"

hw cluster kill 3 -q || it_fail "kill broker 3"

hw topic delete gone | grep -q '^Deleted topic gone' || it_fail "topic delete gone"
hw topic delete again | grep -q '^Deleted topic again' || it_fail "topic delete again"
hw topic create again --partitions 2 --replication-factor 3 -q >/dev/null || it_fail "topic create again (recreated)"
it_wait 10 produce_to again new || it_fail "produce to the recreated again: $(hw topic describe again)"
# the controller that saw the deletions dies: its successor knows only the znodes
ctl0=$(zk_active)
hw cluster kill "$ctl0" -q || it_fail "kill controller $ctl0"
it_wait 15 zk_other_active "$ctl0" || it_fail "no standby took over: $(hw cluster status)"
ctl1=$(zk_active)
it_log "deletions made by controller $ctl0; controller $ctl1 active now, broker 3 restarts"

hw cluster start 3 -q || it_fail "start broker 3"
L3="$IT_DIR/c/node-3/hiwaterd.log"
moved() { [ "$(find "$D3" -maxdepth 2 -name 'gone-*-stray' | wc -l)" = 2 ]; }
it_wait 15 moved || it_fail "gone's logs not moved aside on broker 3: $(find "$D3" -maxdepth 2 -name 'gone*')
$(grep -i "stray\|gone" "$L3" | tail -n 10)"
[ -z "$(find "$D3" -maxdepth 2 -name 'gone-[01]')" ] || it_fail "gone's log dirs still served: $(ls "$D3")"
grep -q "found stray log .*gone-0: topic gone does not exist in the controller's metadata" "$L3" ||
	it_fail "broker 3 did not say why gone-0 is stray: $(grep -i stray "$L3")"
# the recreated topic: broker 3 back in its ISR with new logs (its topic id,
# not the deleted topic's), the deleted topic's records never served
again_in() { isr_has again 0 3 && isr_has again 1 3; }
it_wait 20 again_in || it_fail "broker 3 not back in again's ISRs: $(hw topic describe again)"
keep_in() { isr_has keep 0 3 && isr_has keep 1 3; }
it_wait 20 keep_in || it_fail "broker 3 not back in keep's ISRs: $(hw topic describe keep)"
old_id=$(sed -n 's/^topic_id: //p' "$IT_DIR"/c/node-1/data/again-0/partition.metadata)
new_id=$(sed -n 's/^topic_id: //p' "$D3/again-0/partition.metadata")
[ -n "$new_id" ] && [ "$new_id" = "$old_id" ] || it_fail "broker 3's again-0 names topic id '$new_id', broker 1's '$old_id'"
for b in 1 2; do hw cluster kill "$b" -q || it_fail "kill broker $b"; done
# serves_alone TOPIC PREFIX: broker 3 leads both partitions of TOPIC and
# serves exactly PREFIX-<p>-1..5 from each
serves_alone() {
	local got want
	lead3() { [ "$(it_field "$1" 0 Leader)" = 3 ] && [ "$(it_field "$1" 1 Leader)" = 3 ]; }
	it_wait 15 lead3 "$1" || it_fail "broker 3 does not lead $1 alone: $(hw topic describe "$1")"
	got=$(for p in 0 1; do hw consume --topic "$1" --partition "$p" --from-beginning --max-messages 5 \
		--timeout 3000 2>/dev/null; done | sort | tr '\n' ' ')
	want=$(for p in 0 1; do for i in 1 2 3 4 5; do echo "$2-$p-$i"; done; done | sort | tr '\n' ' ')
	[ "$got" = "$want" ] || it_fail "$1 read from broker 3: '$got', not '$want'"
}
serves_alone again new   # the recreated topic: only its new records
serves_alone keep old
it_log "broker 3 alone serves the recreated again (only its new records) and keep (its old records)"

# the next start leaves the stray logs alone: not recovered, still there
n_rec=$(grep -c "recovered gone-" "$L3")
hw cluster kill 3 -q || it_fail "kill broker 3 again"
hw cluster start 3 -q || it_fail "start broker 3 again"
it_wait 15 bash -c "grep -c 'stray log .*gone-[01]\..*-stray found' '$L3' | grep -qx 2" ||
	it_fail "the restarted broker 3 did not find its stray logs: $(grep -i stray "$L3" | tail -n 5)"
moved || it_fail "stray logs gone after the second restart: $(ls "$D3")"
[ "$(grep -c "recovered gone-" "$L3")" = "$n_rec" ] || it_fail "a stray log was recovered again: $(grep "recovered gone-" "$L3")"
it_log "PASS"
