// kafka_js.js BOOTSTRAP TOPIC N — kafkajs 2.2.4 (tests/integration/kafka/js): N records
// over the topic's 3 partitions with acks=all (500 per produce request: each
// names all three partitions), then the partitions' offsets through the admin
// client (ListOffsets -2/-1), then AlterConfigs of the topic (retention.ms) and
// DescribeConfigs. Prints "produced N", "offsets [[p,low,high]..]" and
// "alter retention.ms=V source S invalid ERROR".
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { Kafka, logLevel } = require('kafkajs');
const [boot, topic, nStr] = process.argv.slice(2);
const n = parseInt(nStr);
const kafka = new Kafka({ clientId: 'hw-kafkajs', brokers: boot.split(','), logLevel: logLevel.ERROR });
(async () => {
  const producer = kafka.producer();
  await producer.connect();
  const msgs = [];
  for (let i = 0; i < n; i++) msgs.push({ partition: i % 3, key: String(i), value: 'js-' + i });
  for (let i = 0; i < n; i += 500)
    await producer.send({ topic, acks: -1, messages: msgs.slice(i, i + 500) });
  await producer.disconnect();
  console.log('produced', n);
  const admin = kafka.admin();
  await admin.connect();
  const offs = await admin.fetchTopicOffsets(topic);
  offs.sort((a, b) => a.partition - b.partition);
  console.log('offsets', JSON.stringify(offs.map(o => [o.partition, Number(o.low), Number(o.high)])));
  // AlterConfigs (the topic's whole set of overrides), DescribeConfigs shows it;
  // an invalid value is INVALID_CONFIG (docs/kafka.md "Topic configuration")
  const TOPIC = 2;
  await admin.alterConfigs({ validateOnly: false, resources: [{ type: TOPIC, name: topic,
    configEntries: [{ name: 'min.insync.replicas', value: '2' }, { name: 'retention.ms', value: '5400000' }] }] });
  const dc = await admin.describeConfigs({ includeSynonyms: false,
    resources: [{ type: TOPIC, name: topic, configNames: ['retention.ms'] }] });
  const e = dc.resources[0].configEntries[0];
  let bad = 'accepted';
  try {
    await admin.alterConfigs({ resources: [{ type: TOPIC, name: topic, configEntries: [{ name: 'segment.bytes', value: '1' }] }] });
  } catch (err) { bad = err.type; }
  console.log('alter', e.configName + '=' + e.configValue, 'source', e.configSource, 'invalid', bad);
  await admin.disconnect();
  process.exit(0);
})().catch(e => { console.error('FAIL', e); process.exit(1); });
