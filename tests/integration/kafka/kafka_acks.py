# kafka_acks.py BOOTSTRAP TOPIC ACKS COUNT — produce COUNT records to
# partition 0 through confluent-kafka-python with acks=ACKS and no retries,
# and print one delivery result per record: "ok OFFSET" or the Kafka error
# name (e.g. NOT_ENOUGH_REPLICAS). Exit 0 iff every record was delivered.
import sys
from confluent_kafka import Producer

boot, topic, acks, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
p = Producer({'bootstrap.servers': boot, 'acks': acks, 'retries': 0, 'message.timeout.ms': 10000,
              'enable.idempotence': False})
res = []


def cb(err, msg):
    res.append(err.name() if err else 'ok %d' % msg.offset())


for i in range(n):
    p.produce(topic, value=('%s-%d' % (acks, i)).encode(), partition=0, on_delivery=cb)
p.flush(20)
for r in res:
    print(r)
sys.exit(0 if len(res) == n and all(r.startswith('ok') for r in res) else 1)
