# kafka_admin.py BOOTSTRAP — the admin APIs through confluent-kafka-python's
# AdminClient: CreateTopics (3 partitions, RF 3, min.insync.replicas=2; then
# the same name again: TOPIC_ALREADY_EXISTS), DescribeConfigs of the topic
# (its override with source DYNAMIC_TOPIC_CONFIG, Kafka's topic-level keys
# with the broker defaults) and of broker 1 (Kafka's broker keys with
# default / static sources), DeleteTopics (TOPIC_DELETION_DISABLED, the
# controller has no deletion). Prints the checks, OK or FAIL.
import sys
from confluent_kafka import KafkaError
from confluent_kafka.admin import AdminClient, NewTopic, ConfigResource

boot = sys.argv[1]
a = AdminClient({'bootstrap.servers': boot})
ok = True


def check(cond, what):
    global ok
    print('ok  ' if cond else 'FAIL', what)
    ok = ok and cond


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

try:
    a.delete_topics(['adm'], operation_timeout=10)['adm'].result()
    check(False, 'DeleteTopics refused')
except Exception as e:
    check(e.args[0].code() == KafkaError.TOPIC_DELETION_DISABLED, 'DeleteTopics: %s' % e.args[0].name())
print('OK' if ok else 'FAIL')
sys.exit(0 if ok else 1)
