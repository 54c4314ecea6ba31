#!/usr/bin/env bash
# it_kafka_compress.sh — bench --kafka and compressed batches through the
# Kafka listener (docs/compression.md, apps/hiwater/README.md "bench"): a
# controller and 3 brokers (`cluster up`, udp data plane), topics of 3
# partitions, RF 3, min.insync.replicas=2.
#   - the native bench and `bench --kafka` (librdkafka) run the same
#     workload (acks=all, open loop, 1 KiB records) with --verify: every
#     acknowledged record present exactly once; their latencies are printed
#     side by side; --kafka writes the same .hgrm and JSON;
#   - `bench --kafka --compression zstd|lz4 --verify`: the brokers store
#     batches of that codec (codec bits read from every broker's segments)
#     and kafka-python reads the zstd records back;
#   - librdkafka compresses every codec (the listener advertises Produce v0,
#     which librdkafka 2.0.2 requires for gzip, snappy and lz4 —
#     docs/kafka.md "Versions"): kcat -P -z gzip|snappy|lz4|zstd
#     -X acks=all and confluent-kafka-python with compression.type=lz4;
#     every batch stored with its codec (none uncompressed), every record
#     read back by kafka-python exactly once, in order per partition;
#   - kafka-python produces gzip, snappy (xerial framing), lz4 and zstd
#     batches: stored with those codecs, read back by confluent-kafka
#     (librdkafka) and by `hiwater consume`;
#   - hand-made Produce requests: valid lz4 appended, corrupt lz4
#     CORRUPT_MESSAGE, codec 5 UNSUPPORTED_COMPRESSION_TYPE, a zstd bomb
#     MESSAGE_TOO_LARGE;
#   - compression.type other than `producer` is refused as a topic config.
source "$HW_SRCDIR/tests/integration/it_lib.sh"
PY=/usr/bin/python3   # Debian's client modules import under the system python
Z="$HW_SRCDIR/tests/integration/kafka"

it_up udp
boot=$(hw cluster status | sed -n 's/^bootstrap.servers=//p')
[ -n "$boot" ] || it_fail "cluster status printed no bootstrap.servers"
for t in bn bk bz bl cz kk; do
	hw topic create $t --partitions 3 --replication-factor 3 --config min.insync.replicas=2 -q \
		>/dev/null || it_fail "topic create $t"
done

# stored batches per codec ("codec:count ...") in node N's logs of topic T
codecs() {
	"$PY" - "$IT_DIR/c/node-$1/data" "$2" <<'PYEOF'
import glob, struct, sys, collections
c = collections.Counter()
for f in glob.glob('%s/%s-*/*.log' % (sys.argv[1], sys.argv[2])):
    b = open(f, 'rb').read(); p = 0
    while p + 61 <= len(b):
        n = struct.unpack('>i', b[p + 8:p + 12])[0]
        if n < 49:
            break
        c[struct.unpack('>h', b[p + 21:p + 23])[0] & 7] += 1
        p += 12 + n
print(' '.join('%d:%d' % kv for kv in sorted(c.items())))
PYEOF
}
p50() { awk '$1 == "p50" { print $2 }' "$1"; }
p99() { awk '$1 == "p99" { print $2 }' "$1"; }

W=(--acks all --rate 2000 --record-size 1024 --batch-size 16 --duration 3s --warmup 1s --verify --no-progress)
it_log "native bench: ${W[*]}"
hw bench --topic bn "${W[@]}" >"$IT_DIR/native" 2>&1 || it_fail "native bench: $(cat "$IT_DIR/native")"
grep -q '^verify          OK: ' "$IT_DIR/native" || it_fail "native verify: $(cat "$IT_DIR/native")"
it_log "bench --kafka (librdkafka) against $boot: the same workload"
"$HIWATER" bench --kafka --bootstrap-server "$boot" --topic bk "${W[@]}" \
	--hgrm "$IT_DIR/k.hgrm" --json "$IT_DIR/k.json" >"$IT_DIR/kafka" 2>&1 ||
	it_fail "bench --kafka: $(cat "$IT_DIR/kafka")"
grep -q '^verify          OK: 8000 acknowledged records checked, 0 lost' "$IT_DIR/kafka" ||
	it_fail "bench --kafka verify: $(cat "$IT_DIR/kafka")"
grep -q '^errors          none' "$IT_DIR/kafka" || it_fail "bench --kafka errors: $(cat "$IT_DIR/kafka")"
grep -q 'through librdkafka 2' "$IT_DIR/kafka" || it_fail "bench --kafka: no librdkafka line"
grep -q '"aggregatedPublishLatency99pct"' "$IT_DIR/k.json" || it_fail "bench --kafka: no JSON"
grep -q 'Percentile' "$IT_DIR/k.hgrm" || it_fail "bench --kafka: no .hgrm"
it_log "acks=all publish latency, 2000 records/s, 1 KiB: native p50 $(p50 "$IT_DIR/native") us p99 $(p99 "$IT_DIR/native") us | Kafka listener via librdkafka p50 $(p50 "$IT_DIR/kafka") us p99 $(p99 "$IT_DIR/kafka") us"

it_log "bench --kafka --compression zstd --verify"
"$HIWATER" bench --kafka --bootstrap-server "$boot" --topic bz --compression zstd --acks all \
	--rate 1000 --duration 2s --warmup 0s --verify --no-progress >"$IT_DIR/kz" 2>&1 ||
	it_fail "bench --kafka zstd: $(cat "$IT_DIR/kz")"
# an open loop at 1000/s for 2 s sends about 2000 (a loaded machine's timer
# gives a few fewer): every record sent must be acked and verified, 0 lost
nz=$(sed -n 's/^records         sent \([0-9]*\), acked \1, failed 0,.*/\1/p' "$IT_DIR/kz")
[ -n "$nz" ] && [ "$nz" -ge 1900 ] && grep -q "^verify          OK: $nz acknowledged records checked, 0 lost" "$IT_DIR/kz" ||
	it_fail "bench zstd verify: $(cat "$IT_DIR/kz")"
for n in 1 2 3; do
	[[ "$(codecs $n bz)" =~ ^4:[0-9]+$ ]] || it_fail "node $n: bz batches not all zstd: $(codecs $n bz)"
done
"$PY" - "$boot" bz 2000 <<'PYEOF' >"$IT_DIR/kzkp" 2>&1 || it_fail "kafka-python reading zstd: $(cat "$IT_DIR/kzkp")"
import sys
from kafka import KafkaConsumer, TopicPartition
c = KafkaConsumer(bootstrap_servers=sys.argv[1].split(','), group_id=None, enable_auto_commit=False,
                  consumer_timeout_ms=8000, auto_offset_reset='earliest')
c.assign([TopicPartition(sys.argv[2], q) for q in range(3)])
c.seek_to_beginning()
n = 0
for m in c:
    n += m.value[:8] == b'hwbench1'
    if n == int(sys.argv[3]):
        break
print('kafka-python read', n, 'bench records')
sys.exit(0 if n == int(sys.argv[3]) else 1)
PYEOF
it_log "zstd batches from librdkafka: $(codecs 2 bz) (codec:batches), $(cat "$IT_DIR/kzkp")"

it_log "bench --kafka --compression lz4 --verify"
"$HIWATER" bench --kafka --bootstrap-server "$boot" --topic bl --compression lz4 --acks all \
	--rate 1000 --duration 2s --warmup 0s --verify --no-progress >"$IT_DIR/kl" 2>&1 ||
	it_fail "bench --kafka lz4: $(cat "$IT_DIR/kl")"
grep -q '^verify          OK: 2000 acknowledged' "$IT_DIR/kl" || it_fail "bench lz4 verify: $(cat "$IT_DIR/kl")"
for n in 1 2 3; do
	[[ "$(codecs $n bl)" =~ ^3:[0-9]+$ ]] || it_fail "node $n: bl batches not all lz4: $(codecs $n bl)"
done
it_log "lz4 batches from bench --kafka: $(codecs 1 bl) (codec:batches)"

it_log "kcat -P -z gzip|snappy|lz4|zstd -X acks=all; confluent-kafka compression.type=lz4; kafka-python reads"
for z in gzip snappy lz4 zstd; do
	"$PY" -c "
pad = ' lorem ipsum hiwater compressed record value' * 4
for i in range(300):
    print('$z-%d|%s' % (i, pad))" >"$IT_DIR/k$z"
	timeout 30 kcat -b "$boot" -P -t kk -z $z -X acks=all -X batch.size=60000 -l "$IT_DIR/k$z" \
		2>"$IT_DIR/kcat$z" || it_fail "kcat -P -z $z: $(cat "$IT_DIR/kcat$z")"
	! grep -q 'does not support compression' "$IT_DIR/kcat$z" || it_fail "kcat -z $z: $(cat "$IT_DIR/kcat$z")"
done
timeout 60 "$PY" "$Z/kafka_codecs.py" produce-ck "$boot" kk lz4 300 >"$IT_DIR/pck" 2>&1 ||
	it_fail "confluent-kafka lz4: $(cat "$IT_DIR/pck")"
for n in 1 2 3; do
	[[ "$(codecs $n kk)" =~ ^1:[0-9]+\ 2:[0-9]+\ 3:[0-9]+\ 4:[0-9]+$ ]] ||
		it_fail "node $n: kk batches not all compressed with the producers' codecs: $(codecs $n kk)"
done
timeout 60 "$PY" "$Z/kafka_codecs.py" read-kp "$boot" kk 1500 >"$IT_DIR/kkp" 2>&1 ||
	it_fail "kafka-python reading librdkafka's batches: $(cat "$IT_DIR/kkp")"
grep -qx "consumed 1500 {'cklz4': 300, 'gzip': 300, 'lz4': 300, 'snappy': 300, 'zstd': 300} OK" "$IT_DIR/kkp" ||
	it_fail "kafka-python: $(cat "$IT_DIR/kkp")"
# exactly once: the partitions hold 1500 records in all (the HW), no more
hws=$(hw topic describe kk | sed -n 's/.*HW: \([0-9]*\).*/\1/p' | awk '{ s += $1 } END { print s }')
[ "$hws" = 1500 ] || it_fail "kk holds $hws records, not 1500: $(hw topic describe kk)"
it_log "stored $(codecs 2 kk) (codec:batches), HW sum $hws; kafka-python $(cat "$IT_DIR/kkp")"

it_log "kafka-python produces gzip, snappy, lz4, zstd; confluent-kafka and hiwater consume read"
for z in gzip snappy lz4 zstd; do
	timeout 60 "$PY" "$Z/kafka_codecs.py" produce "$boot" cz $z 300 >"$IT_DIR/p$z" 2>&1 ||
		it_fail "kafka-python $z: $(cat "$IT_DIR/p$z")"
done
[[ "$(codecs 3 cz)" =~ ^1:[0-9]+\ 2:[0-9]+\ 3:[0-9]+\ 4:[0-9]+$ ]] || it_fail "cz codecs: $(codecs 3 cz)"
timeout 60 "$PY" "$Z/kafka_codecs.py" read-ck "$boot" cz 1200 >"$IT_DIR/ck" 2>&1 ||
	it_fail "confluent-kafka: $(cat "$IT_DIR/ck")"
it_log "stored $(codecs 3 cz); confluent-kafka $(cat "$IT_DIR/ck")"
hw consume --topic cz --from-beginning --max-messages 1200 >"$IT_DIR/hc" 2>"$IT_DIR/hce" ||
	it_fail "hiwater consume: $(cat "$IT_DIR/hce")"
for z in gzip snappy lz4 zstd; do
	[ "$(grep -c "^$z-[0-9]*|" "$IT_DIR/hc")" = 300 ] || it_fail "hiwater consume: $z records missing"
done

it_log "hand-made compressed batches"
timeout 60 "$PY" "$Z/kafka_zbatch.py" "$boot" cz >"$IT_DIR/zb" 2>&1 || it_fail "kafka_zbatch: $(cat "$IT_DIR/zb")"
while read -r l; do it_log "  $l"; done <"$IT_DIR/zb"

out=$(hw topic create cg --partitions 1 --replication-factor 1 --config compression.type=gzip 2>&1) &&
	it_fail "compression.type=gzip accepted"
grep -q "only 'producer' is supported" <<<"$out" || it_fail "compression.type=gzip: $out"
hw topic create cp --partitions 1 --replication-factor 1 --config compression.type=producer -q >/dev/null ||
	it_fail "compression.type=producer refused"
it_log "OK"
