#!/usr/bin/env bash
# it_kafka_clients.sh — the Kafka listener with unchanged Kafka clients
# (docs/kafka.md): a controller and 3 brokers (`cluster up`, udp data
# plane), topics of 3 partitions, RF 3, min.insync.replicas=2.
#   kcat:  -L lists the 3 brokers at their Kafka ports and the partitions with
#          leaders; -P -X acks=all of keyed records; -C -e over every
#          partition: every record back, in order per partition;
#          auto.create.topics.enable: -P to an unknown topic creates it
#          (num.partitions=2), also one of Kafka's longest name (249 bytes);
#   confluent-kafka-python: idempotent acks=all producer, 10,000 records,
#          read back group-less (kafka_confluent.py);
#   kafka-python: produce + consume, multi-partition requests (kafka_python.py);
#   per-topic configs (kafka_admin.py topicconf): a compacted topic reads back
#          the latest value per key, DescribeConfigs sources, AlterConfigs;
#          the same through `hiwater topic create/alter/describe`;
#   ListOffsets by timestamp (kafka_times.py); CreateTopics, DescribeConfigs,
#          DeleteTopics through AdminClient (kafka_admin.py): the deleted
#          topic's logs leave every broker, producing to it again creates a
#          new topic (new id, empty log); InitProducerId on every broker:
#          distinct ids, still distinct after a controller and a broker restart;
#          a topic deleted and recreated while a replica's broker is away: back,
#          it deletes its stale log (partition.metadata names the old id);
#   kafkajs 2.2.4: produce (500 records per request over 3 partitions) and
#          ListOffsets; kafka-python reads what kafkajs wrote;
#   @platformatic/kafka: only flexible versions (KIP-482) — produce, consume
#          in a group, commit, OffsetFetch (kafka_pjs.mjs); the brokers' logs
#          must show each API at its flexible version;
#   hand-made requests: ranges, order, close reasons, 200 hostile
#          connections (kafka_raw.py); max.connections=40 (kafka_conns.py);
#          the listener's metrics count every close reason.
source "$HW_SRCDIR/tests/integration/it_lib.sh"
PY=/usr/bin/python3   # Debian's client modules import under the system python
K="$HW_SRCDIR/tests/integration/kafka"
export NODE_PATH="$K/js/node_modules"
[ -f "$NODE_PATH/kafkajs/package.json" ] || it_fail "kafkajs missing: run ci/bootstrap"
PJS="$K/pjs/node_modules/@platformatic/kafka/package.json"
[ -f "$PJS" ] || it_fail "@platformatic/kafka missing: run ci/bootstrap"

it_up udp --config hiwater.log.level=info,kafka=debug --config num.partitions=2 --config max.connections=40 \
	--config log.cleaner.backoff.ms=200
boot=$(hw cluster status | sed -n 's/^bootstrap.servers=//p')
b1=${boot%%,*}
[ "$(grep -c '^bootstrap.servers=' "$IT_DIR/c/kafka.properties")" = 1 ] || it_fail "no kafka.properties"
for t in kc ck kp js pj; do
	hw topic create $t --partitions 3 --replication-factor 3 --config min.insync.replicas=2 -q \
		>/dev/null || it_fail "topic create $t"
done

it_log "kcat -L against $b1"
kcat -b "$boot" -L -t kc >"$IT_DIR/L" 2>&1 || it_fail "kcat -L: $(cat "$IT_DIR/L")"
for b in 1 2 3; do
	grep -q "broker $b at 127.0.0.1:$((IT_PORT + 500 + b))" "$IT_DIR/L" || it_fail "kcat -L lacks broker $b: $(cat "$IT_DIR/L")"
done
[ "$(grep -c 'partition [0-2], leader [1-3], replicas: [1-3],[1-3],[1-3], isrs: ' "$IT_DIR/L")" = 3 ] ||
	it_fail "kcat -L partitions: $(cat "$IT_DIR/L")"

it_log "kcat -P -X acks=all, 3000 keyed records"
for i in $(seq 0 2999); do echo "k$((i % 17)):$i"; done >"$IT_DIR/kin"
timeout 30 kcat -b "$boot" -P -t kc -K: -X acks=all -l "$IT_DIR/kin" 2>"$IT_DIR/perr" || it_fail "kcat -P: $(cat "$IT_DIR/perr")"
timeout 30 kcat -b "$boot" -C -t kc -e -o beginning -q -f '%p %o %k %s\n' >"$IT_DIR/kout" 2>"$IT_DIR/cerr" ||
	it_fail "kcat -C: $(cat "$IT_DIR/cerr")"
[ "$(wc -l <"$IT_DIR/kout")" = 3000 ] || it_fail "kcat -C read $(wc -l <"$IT_DIR/kout") of 3000"
parts=$(cut -d ' ' -f 1 "$IT_DIR/kout" | sort -u | wc -l)
[ "$parts" -ge 2 ] || it_fail "17 keys all hashed to one partition"
for p in 0 1 2; do
	awk -v p=$p '$1 == p' "$IT_DIR/kout" >"$IT_DIR/p$p"
	# offsets 0..n-1 and, per key, values increasing (produce order)
	awk '$2 != NR - 1 { exit 1 }' "$IT_DIR/p$p" || it_fail "partition $p offsets not contiguous"
	awk '{ if ($3 in last && $4 <= last[$3]) exit 1; last[$3] = $4 }' "$IT_DIR/p$p" ||
		it_fail "partition $p: a key's records out of order"
done
[ "$(cut -d ' ' -f 4 "$IT_DIR/kout" | sort -n | uniq | wc -l)" = 3000 ] || it_fail "kcat -C: records missing or doubled"
it_log "kcat: 3000 records back over $parts partitions, in order"

echo hello | timeout 30 kcat -b "$boot" -P -t auto1 -X acks=all 2>"$IT_DIR/aerr" || it_fail "kcat -P auto1: $(cat "$IT_DIR/aerr")"
[ "$(timeout 20 kcat -b "$boot" -C -t auto1 -e -q -o beginning)" = hello ] || it_fail "auto-created topic unreadable"
[ "$(hw topic describe auto1 | grep -c 'Partition: [0-9]')" = 2 ] ||
	it_fail "auto1 not created with num.partitions=2: $(hw topic describe auto1)"
# Kafka's longest topic name, 249 bytes (its log directories: 249 + "-0")
t249=$(printf 'L%.0s' $(seq 1 249))
echo long | timeout 30 kcat -b "$boot" -P -t "$t249" -X acks=all 2>"$IT_DIR/aerr" || it_fail "kcat -P 249-byte topic: $(cat "$IT_DIR/aerr")"
[ "$(timeout 20 kcat -b "$boot" -C -t "$t249" -e -q -o beginning)" = long ] || it_fail "249-byte topic unreadable"
it_log "auto-created topics: auto1 (2 partitions) and a 249-byte name"

it_log "confluent-kafka-python: idempotent acks=all producer, 10000 records"
(cd "$IT_DIR" && timeout 60 $PY "$K/kafka_confluent.py" "$boot" ck 10000) >"$IT_DIR/ck" 2>&1 || it_fail "confluent: $(cat "$IT_DIR/ck")"
it_log "$(tail -n 1 "$IT_DIR/ck")"

it_log "AdminClient: CreateTopics, DescribeConfigs, DeleteTopics; InitProducerId on every broker"
(cd "$IT_DIR" && timeout 30 $PY "$K/kafka_admin.py" "$boot") >"$IT_DIR/adm" 2>&1 || it_fail "admin: $(cat "$IT_DIR/adm")"
# the deleted topic's logs are gone from every broker (docs/kafka.md "DeleteTopics")
adm_gone() { [ -z "$(find "$IT_DIR"/c/node-[123]/data -maxdepth 2 -name 'adm-*' 2>/dev/null)" ]; }
it_wait 10 adm_gone || it_fail "adm's log dirs left: $(find "$IT_DIR"/c/node-[123]/data -maxdepth 2 -name 'adm-*')"
# producing to it again auto-creates a new topic: a new id, empty logs
echo again | timeout 30 kcat -b "$boot" -P -t adm -X acks=all 2>"$IT_DIR/aerr" || it_fail "kcat -P adm: $(cat "$IT_DIR/aerr")"
[ "$(timeout 20 kcat -b "$boot" -C -t adm -e -q -o beginning)" = again ] || it_fail "recreated adm is not empty before 'again'"
ids=$(sed -n 's/.*topic adm created: id \([0-9]*\),.*/\1/p' "$IT_DIR"/c/node-0/hiwaterd.log | sort -u | wc -l)
[ "$ids" = 2 ] || it_fail "adm recreated with the same id: $(grep 'topic adm' "$IT_DIR"/c/node-0/hiwaterd.log)"
it_log "deleted adm: logs gone on every broker, recreated with a new id and an empty log"
# the CLI: deletes, refuses internal topics (exit 2, as kafka-topics.sh), unknown names exit 4
hw topic delete adm | grep -q '^Deleted topic adm' || it_fail "hiwater topic delete adm"
rc=0; hw topic delete __consumer_offsets 2>/dev/null || rc=$?; [ $rc = 2 ] || it_fail "internal topic: exit $rc"
rc=0; hw topic delete adm 2>/dev/null || rc=$?; [ $rc = 4 ] || it_fail "deleting adm twice: exit $rc"
it_wait 10 adm_gone || it_fail "adm's log dirs left after topic delete"

it_log "per-topic configs (docs/kafka.md \"Topic configuration\"): compaction, DescribeConfigs, AlterConfigs"
(cd "$IT_DIR" && timeout 90 $PY "$K/kafka_admin.py" "$boot" topicconf) >"$IT_DIR/tconf" 2>&1 ||
	it_fail "topic configs: $(cat "$IT_DIR/tconf")"
it_log "$(grep -c '^ok' "$IT_DIR/tconf") checks: $(grep 'cmp (cleanup' "$IT_DIR/tconf")"
it_log "AlterConfigs/IncrementalAlterConfigs versions asked: $(grep -oh 'request [A-Z_]*ALTER_CONFIGS v[0-9]*' \
	"$IT_DIR"/c/node-[123]/hiwaterd.log | sort -u | tr '\n' ' ')"
# every replica of cmp applied its configs (3 brokers)
[ "$(grep -l 'topic configs applied' "$IT_DIR"/c/node-[123]/hiwaterd.log | wc -l)" = 3 ] ||
	it_fail "not every broker applied the topic configs"
# the CLI: create --config, alter --config/--delete-config, describe (and --json) shows the overrides
hw topic create tcli --partitions 1 --replication-factor 3 --config cleanup.policy=compact \
	--config segment.bytes=4096 -q >/dev/null || it_fail "topic create tcli --config"
hw topic describe tcli | grep -q 'Configs: .*cleanup.policy=compact,segment.bytes=4096' ||
	it_fail "describe tcli: $(hw topic describe tcli)"
hw topic alter tcli --config retention.ms=60000 --delete-config segment.bytes -q || it_fail "topic alter tcli"
d=$(hw topic describe tcli --json)
grep -q '"configs": {"cleanup.policy": "compact", "retention.ms": "60000", "min.insync.replicas": "1"}' <<<"$d" ||
	it_fail "describe --json after alter: $d"
rc=0; hw topic alter tcli --config retention.ms=abc 2>"$IT_DIR/aerr" || rc=$?
[ $rc = 4 ] && grep -q 'INVALID_CONFIG: Invalid value abc for configuration retention.ms' "$IT_DIR/aerr" ||
	it_fail "alter retention.ms=abc: exit $rc, $(cat "$IT_DIR/aerr")"
it_log "hiwater topic create/alter/describe: overrides set, deleted, shown; retention.ms=abc refused"

it_log "ListOffsets by timestamp (offsets_for_times)"
hw topic create ts --partitions 1 --replication-factor 3 -q >/dev/null || it_fail "topic create ts"
(cd "$IT_DIR" && timeout 30 $PY "$K/kafka_times.py" "$boot" ts) >"$IT_DIR/ts" 2>&1 || it_fail "by timestamp: $(cat "$IT_DIR/ts")"

it_log "kafka-python produce + consume"
(cd "$IT_DIR" && timeout 60 $PY "$K/kafka_python.py" "$boot" kp 3000) >"$IT_DIR/kp" 2>&1 || it_fail "kafka-python: $(cat "$IT_DIR/kp")"
it_log "$(tail -n 1 "$IT_DIR/kp")"

it_log "kafkajs produce, kafka-python reads"
(cd "$IT_DIR" && timeout 60 node "$K/kafka_js.js" "$boot" js 3000) >"$IT_DIR/js" 2>&1 || it_fail "kafkajs: $(cat "$IT_DIR/js")"
grep -q '^offsets \[\[0,0,1000\],\[1,0,1000\],\[2,0,1000\]\]$' "$IT_DIR/js" || it_fail "kafkajs offsets: $(cat "$IT_DIR/js")"
grep -q '^alter retention.ms=5400000 source 1 invalid INVALID_CONFIG$' "$IT_DIR/js" ||
	it_fail "kafkajs AlterConfigs: $(cat "$IT_DIR/js")"
it_log "kafkajs AlterConfigs: $(grep '^alter' "$IT_DIR/js")"
(cd "$IT_DIR" && timeout 60 $PY "$K/kafka_python.py" "$boot" js 3000 js-) >"$IT_DIR/jskp" 2>&1 ||
	it_fail "kafka-python reading kafkajs's records: $(cat "$IT_DIR/jskp")"
it_log "$(tail -n 1 "$IT_DIR/jskp")"

it_log "@platformatic/kafka: flexible versions only"
(cd "$K/pjs" && timeout 60 node "$K/kafka_pjs.mjs" "$boot" pj 900) >"$IT_DIR/pjs" 2>&1 || it_fail "platformatic: $(cat "$IT_DIR/pjs")"
it_log "$(tr '\n' ' ' <"$IT_DIR/pjs")"
# each API it used at Kafka 3.x's flexible version (docs/kafka.md "Versions"); its first
# heartbeat is due after the 900 records are read, so Heartbeat v4 is kafka_raw.py's
for v in "PRODUCE v9" "FETCH v12" "METADATA v9" "LIST_OFFSETS v8" "FIND_COORDINATOR v4" "JOIN_GROUP v9" \
	"SYNC_GROUP v5" "OFFSET_COMMIT v8" "OFFSET_FETCH v8" "LEAVE_GROUP v5" "API_VERSIONS v3"; do
	grep -q "request $v correlation" "$IT_DIR"/c/node-*/hiwaterd.log || it_fail "no $v request from @platformatic/kafka"
done

it_log "hand-made requests"
timeout 30 $PY "$K/kafka_raw.py" "$b1" >"$IT_DIR/raw" 2>&1 || it_fail "raw: $(cat "$IT_DIR/raw")"
timeout 30 $PY "$K/kafka_conns.py" "$b1" 60 >"$IT_DIR/conns" 2>&1 || it_fail "connections: $(cat "$IT_DIR/conns")"
read -r _ closed _ answered <"$IT_DIR/conns"
[ "$closed" -ge 20 ] && [ "$answered" -ge 1 ] && [ "$answered" -le 40 ] ||
	it_fail "max.connections=40: 60 connections, $(cat "$IT_DIR/conns")"
it_log "max.connections=40: $(cat "$IT_DIR/conns") of 60"
m=$(hw metrics 1)
for r in unknown_api request_too_large bad_request max_connections acks0_error; do
	grep -Eq "^hiwater_kafka_connections_closed_total\{reason=\"$r\"\} [1-9]" <<<"$m" ||
		it_fail "no close counted for $r: $(grep kafka_connections_closed <<<"$m")"
done
grep -Eq '^hiwater_kafka_requests_total\{api="Produce"\} [1-9]' <<<"$(hw metrics 1; hw metrics 2; hw metrics 3)" ||
	it_fail "no Produce requests counted"
# what the clients asked for (docs/kafka.md "Versions")
grep -ho 'request [A-Z_]* v[0-9]*' "$IT_DIR"/c/node-*/hiwaterd.log | sort | uniq -c | sort -rn | head -n 40
# producer ids stay distinct after the controller restarts and a broker
# asks the restarted controller for a fresh block (its old one is lost)
hw cluster kill 0 -q >/dev/null && hw cluster start 0 -q >/dev/null || it_fail "restart the controller"
hw cluster kill 1 -q >/dev/null || it_fail "kill broker 1"
# meanwhile ts is deleted and created again (broker 1 is still registered:
# the new ts has a replica there); back, broker 1 finds its old ts-0 log,
# sees another topic id in its partition.metadata and deletes it instead
# of serving the deleted topic's records as the new topic's
hw topic delete ts -q >/dev/null || it_fail "topic delete ts"
hw topic create ts --partitions 1 --replication-factor 3 -q >/dev/null || it_fail "topic create ts again"
ts_id=$(sed -n 's/.*topic ts created: id \([0-9]*\),.*/\1/p' "$IT_DIR"/c/node-0/hiwaterd.log | tail -n 1)
hw cluster start 1 -q >/dev/null || it_fail "start broker 1"
ts_fresh() { grep -qx "topic_id: $ts_id" "$IT_DIR"/c/node-1/data/ts-0/partition.metadata 2>/dev/null; }
it_wait 10 ts_fresh || it_fail "broker 1's ts-0 is not the new topic $ts_id: $(cat "$IT_DIR"/c/node-1/data/ts-0/partition.metadata)"
grep -q "ts-0 holds another topic id than ts-0's $ts_id" "$IT_DIR"/c/node-1/hiwaterd.log ||
	it_fail "broker 1 did not find its stale ts-0"
(cd "$IT_DIR" && timeout 30 $PY "$K/kafka_admin.py" "$boot" pids) >"$IT_DIR/adm2" 2>&1 || it_fail "pids: $(cat "$IT_DIR/adm2")"
all=$(sed -n 's/^pids //p' "$IT_DIR/adm" "$IT_DIR/adm2" | tr ' ' '\n')
[ "$(sort -u <<<"$all" | wc -l)" = 18 ] || it_fail "producer ids repeat across the restarts: $(echo $all)"
it_log "broker 1 deleted its stale ts-0 (topic id now $ts_id); 18 distinct producer ids from InitProducerId on 3 brokers, across a controller restart: $(echo $all)"
it_log "OK"
