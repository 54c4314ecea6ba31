#!/usr/bin/env bash
# it_zk_quorum.sh — docs/controller-ha.md "When ZooKeeper fails": under
# acks=all --verify load, SIGKILL 1 of 3 ZooKeeper servers: nothing changes
# (a topic is created, the same controller stays active). SIGKILL a second
# one: no quorum; metadata changes are refused with a clear error (exit 4,
# "metadata store unavailable"), while produce and consume go on with the
# partition states the brokers have. Restart both: changes are accepted
# again, still one active controller.
source "$(dirname "$0")/../it_lib.sh"
source "$(dirname "$0")/../it_failover_lib.sh"
source "$(dirname "$0")/zk_lib.sh"

# a session long enough that nobody's expires while the quorum is gone
ZK_SESSION_MS=20000 zk_up
it_wait 10 zk_other_active || it_fail "no active controller: $(hw cluster status)"
a=$(zk_active); ep=$(zk_epoch)
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q >/dev/null ||
	it_fail "topic create"
it_wait 5 zk_ack_one warmup || it_fail "no acks=all before the ZooKeeper failures"
# the ZooKeeper server that leads the ensemble goes first (the harder case)
zlead=$(hw cluster status | awk '$2 == "zookeeper(leader)" { print $1 }')
[ -n "$zlead" ] || it_fail "no ZooKeeper leader: $(hw cluster status)"
it_log "controller $a active (epoch $ep); ZooKeeper leader $zlead"

zk_bench 14
it_load_flowing t1 0
hw cluster kill "$zlead" -q || it_fail "kill $zlead"
serving() { hw cluster status | grep -Eq 'zookeeper\((leader|follower)\)'; }
it_wait 15 serving || it_fail "the 2 remaining ZooKeeper servers do not serve: $(hw cluster status)"
created() { hw topic create "$1" --partitions 1 --replication-factor 3 --timeout 3000 >"$IT_DIR/create.out" 2>&1 ||
	grep -q TOPIC_ALREADY_EXISTS "$IT_DIR/create.out"; }
it_wait 15 created t2 ||
	it_fail "topic create with 2 of 3 ZooKeeper servers"
[ "$(zk_active)" = "$a" ] && [ "$(zk_epoch)" = "$ep" ] || it_fail "the controller changed: $(hw cluster status)"
it_log "1 of 3 down: topic t2 created, controller $a still active with epoch $ep"

# the new ZooKeeper leader (its follower notices at once that it is alone)
z2=$(hw cluster status | awk '$2 == "zookeeper(leader)" { print $1; exit }')
[ -n "$z2" ] || it_fail "no ZooKeeper leader among the two left: $(hw cluster status)"
hw cluster kill "$z2" -q || it_fail "kill $z2"
rc=0
hw topic create t3 --partitions 1 --replication-factor 3 --timeout 10000 >"$IT_DIR/t3.out" 2>&1 || rc=$?
it_log "2 of 3 down: topic create exit $rc: $(tail -1 "$IT_DIR/t3.out")"
[ "$rc" = 4 ] || it_fail "topic create without a ZooKeeper quorum: exit $rc, expected 4"
grep -q "metadata store unavailable" "$IT_DIR/t3.out" || it_fail "no clear error: $(cat "$IT_DIR/t3.out")"
# the data plane goes on: acks=all acknowledged, and a consumer reads
it_wait 5 zk_ack_one noquorum || it_fail "no acks=all acknowledgement without a ZooKeeper quorum"
# the bench's values are binary and may hold newline bytes: count the
# offsets printed (0..4), not lines; consume exits non-zero if fewer came
rc=0
hw consume --topic t1 --partition 0 --from-beginning --max-messages 5 --print-offsets --timeout 3000 \
	>"$IT_DIR/consume.out" 2>"$IT_DIR/consume.err" || rc=$?
n=$(awk -F'\t' '$1 ~ /^[0-4]$/ { print $1 }' "$IT_DIR/consume.out" | sort -u | wc -l)
[ "$rc" = 0 ] && [ "$n" = 5 ] ||
	it_fail "consume without a ZooKeeper quorum: exit $rc, offsets 0-4 read: $n of 5 ($(cat "$IT_DIR/consume.err"))"
refused=$(zk_metric "$a" 'hiwater_controller_zookeeper_events_total{event="WRITES_FAILED_NOT_CONNECTED"}')
[ "${refused%.*}" -gt 0 ] || it_fail "the refused write is not counted"
it_log "without a quorum: produce and consume go on, $refused metadata writes refused"

hw cluster start "$zlead" -q || it_fail "start $zlead"
hw cluster start "$z2" -q || it_fail "start $z2"
it_wait 20 serving || it_fail "the ensemble did not come back: $(hw cluster status)"
it_wait 20 created t3 ||
	it_fail "topic create after the quorum came back"
[ "$(zk_n_active)" = 1 ] || it_fail "not exactly one active controller: $(hw cluster status)"
it_log "quorum back: topic t3 created, controller $(zk_active) active (epoch $(zk_epoch))"

rc=0; wait "$bench" || rc=$?
it_bench_check "$IT_DIR/bench.out" "$IT_DIR/bench.err" $rc
it_final_check t1 0
it_log "PASS"
