#!/usr/bin/env bash
# it_zk_failover.sh — docs/controller-ha.md "Failover": ZooKeeper mode,
# 3 ZooKeeper servers, 3 controllers, 3 brokers, acks=all load with
# --verify throughout. SIGKILL the active controller, then SIGKILL the
# partition's leader: a standby wins /controller with a higher epoch,
# loads the metadata from the znodes, fences the dead leader and elects a
# new one from the ISR. The time from the first kill to the first acks=all
# acknowledgement on the new leader is printed. Then the killed controller
# restarts as a standby, and a clean stop of the active one (it deletes
# /controller at once) hands over well within the session timeout; the one
# now active deletes a topic (its logs leave every broker) and the name
# recreated gets a new id. The topic's configs live at Kafka's
# /config/topics/t1 and follow an alter made by the controller that took over.
source "$(dirname "$0")/../it_lib.sh"
source "$(dirname "$0")/../it_failover_lib.sh"
source "$(dirname "$0")/zk_lib.sh"

ZK_SESSION_MS=3000 zk_up
it_wait 10 zk_other_active || it_fail "no active controller: $(hw cluster status)"
ctl0=$(zk_active); ep0=$(zk_epoch)
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 \
	--config retention.ms=3600000 -q >/dev/null || it_fail "topic create"
# the topic's configs as Kafka keeps them in ZooKeeper (docs/kafka.md "Topic
# configuration"): /config/topics/t1; zk_cmds reads znodes with zkCli.sh
zkc=$(sed -n 's/^zookeeper.connect=//p' "$IT_DIR/c/node-0/server.properties")
zk_cmds() { printf '%s\n' "$@" quit | timeout 20 /usr/share/zookeeper/bin/zkCli.sh -server "$zkc" 2>/dev/null; }
t1_json='{"version":1,"config":{"retention.ms":"3600000","min.insync.replicas":"2"}}'
zk_cmds "get /config/topics/t1" | grep -qxF "$t1_json" ||
	it_fail "/config/topics/t1 is not $t1_json: $(zk_cmds "get /config/topics/t1" | tail -n 5)"
it_wait 5 zk_ack_one warmup || it_fail "no acks=all before the failover"
lead0=$(it_field t1 0 Leader); lep0=$(it_field t1 0 LeaderEpoch); isr0=$(it_field t1 0 Isr)
it_log "active controller $ctl0 (epoch $ep0); t1-0 leader $lead0 (epoch $lep0, Isr $isr0)"

zk_bench 20
it_load_flowing t1 0
t0=$(it_ms)
hw cluster kill "$ctl0" -q || it_fail "kill controller $ctl0"
it_wait 10 zk_other_active "$ctl0" || it_fail "no standby took over: $(hw cluster status)"
ctl1=$(zk_active); ep1=$(zk_epoch)
[ "$ep1" -gt "$ep0" ] || it_fail "controller epoch $ep0 -> $ep1 did not grow"
it_log "controller $ctl1 active with epoch $ep1 after $(( $(it_ms) - t0 )) ms"
# the new controller loaded the brokers and the topic from ZooKeeper
grep -q "loaded 3 brokers, 1 topics" "$IT_DIR/c/node-$ctl1/hiwaterd.log" ||
	it_fail "controller $ctl1 did not load the metadata from ZooKeeper"
# with the topic's configs; the new controller changes them in step with /config/topics
hw topic describe t1 | grep -q 'Configs: retention.ms=3600000,min.insync.replicas=2' ||
	it_fail "t1's configs not loaded by controller $ctl1: $(hw topic describe t1)"
hw topic alter t1 --config segment.ms=7200000 -q || it_fail "topic alter t1 through controller $ctl1"

hw cluster kill "$lead0" -q || it_fail "kill leader $lead0"
new_leader() { local l; l=$(it_field t1 0 Leader); [ -n "$l" ] && [ "$l" != "$lead0" ] && [ "$l" != -1 ]; }
it_wait 10 new_leader || it_fail "no new leader: $(hw topic describe t1)"
lead1=$(it_field t1 0 Leader); lep1=$(it_field t1 0 LeaderEpoch)
[[ ",$isr0," == *",$lead1,"* ]] || it_fail "new leader $lead1 was not in the ISR $isr0"
[ "$lep1" -gt "$lep0" ] || it_fail "leader epoch $lep0 -> $lep1 did not grow"
it_wait 10 zk_ack_one after || it_fail "no acks=all acknowledgement on the new leader $lead1"
t1=$(it_ms)
grep -q "t1-0: leader $lead0 -> $lead1" "$IT_DIR/c/node-$ctl1/hiwaterd.log" ||
	it_fail "the election was not made by the new controller $ctl1"
echo "failover: controller $ctl0 -> $ctl1 (epoch $ep0 -> $ep1), leader $lead0 -> $lead1 (epoch $lep0 -> $lep1): first acks=all ack $(( t1 - t0 )) ms after the first kill"

# both come back: the controller as a standby, the broker into the ISR
hw cluster start "$ctl0" -q || it_fail "start controller $ctl0"
hw cluster start "$lead0" -q || it_fail "start broker $lead0"
it_wait 15 isr_has t1 0 "$lead0" || it_fail "broker $lead0 not back in the ISR: $(hw topic describe t1)"
[ "$(zk_active)" = "$ctl1" ] || it_fail "the restarted controller $ctl0 took over from $ctl1"

rc=0; wait "$bench" || rc=$?
it_bench_check "$IT_DIR/bench.out" "$IT_DIR/bench.err" $rc

# a clean stop deletes /controller at once: a standby is active long before
# the 3 s session timeout would have ended it
t2=$(it_ms)
hw cluster stop "$ctl1" -q || it_fail "stop controller $ctl1"
it_wait 10 zk_other_active "$ctl1" || it_fail "no takeover after the clean stop of $ctl1"
dt=$(( $(it_ms) - t2 ))
it_log "clean stop of $ctl1: controller $(zk_active) active (epoch $(zk_epoch)) after $dt ms"
[ "$dt" -lt 2500 ] || it_fail "takeover after a clean stop took $dt ms (the session timeout is 3000 ms)"
# topic deletion through the controller that took over: the topic's logs
# leave every broker, and recreating the name gets a new id
act=$(zk_active)
hw topic create zdel --partitions 2 --replication-factor 3 -q >/dev/null || it_fail "topic create zdel"
hw topic delete zdel | grep -q '^Deleted topic zdel' || it_fail "topic delete zdel"
zdel_gone() { [ -z "$(find "$IT_DIR"/c/node-*/data -maxdepth 2 -name 'zdel-*' 2>/dev/null)" ]; }
it_wait 10 zdel_gone || it_fail "zdel's logs left: $(find "$IT_DIR"/c/node-*/data -maxdepth 2 -name 'zdel-*')"
hw topic create zdel --partitions 1 --replication-factor 3 -q >/dev/null || it_fail "topic create zdel again"
[ "$(sed -n 's/.*topic zdel created: id \([0-9]*\),.*/\1/p' "$IT_DIR/c/node-$act/hiwaterd.log" | sort -u | wc -l)" = 2 ] ||
	it_fail "zdel recreated with the same id: $(grep 'topic zdel' "$IT_DIR/c/node-$act/hiwaterd.log")"
it_log "ZooKeeper mode: zdel deleted by controller $act (logs gone), recreated with a new id"
t1_json='{"version":1,"config":{"retention.ms":"3600000","segment.ms":"7200000","min.insync.replicas":"2"}}'
out=$(zk_cmds "get /config/topics/t1" "ls /config/topics")
grep -qxF "$t1_json" <<<"$out" && grep -q '^\[.*t1.*zdel.*\]$\|^\[.*zdel.*t1.*\]$' <<<"$out" ||
	it_fail "/config/topics after the failovers: $(tail -n 8 <<<"$out")"
it_log "/config/topics/t1 survived two controller failovers and an alter: $t1_json"
it_final_check t1 0
it_log "PASS"
