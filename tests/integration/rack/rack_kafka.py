# rack_kafka.py BOOTSTRAP TOPIC N RACK — confluent-kafka-python (librdkafka,
# /usr/bin/python3) fetching from the closest replica (docs/racks.md): N
# acks=all records into partition 0, then a consumer with client.rack=RACK
# (assign partition 0 at offset 0) reads them back: offsets 0..N-1 once
# each, values in produce order. Prints OK or FAIL.
import sys
from confluent_kafka import Producer, Consumer, TopicPartition

boot, topic, n, rack = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
p = Producer({'bootstrap.servers': boot, 'acks': 'all', 'linger.ms': 5, 'batch.size': 60000})
errs = []
for i in range(n):
    p.produce(topic, partition=0, value=('r-%d' % i).encode(),
              on_delivery=lambda e, m: errs.append(e) if e else None)
    if i % 500 == 0:
        p.poll(0)
left = p.flush(30)
if left or errs:
    print('FAIL produce: left', left, 'errors', errs[:3])
    sys.exit(1)
c = Consumer({'bootstrap.servers': boot, 'group.id': 'rack-no-commit', 'enable.auto.commit': False,
              'client.rack': rack, 'auto.offset.reset': 'earliest'})
c.assign([TopicPartition(topic, 0, 0)])
seen = []
idle = 0
while len(seen) < n and idle < 40:
    m = c.poll(0.25)
    if m is None:
        idle += 1
        continue
    if m.error():
        print('FAIL consume:', m.error())
        sys.exit(1)
    idle = 0
    seen.append((m.offset(), m.value().decode()))
c.close()
offs = [o for o, _ in seen]
vals = [v for _, v in seen]
if offs != list(range(n)) or vals != ['r-%d' % i for i in range(n)]:
    print('FAIL: got', len(seen), 'records, first', seen[:3], 'last', seen[-3:])
    sys.exit(1)
print('OK', n)
