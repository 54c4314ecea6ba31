# kafka_admin.py BOOTSTRAP — the admin APIs through confluent-kafka-python's
# AdminClient: CreateTopics (3 partitions, RF 3, min.insync.replicas=2; then
# the same name again: TOPIC_ALREADY_EXISTS), DescribeConfigs of the topic
# (its override with source DYNAMIC_TOPIC_CONFIG, Kafka's topic-level keys
# with the broker defaults) and of broker 1 (Kafka's broker keys with
# default / static sources), DeleteTopics (adm deleted: Metadata no longer
# lists it; an unknown name: UNKNOWN_TOPIC_OR_PARTITION), then
# InitProducerId (v1, hand-made) on every broker. Prints the checks, the
# line "pids ID..." and OK or FAIL.
# kafka_admin.py BOOTSTRAP pids — only the InitProducerId round.
import socket
import struct
import sys
import time
from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient, NewTopic, ConfigResource

boot = sys.argv[1]
a = AdminClient({'bootstrap.servers': boot})
ok = True


def check(cond, what):
    global ok
    print('ok  ' if cond else 'FAIL', what)
    ok = ok and cond


def recv_exact(s, n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError('closed')
        b += c
    return b


def call(host, port, key, ver, body, flexible):
    """One hand-made request; the response body after the header."""
    with socket.create_connection((host, port), timeout=5) as s:
        msg = struct.pack('>hhih', key, ver, 7, 3) + b'adm' + (b'\x00' if flexible else b'') + body
        s.sendall(struct.pack('>i', len(msg)) + msg)
        size = struct.unpack('>i', recv_exact(s, 4))[0]
        r = recv_exact(s, size)
    return r[5:] if flexible else r[4:]  # correlation id (+ empty tags: header v1)


def init_producer_id(host, port, ver=1):
    """InitProducerId v1, or v4 (flexible, KIP-360 fields -1), no
    transactional id, on one broker: (error, id, epoch);
    COORDINATOR_LOAD_IN_PROGRESS (14) is retried for 10 s."""
    deadline = time.time() + 10
    while True:
        if ver >= 2:
            r = call(host, port, 22, ver, b'\x00' + struct.pack('>iqh', 60000, -1, -1) + b'\x00', True)
        else:
            r = call(host, port, 22, ver, struct.pack('>hi', -1, 60000), False)
        _, err, pid, epoch = struct.unpack('>ihqh', r[:16])
        if err != 14 or time.time() > deadline:
            return err, pid, epoch
        time.sleep(0.2)


def pids_round():
    md = a.list_topics(timeout=10)
    got = []
    for b in sorted(md.brokers.values(), key=lambda b: b.id):
        for ver in (1, 4, 1):
            err, pid, epoch = init_producer_id(b.host, b.port, ver)
            check(err == 0 and pid >= 0 and epoch == 0, 'InitProducerId v%d on broker %d: error %d, id %d, epoch %d' %
                  (ver, b.id, err, pid, epoch))
            got.append(pid)
    check(len(set(got)) == len(got), 'InitProducerId: %d ids, all distinct' % len(got))
    print('pids', ' '.join(str(p) for p in got))


if len(sys.argv) > 2 and sys.argv[2] == 'pids':
    pids_round()
    print('OK' if ok else 'FAIL')
    sys.exit(0 if ok else 1)


fs = a.create_topics([NewTopic('adm', 3, 3, config={'min.insync.replicas': '2'})], operation_timeout=10)
fs['adm'].result()
md = a.list_topics('adm', timeout=10)
check(len(md.topics['adm'].partitions) == 3, 'CreateTopics: adm has 3 partitions')
try:
    a.create_topics([NewTopic('adm', 3, 3)])['adm'].result()
    check(False, 'CreateTopics again: refused')
except Exception as e:
    check(e.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS, 'CreateTopics again: %s' % e.args[0].name())

r = a.describe_configs([ConfigResource('topic', 'adm')])
cfg = list(r.values())[0].result()
mir = cfg.get('min.insync.replicas')
check(mir is not None and mir.value == '2' and mir.source == 1, 'topic min.insync.replicas=%s source %s' %
      (mir and mir.value, mir and mir.source))
ret = cfg.get('retention.ms')
check(ret is not None and ret.value == '604800000' and ret.is_default, 'topic retention.ms default %s' % (ret and ret.value))

r = a.describe_configs([ConfigResource('broker', '1')])
cfg = list(r.values())[0].result()
lr = cfg.get('log.retention.ms')
check(lr is not None and lr.value == '604800000', 'broker log.retention.ms=%s' % (lr and lr.value))
check(len(cfg) >= 30, 'broker: %d configs described' % len(cfg))

a.delete_topics(['adm'], operation_timeout=10)['adm'].result()
check('adm' not in a.list_topics(timeout=10).topics, 'DeleteTopics: adm is gone from Metadata')
try:
    a.delete_topics(['no-such-topic'], operation_timeout=10)['no-such-topic'].result()
    check(False, 'DeleteTopics of an unknown topic refused')
except Exception as e:
    check(e.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART, 'DeleteTopics unknown: %s' % e.args[0].name())
# DeleteTopics v6 (flexible, topics by name or id): an unknown name and an
# id hiwater never handed out, hand-made (no client here sends v6)
host, port = boot.split(',')[0].rsplit(':', 1)
uuid = b'hiwater' + bytes(5) + struct.pack('>I', 999999)
body = b'\x03' + b'\x03no' + bytes(16) + b'\x00' + b'\x00' + uuid + b'\x00' + struct.pack('>i', 5000) + b'\x00'
r = call(host, int(port), 20, 6, body, True)
n = r[4] - 1
e1 = struct.unpack('>h', r[5 + 3 + 16:5 + 3 + 16 + 2])[0]   # name "no", uuid, error
rest = r[5 + 3 + 16 + 2:]
rest = rest[1 + (rest[0] - 1 if rest[0] else 0) + 1:]      # error_message, tags
e2 = struct.unpack('>h', rest[1 + 16:1 + 16 + 2])[0]        # name null, uuid, error
check(n == 2 and e1 == 3 and e2 == 100, 'DeleteTopics v6: unknown name %d, unknown id %d' % (e1, e2))
pids_round()
print('OK' if ok else 'FAIL')
sys.exit(0 if ok else 1)
