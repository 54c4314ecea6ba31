#!/usr/bin/env bash
# it_kafka_min_isr.sh — docs/scenarios.md#acksall-against-min-isr through a
# Kafka client (confluent-kafka-python over the Kafka listener): RF 3,
# min.insync.replicas=2; acks=all is acknowledged with the full ISR; with
# both followers SIGKILLed (ISR = [leader]) acks=all is refused with
# NOT_ENOUGH_REPLICAS while acks=1 is still acknowledged (past the HW), and a
# kcat consumer sees only the records below the HW: the acks=all ones.
# Brokers run two reactors; the partition is owned by reactor 1.
source "$HW_SRCDIR/tests/integration/it_lib.sh"
PY=/usr/bin/python3
K="$HW_SRCDIR/tests/integration/kafka"

# two reactors per broker: t1-0 belongs to reactor 1 (hwd_shard_of), so the
# listener's requests cross to it and its answers come back to reactor 0
it_up udp --reactors 2 --config broker.session.timeout.ms=1500 --config broker.heartbeat.interval.ms=250
boot=$(hw cluster status | sed -n 's/^bootstrap.servers=//p')
hw topic create t1 --partitions 1 --replication-factor 3 --config min.insync.replicas=2 -q \
	>/dev/null || it_fail "topic create"
leader=$(it_field t1 0 Leader)
(cd "$IT_DIR" && timeout 30 $PY "$K/kafka_acks.py" "$boot" t1 all 5) >"$IT_DIR/a1" 2>&1 ||
	it_fail "acks=all with a full ISR: $(cat "$IT_DIR/a1")"
[ "$(grep -c '^ok' "$IT_DIR/a1")" = 5 ] || it_fail "acks=all: $(cat "$IT_DIR/a1")"

for f in $(it_field t1 0 Replicas | tr , ' '); do
	[ "$f" = "$leader" ] || hw cluster kill "$f" -q || it_fail "cluster kill $f"
done
only_leader() { [ "$(it_field t1 0 Isr)" = "$leader" ]; }
it_wait 10 only_leader || it_fail "ISR is not [$leader]: $(hw topic describe t1)"
it_log "followers killed: Isr $(it_field t1 0 Isr), HW $(it_field t1 0 HW)"

rc=0; (cd "$IT_DIR" && timeout 30 $PY "$K/kafka_acks.py" "$boot" t1 all 3) >"$IT_DIR/a2" 2>&1 || rc=$?
[ $rc = 1 ] || it_fail "acks=all with Isr [$leader] < min ISR 2 exited $rc: $(cat "$IT_DIR/a2")"
[ "$(grep -c '^NOT_ENOUGH_REPLICAS$' "$IT_DIR/a2")" = 3 ] || it_fail "acks=all: $(cat "$IT_DIR/a2")"
it_log "acks=all refused: $(sort "$IT_DIR/a2" | uniq -c | tr '\n' ' ')"

(cd "$IT_DIR" && timeout 30 $PY "$K/kafka_acks.py" "$boot" t1 1 2) >"$IT_DIR/a3" 2>&1 ||
	it_fail "acks=1 with the leader alone: $(cat "$IT_DIR/a3")"
[ "$(grep -c '^ok [0-9]' "$IT_DIR/a3")" = 2 ] || it_fail "acks=1: $(cat "$IT_DIR/a3")"
it_log "acks=1 acknowledged at $(cut -d ' ' -f 2 "$IT_DIR/a3" | tr '\n' ' ')HW $(it_field t1 0 HW)"
got=$(timeout 20 kcat -b "$boot" -C -t t1 -p 0 -o beginning -e -q) || it_fail "kcat -C"
[ "$got" = "$(printf 'all-%d\n' 0 1 2 3 4)" ] || it_fail "a consumer read past the HW: $got"
it_log "kcat reads only the 5 acks=all records (HW $(it_field t1 0 HW)); OK"
