# kafka_codecs.py — compressed batches between two Kafka clients
# (docs/compression.md), Debian's modules under /usr/bin/python3.
#   kafka_codecs.py produce BOOT TOPIC CODEC N   kafka-python 2.0.2 (lz4 via
#       python3-lz4, zstd via python3-zstandard): N records "<CODEC>-<i>"
#       padded with text that compresses, to partition i % 3, acks=all;
#       prints "produced N".
#   kafka_codecs.py produce-ck BOOT TOPIC CODEC N   the same through
#       confluent-kafka (librdkafka) with compression.type=CODEC, records
#       "ck<CODEC>-<i>"; prints "produced N" (delivery reports without error).
#   kafka_codecs.py read-kp BOOT TOPIC N         kafka-python reads N records
#   kafka_codecs.py read-ck BOOT TOPIC N         confluent-kafka (librdkafka)
#       reads N records. Both group-less from offset 0 of every partition;
#       each record's value must be intact and in produce order per
#       partition; prints "consumed N {codec: count} OK" or FAIL (exit 1).
import sys
import time

PAD = ' lorem ipsum hiwater compressed record value' * 4


def value(codec, i):
    return ('%s-%d|%s' % (codec, i, PAD)).encode()


def check(recs, n):
    """recs: [(partition, offset, value bytes)] -> (ok, per-codec counts)"""
    ok, counts, last = len(recs) == n, {}, {}
    for part, off, v in recs:
        head, pad = v.decode().split('|', 1)
        codec, i = head.rsplit('-', 1)
        if pad != PAD:
            ok = False
        counts[codec] = counts.get(codec, 0) + 1
        key = (part, codec)
        if key in last and int(i) <= last[key]:
            ok = False
        last[key] = int(i)
    return ok, counts


mode, boot, topic = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == 'produce':
    from kafka import KafkaProducer
    codec, n = sys.argv[4], int(sys.argv[5])
    p = KafkaProducer(bootstrap_servers=boot.split(','), acks='all', linger_ms=20,
                      compression_type=codec)
    futs = [p.send(topic, value=value(codec, i), partition=i % 3) for i in range(n)]
    p.flush(30)
    ok = sum(1 for f in futs if f.succeeded())
    print('produced', ok)
    sys.exit(0 if ok == n else 1)

if mode == 'produce-ck':
    from confluent_kafka import Producer
    codec, n = sys.argv[4], int(sys.argv[5])
    p = Producer({'bootstrap.servers': boot, 'acks': 'all', 'linger.ms': 20, 'batch.size': 60000,
                  'compression.type': codec})
    done = []
    for i in range(n):
        p.produce(topic, value=value('ck' + codec, i), partition=i % 3,
                  on_delivery=lambda err, m: done.append(err is None))
        p.poll(0)
    p.flush(30)
    print('produced', sum(done))
    sys.exit(0 if sum(done) == n else 1)

n = int(sys.argv[4])
recs = []
if mode == 'read-kp':
    from kafka import KafkaConsumer, TopicPartition
    c = KafkaConsumer(bootstrap_servers=boot.split(','), enable_auto_commit=False, group_id=None,
                      consumer_timeout_ms=8000, auto_offset_reset='earliest')
    c.assign([TopicPartition(topic, q) for q in range(3)])
    c.seek_to_beginning()
    for m in c:
        recs.append((m.partition, m.offset, m.value))
        if len(recs) >= n:
            break
else:
    from confluent_kafka import Consumer, TopicPartition
    c = Consumer({'bootstrap.servers': boot, 'group.id': 'unused-no-commit',
                  'enable.auto.commit': False, 'auto.offset.reset': 'earliest'})
    c.assign([TopicPartition(topic, q, 0) for q in range(3)])
    deadline = time.time() + 30
    while len(recs) < n and time.time() < deadline:
        m = c.poll(1.0)
        if m is None or m.error():
            continue
        recs.append((m.partition(), m.offset(), m.value()))
    c.close()
ok, counts = check(recs, n)
print('consumed', len(recs), dict(sorted(counts.items())), 'OK' if ok else 'FAIL')
sys.exit(0 if ok else 1)
