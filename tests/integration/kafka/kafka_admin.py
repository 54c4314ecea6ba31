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
# kafka_admin.py BOOTSTRAP topicconf — per-topic configs (docs/kafka.md
# "Topic configuration"): CreateTopics with cleanup.policy=compact, a small
# segment.bytes, min.cleanable.dirty.ratio and segment.ms, and a topic
# without overrides; invalid configs answer INVALID_CONFIG per topic; 30
# rounds of 20 keys to both, then one more record after segment.ms: the
# compacted topic reads back the latest value of each key only, the other
# keeps everything; DescribeConfigs shows the overrides with source
# DYNAMIC_TOPIC_CONFIG (1); AlterConfigs replaces the set (retention.ms in,
# segment.bytes back to the broker's); an invalid value is INVALID_CONFIG, a
# BROKER resource INVALID_REQUEST.
import socket
import struct
import sys
import time
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
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


def read_all(topic):
    """Every record of partition 0 from the beginning: [(key, value)]."""
    c = Consumer({'bootstrap.servers': boot, 'group.id': 'tc-' + topic + str(time.time()),
                  'enable.auto.commit': False, 'enable.partition.eof': True})
    c.assign([TopicPartition(topic, 0, 0)])
    out = []
    deadline = time.time() + 10
    while time.time() < deadline:
        m = c.poll(0.5)
        if m is None:
            continue
        if m.error():
            if m.error().code() == KafkaError._PARTITION_EOF:
                break
            raise KafkaException(m.error())
        out.append((m.key().decode(), m.value().decode()))
    c.close()
    return out


def configs(topic):
    return list(a.describe_configs([ConfigResource('topic', topic)]).values())[0].result()


def error_of(f):
    try:
        f.result()
        return None
    except KafkaException as e:
        return e.args[0].code()


def topicconf_round():
    over = {'cleanup.policy': 'compact', 'segment.bytes': '2048', 'min.cleanable.dirty.ratio': '0.01',
            'segment.ms': '200'}
    fs = a.create_topics([NewTopic('cmp', 1, 3, config=over), NewTopic('keep', 1, 3)], operation_timeout=10)
    for f in fs.values():
        f.result()
    fs = a.create_topics([NewTopic('bad1', 1, 1, config={'cleanup.policy': 'bogus'}),
                          NewTopic('bad2', 1, 1, config={'retention.hours': '1'}),
                          NewTopic('bad3', 1, 1, config={'segment.bytes': '13'})], operation_timeout=10)
    errs = {t: error_of(f) for t, f in fs.items()}
    check(set(errs.values()) == {KafkaError.INVALID_CONFIG}, 'CreateTopics with invalid configs: %s' % errs)
    check(not any(t in a.list_topics(timeout=10).topics for t in errs), 'no topic created from invalid configs')
    p = Producer({'bootstrap.servers': boot, 'acks': 'all', 'linger.ms': 0})
    for rnd in range(30):
        for k in range(20):
            for t in ('cmp', 'keep'):
                p.produce(t, key='k%02d' % k, value='r%02d' % rnd)
        p.flush(10)
    time.sleep(0.5)  # past segment.ms: the next record rolls the segment it lands in
    for t in ('cmp', 'keep'):
        p.produce(t, key='last', value='x')
    p.flush(10)
    keep = read_all('keep')
    check(len(keep) == 601, 'keep (no overrides): %d of 601 records' % len(keep))
    deadline = time.time() + 20
    while True:
        got = read_all('cmp')
        if len(got) == 21 or time.time() > deadline:
            break
        time.sleep(0.5)
    want = [('k%02d' % k, 'r29') for k in range(20)] + [('last', 'x')]
    check(got == want, 'cmp (cleanup.policy=compact): %d records, the latest per key: %s' %
          (len(got), got == want))
    cfg = configs('cmp')
    for k, v in over.items():
        e = cfg.get(k)
        check(e is not None and e.value == v and e.source == 1 and not e.is_default,
              'DescribeConfigs cmp %s=%s source %s' % (k, e and e.value, e and e.source))
    e = cfg.get('retention.ms')
    check(e is not None and e.source == 5 and e.value == '604800000', 'cmp retention.ms: the broker default')
    e = configs('keep').get('cleanup.policy')
    check(e is not None and e.value == 'delete' and e.source == 5, 'keep cleanup.policy: the broker default')
    # AlterConfigs: the whole set (segment.bytes & co. go back to the broker's)
    f = a.alter_configs([ConfigResource('topic', 'cmp', set_config={'cleanup.policy': 'compact',
                                                                  'retention.ms': '3600000'})])
    check(error_of(list(f.values())[0]) is None, 'AlterConfigs cmp')
    cfg = configs('cmp')
    check(cfg['retention.ms'].value == '3600000' and cfg['retention.ms'].source == 1,
          'after AlterConfigs: retention.ms=%s source %d' % (cfg['retention.ms'].value, cfg['retention.ms'].source))
    check(cfg['segment.bytes'].source == 5 and cfg['cleanup.policy'].source == 1,
          'after AlterConfigs: segment.bytes source %d, cleanup.policy source %d' %
          (cfg['segment.bytes'].source, cfg['cleanup.policy'].source))
    f = a.alter_configs([ConfigResource('topic', 'cmp', set_config={'retention.ms': 'abc'})])
    check(error_of(list(f.values())[0]) == KafkaError.INVALID_CONFIG, 'AlterConfigs retention.ms=abc: INVALID_CONFIG')
    check(configs('cmp')['retention.ms'].value == '3600000', 'a refused AlterConfigs changes nothing')
    f = a.alter_configs([ConfigResource('broker', '1', set_config={'log.retention.ms': '1'})])
    check(error_of(list(f.values())[0]) == KafkaError.INVALID_REQUEST, 'AlterConfigs of a broker: INVALID_REQUEST')
    # kafka-python 2.0.2's AlterConfigs
    from kafka.admin import KafkaAdminClient, ConfigResource as KConfigResource, ConfigResourceType
    ka = KafkaAdminClient(bootstrap_servers=boot.split(','))
    resp = ka.alter_configs([KConfigResource(ConfigResourceType.TOPIC, 'cmp',
                                             configs={'cleanup.policy': 'compact', 'retention.ms': '7200000'})])
    ka.close()
    errs = [r[0] for r in resp.resources]
    check(errs == [0] and configs('cmp')['retention.ms'].value == '7200000',
          'kafka-python AlterConfigs v%d: errors %s, retention.ms=%s' % (resp.API_VERSION, errs,
                                                                       configs('cmp')['retention.ms'].value))


if len(sys.argv) > 2 and sys.argv[2] == 'topicconf':
    topicconf_round()
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
