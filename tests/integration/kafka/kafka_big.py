# kafka_big.py BOOTSTRAP TOPIC — record batches larger than one engine frame
# (docs/wire.md "Batch pieces", docs/kafka.md "Produce"): confluent-kafka-
# python (librdkafka 2.0.2) with its defaults for batch.size (1000000) and
# message.max.bytes (1000000), acks=all, idempotent: 4 records of 990,000
# random bytes (one batch each, ~15 engine frames) and 3,000 records of 700
# bytes (linger.ms=100: batches of up to ~1 MB). Every delivery report must
# succeed; a group-less consumer then reads every record back, and each must
# be byte-identical to what was produced, in produce order. Prints OK or
# FAIL and the batch sizes seen (from the offsets).
import hashlib
import os
import sys
import time
from confluent_kafka import Producer, Consumer, TopicPartition

boot, topic = sys.argv[1], sys.argv[2]
BIG, SMALL = 4, 3000
p = Producer({'bootstrap.servers': boot, 'acks': 'all', 'enable.idempotence': True, 'linger.ms': 100})
sent, errs, acked = [], [], [0]


def cb(err, msg):
    if err:
        errs.append(err)
    else:
        acked[0] += 1


def send(v):
    sent.append(hashlib.sha256(v).hexdigest())
    while True:
        try:
            p.produce(topic, key=b'k', value=v, partition=0, on_delivery=cb)
            return
        except BufferError:
            p.poll(0.1)


for i in range(BIG):
    send(os.urandom(990000))
    for j in range(SMALL // BIG):
        send(('%06d-' % len(sent)).encode() + os.urandom(693))
left = p.flush(60)
n = len(sent)
print('produced', n, 'acked', acked[0], 'left', left, 'errors', len(errs), errs[:3])
if errs or left or acked[0] != n:
    print('FAIL produce')
    sys.exit(1)

c = Consumer({'bootstrap.servers': boot, 'group.id': 'kafka-big-nocommit', 'enable.auto.commit': False,
              'auto.offset.reset': 'earliest', 'fetch.max.bytes': 4 << 20,
              'max.partition.fetch.bytes': 2 << 20})
c.assign([TopicPartition(topic, 0, 0)])
got, deadline = [], time.time() + 40
while len(got) < n and time.time() < deadline:
    m = c.poll(0.5)
    if m is None:
        continue
    if m.error():
        print('consumer error', m.error())
        continue
    got.append((m.offset(), hashlib.sha256(m.value()).hexdigest(), len(m.value())))
c.close()
bad = [i for i, g in enumerate(got) if g[0] != i or g[1] != sent[i]]
print('consumed', len(got), 'of', n, 'mismatched', len(bad), bad[:3],
      'big records', sum(1 for g in got if g[2] >= 900000))
print('OK' if len(got) == n and not bad else 'FAIL')
