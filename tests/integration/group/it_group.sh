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
# Compaction (docs/compaction.md): `__consumer_offsets` rolls at 8 KiB here
# (offsets.topic.segment.bytes) and the cleaner looks every 200 ms; a
# group-less committer rewrites billing's 4 offsets 600 times, ending at the
# committed ones; every replica of the group's partition must compact its
# own log (smaller after than before), kcat reads it from offset 0, and the
# failover's rebuild reads the compacted log and still resumes exactly at
# the latest commits.
. "$(dirname "$0")/../it_lib.sh"
PY=/usr/bin/python3   # Debian's python3-confluent-kafka imports only here
CLI="$(dirname "$0")/it_group.py"
"$PY" -c 'import confluent_kafka' || it_fail "python3-confluent-kafka is not installed (ci/bootstrap installs it)"

it_up udp --config offsets.topic.num.partitions=4 --config offsets.topic.replication.factor=3 \
	--config group.initial.rebalance.delay.ms=500 \
	--config broker.heartbeat.interval.ms=500 --config broker.session.timeout.ms=3000 \
	--config offsets.topic.segment.bytes=8192 --config log.cleaner.backoff.ms=200
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

it_log "churn: 600 commits of billing's offsets"
# shellcheck disable=SC2086
out=$(timeout 60 "$PY" "$CLI" "$BS" churn $committed 2>&1) || { echo "$out"; it_fail "churn phase"; }
echo "$out"
# "cleaned [0, END) ...: BEFORE -> AFTER bytes" from each replica's log
cleaned_on() {
	grep -h "__consumer_offsets-$cpart: cleaned" "$IT_DIR/c/node-$1/hiwaterd.log" |
		awk '{ for (i = 1; i <= NF; i++) if ($i == "->" && $(i + 2) == "bytes,") { b = $(i - 1); a = $(i + 1) } }
		     END { exit !(b != "" && a + 0 < b + 0) }'
}
all_cleaned() { cleaned_on 1 && cleaned_on 2 && cleaned_on 3; }
it_wait 20 all_cleaned || it_fail "not every replica compacted __consumer_offsets-$cpart: $(grep -h cleaned "$IT_DIR"/c/node-*/hiwaterd.log)"
# a Kafka client reads the compacted partition from offset 0 across its
# gaps: far fewer records than the ~2400 committed, offsets increasing.
# A replica may log its first pass while a second one (over what the churn
# wrote during the first) is still due: read again for up to 10 s until
# the count is down (a fast reader can pass the second pass's segments
# before their swap).
kcat_co() {
	timeout 20 kcat -b "$BS" -C -t __consumer_offsets -p "$cpart" -o beginning -e -q -f '%o\n' >"$IT_DIR/co" 2>"$IT_DIR/coerr" ||
		it_fail "kcat reading __consumer_offsets-$cpart: $(cat "$IT_DIR/coerr")"
	nco=$(wc -l <"$IT_DIR/co")
	[ "$nco" -lt 600 ]
}
it_wait 10 kcat_co || true
[ "$nco" -ge 4 ] && [ "$nco" -lt 600 ] || it_fail "kcat read $nco records of the compacted __consumer_offsets-$cpart"
sort -n -c "$IT_DIR/co" || it_fail "kcat: offsets of __consumer_offsets-$cpart not increasing"
it_log "kcat read __consumer_offsets-$cpart from offset 0: $nco records (last offset $(tail -n 1 "$IT_DIR/co"))"
# hiwater's own consumer too, to the same last offset (the cleaner may
# still be finishing a pass: the count can drop, the last record stays)
hw consume --topic __consumer_offsets --partition "$cpart" --from-beginning --print-offsets --timeout 1500 \
	>"$IT_DIR/hco" 2>"$IT_DIR/hcerr" || it_fail "hiwater consume of the compacted partition: $(cat "$IT_DIR/hcerr")"
hlast=$(grep -a -oE $'^[0-9]+\t' "$IT_DIR/hco" | tail -n 1 | tr -d '\t')
[ "$hlast" = "$(tail -n 1 "$IT_DIR/co")" ] ||
	it_fail "hiwater consume of the compacted partition ended at '$hlast', kcat at $(tail -n 1 "$IT_DIR/co")"
it_log "every replica compacted __consumer_offsets-$cpart: $(grep -h "__consumer_offsets-$cpart: cleaned" "$IT_DIR"/c/node-*/hiwaterd.log | sed 's/.*: cleaned/cleaned/' | tail -n 3 | tr '\n' ';')"

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
