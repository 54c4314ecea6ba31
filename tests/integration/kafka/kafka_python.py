# kafka_python.py BOOTSTRAP TOPIC N [PREFIX] — kafka-python 2.0.2 (Debian's,
# /usr/bin/python3) against a 3-partition topic. Without PREFIX: produce N
# records "kp-<i>" to partition i % 3 with acks=all (batched: one produce
# request names several partitions), then read. With PREFIX: only read,
# expecting N records "<PREFIX><i>" another client produced. The read is
# group-less (assign + seek_to_beginning: fetches name all 3 partitions);
# every partition must hold its records in the order they were produced.
# Prints "consumed N {...} OK" or FAIL (exit 1).
import sys
from kafka import KafkaProducer, KafkaConsumer, TopicPartition

boot, topic, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
prefix = sys.argv[4] if len(sys.argv) > 4 else None
if prefix is None:
    prefix = 'kp-'
    p = KafkaProducer(bootstrap_servers=boot.split(','), acks='all', linger_ms=20)
    futs = [p.send(topic, key=str(i).encode(), value=(prefix + str(i)).encode(), partition=i % 3) for i in range(n)]
    p.flush(30)
    ok = sum(1 for f in futs if f.succeeded())
    print('produced', ok, 'of', n)
    if ok != n:
        sys.exit(1)
c = KafkaConsumer(bootstrap_servers=boot.split(','), enable_auto_commit=False, group_id=None,
                  consumer_timeout_ms=8000, auto_offset_reset='earliest')
c.assign([TopicPartition(topic, q) for q in range(3)])
c.seek_to_beginning()
got = {}
for m in c:
    got.setdefault(m.partition, []).append((m.offset, int(m.value.decode()[len(prefix):])))
    if sum(len(v) for v in got.values()) >= n:
        break
tot = sum(len(v) for v in got.values())
ok = tot == n
for q, v in got.items():
    if [o for o, _ in v] != list(range(len(v))):
        ok = False
        print('partition', q, 'offsets not 0..', len(v) - 1)
    vals = [x for _, x in v]
    if vals != sorted(vals) or any(x % 3 != q for x in vals):
        ok = False
        print('partition', q, 'records out of order or misplaced')
print('consumed', tot, {k: len(v) for k, v in sorted(got.items())}, 'OK' if ok else 'FAIL')
sys.exit(0 if ok else 1)
