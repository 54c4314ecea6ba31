# kafka_confluent.py BOOTSTRAP TOPIC N — confluent-kafka-python 1.7.0
# (librdkafka 2.0.2; Debian's, /usr/bin/python3): an idempotent acks=all
# producer (InitProducerId, sequence numbers checked by the broker) of N
# keyed records, every delivery report checked; then a group-less consumer
# (assign every partition at offset 0) reads them back: each partition's
# offsets are 0..k-1 and its records in produce order. Prints OK or FAIL.
import sys
import time
from confluent_kafka import Producer, Consumer, TopicPartition

boot, topic, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
p = Producer({'bootstrap.servers': boot, 'enable.idempotence': True, 'acks': 'all', 'linger.ms': 5})
errs, acked = [], [0]


def cb(err, msg):
    if err:
        errs.append(err)
    else:
        acked[0] += 1


for i in range(n):
    while True:
        try:
            p.produce(topic, key=str(i % 11).encode(), value=('v-%d' % i).encode(), on_delivery=cb)
            break
        except BufferError:
            p.poll(0.1)
    if i % 1000 == 0:
        p.poll(0)
left = p.flush(30)
print('produced', n, 'acked', acked[0], 'left', left, 'errors', len(errs), errs[:3])
c = Consumer({'bootstrap.servers': boot, 'group.id': 'unused-no-commit', 'enable.auto.commit': False,
              'auto.offset.reset': 'earliest'})
md = c.list_topics(topic, timeout=10)
parts = sorted(md.topics[topic].partitions)
c.assign([TopicPartition(topic, q, 0) for q in parts])
got = {}
deadline = time.time() + 30
total = 0
while total < n and time.time() < deadline:
    m = c.poll(1.0)
    if m is None:
        continue
    if m.error():
        print('consumer error', m.error())
        continue
    got.setdefault(m.partition(), []).append((m.offset(), int(m.value().decode()[2:])))
    total += 1
c.close()
ok = total == n and acked[0] == n and not errs
for q, v in got.items():
    if [o for o, _ in v] != list(range(len(v))):
        ok = False
        print('offset gap in partition', q)
    vals = [x for _, x in v]
    if vals != sorted(vals):
        ok = False
        print('order broken in partition', q)
print('consumed', total, {k: len(v) for k, v in sorted(got.items())}, 'OK' if ok else 'FAIL')
sys.exit(0 if ok else 1)
