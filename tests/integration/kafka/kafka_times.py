# kafka_times.py BOOTSTRAP TOPIC — ListOffsets by timestamp through
# confluent-kafka-python (offsets_for_times): 30 records with CreateTime
# timestamps 1000, 2000, ... 30000 ms go to partition 0 in three produce
# calls (several batches); then for a timestamp T the first offset whose
# timestamp >= T must come back, and -1 (end) past the last one. Prints OK.
import sys
from confluent_kafka import Producer, Consumer, TopicPartition

boot, topic = sys.argv[1], sys.argv[2]
p = Producer({'bootstrap.servers': boot, 'acks': 'all'})
for k in range(3):
    for i in range(10 * k, 10 * k + 10):
        p.produce(topic, value=b'ts-%d' % i, partition=0, timestamp=1000 * (i + 1))
    p.flush(10)
c = Consumer({'bootstrap.servers': boot, 'group.id': 'unused-times', 'enable.auto.commit': False})
ok = True
for ts, want in [(0, 0), (1000, 0), (1500, 1), (5500, 5), (10001, 10), (20000, 19), (30000, 29), (30001, -1)]:
    got = c.offsets_for_times([TopicPartition(topic, 0, ts)], timeout=10)[0]
    if got.error or got.offset != want:
        ok = False
    print('timestamp', ts, '->', got.offset, got.error or '', '' if got.offset == want else 'WANT %d' % want)
c.close()
print('OK' if ok else 'FAIL')
sys.exit(0 if ok else 1)
