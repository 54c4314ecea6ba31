#!/bin/bash
# it_group.sh — consumer groups end to end with confluent-kafka-python
# (docs/groups.md): two consumers of one group split a 4-partition topic,
# one leaves and the other takes all partitions over and commits; then the
# broker leading the group's `__consumer_offsets` partition is SIGKILLed and
# a new consumer resumes at exactly the committed offsets, from the offsets
# the new leader rebuilt from the replicated log.
# __consumer_offsets has 4 partitions here (offsets.topic.num.partitions,
# Kafka's default is 50), and the session/heartbeat timings are lowered so
# the broker's death is noticed within the test's budget. While the two
# consumers share `billing`, confluent-kafka's and kafka-python's admin
# clients list and describe it (ListGroups, DescribeGroups); before the
# kill, two kafkajs consumers of group js-group split `orders`, read all
# of it and commit its ends (tests/integration/kafka/kafka_js_group.js).
. "$(dirname "$0")/../it_lib.sh"
PY=/usr/bin/python3   # Debian's python3-confluent-kafka imports only here
CLI="$(dirname "$0")/it_group.py"
"$PY" -c 'import confluent_kafka' || it_fail "python3-confluent-kafka is not installed (ci/bootstrap installs it)"

it_up udp --config offsets.topic.num.partitions=4 --config offsets.topic.replication.factor=3 \
	--config group.initial.rebalance.delay.ms=500 \
	--config broker.heartbeat.interval.ms=500 --config broker.session.timeout.ms=3000
BS=$(hw cluster status | sed -n 's/^bootstrap.servers=//p')
[ -n "$BS" ] || it_fail "cluster status printed no bootstrap.servers"
hw topic create orders --partitions 4 --replication-factor 3 --config min.insync.replicas=2 >/dev/null ||
	it_fail "topic create"

out=$(timeout 120 "$PY" "$CLI" "$BS" split 2>&1) || { echo "$out"; it_fail "split phase"; }
echo "$out"
committed=$(sed -n 's/^committed //p' <<<"$out")
read -r cpart leader < <(sed -n 's/^coordinator //p' <<<"$out")
[ -n "$committed" ] && [ -n "$leader" ] || it_fail "no commit / coordinator line"
grep -q "offsets partition $cpart: loaded" "$IT_DIR/c/node-$leader/hiwaterd.log" ||
	it_fail "broker $leader did not load __consumer_offsets-$cpart"

# kafkajs: two consumers of another group split `orders`, read all of it,
# commit the ends and leave (DescribeGroups then says Empty)
export NODE_PATH="$(dirname "$0")/../kafka/js/node_modules"
[ -f "$NODE_PATH/kafkajs/package.json" ] || it_fail "kafkajs missing: run ci/bootstrap"
out=$(cd "$IT_DIR" && timeout 60 node "$(dirname "$0")/../kafka/kafka_js_group.js" "$BS" orders 10000 4 2>&1) ||
	{ echo "$out"; it_fail "kafkajs group"; }
echo "$out"
grep -q '^OK$' <<<"$out" || it_fail "kafkajs group: $out"

it_log "group billing: __consumer_offsets-$cpart led by broker $leader; SIGKILL it"
hw cluster kill "$leader" >/dev/null

# the new leader of that partition replays it and answers for the group
# shellcheck disable=SC2086
out=$(timeout 120 "$PY" "$CLI" "$BS" resume $committed 2>&1) || { echo "$out"; it_fail "resume phase"; }
echo "$out"
newl=""
for id in 1 2 3; do
	[ "$id" = "$leader" ] && continue
	if grep -q "offsets partition $cpart: loaded (1 groups)" "$IT_DIR/c/node-$id/hiwaterd.log"; then newl=$id; fi
done
[ -n "$newl" ] || it_fail "no surviving broker rebuilt group billing from __consumer_offsets-$cpart"
it_log "broker $newl rebuilt the group from the log; consumer resumed at $committed"
it_log "PASS"
