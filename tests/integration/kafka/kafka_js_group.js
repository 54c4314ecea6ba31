// kafka_js_group.js BOOTSTRAP TOPIC N NPART — kafkajs 2.2.4 consumers in a
// group (docs/groups.md): two consumers of group `js-group` subscribe to
// TOPIC (N records over NPART partitions, already written) and split its
// partitions (JoinGroup, SyncGroup with kafkajs's round-robin assignor,
// Heartbeat); together they read every record (none missing; a record read
// twice only across a rebalance), committing as they go; on disconnect they
// commit and leave (LeaveGroup). Then the admin client's fetchOffsets
// (OffsetFetch) must show the end of every partition committed, and
// describeGroups (DescribeGroups) the group Empty. Prints "split A B",
// "read N", "committed [...]" and OK.
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { Kafka, logLevel } = require('kafkajs');
const [boot, topic, nStr, npStr] = process.argv.slice(2);
const n = parseInt(nStr), np = parseInt(npStr);
const groupId = 'js-group';
const kafka = new Kafka({ clientId: 'hw-kafkajs-group', brokers: boot.split(','), logLevel: logLevel.NOTHING }); // its REBALANCE_IN_PROGRESS heartbeats are logged as errors
const fail = (m) => { console.log('FAIL', m); process.exit(1); };

(async () => {
  const seen = new Set();
  const assigned = [[], []];
  const cs = [0, 1].map(() => kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500,
                                                rebalanceTimeout: 10000 }));
  cs.forEach((c, i) => c.on(c.events.GROUP_JOIN, (e) => {
    assigned[i] = (e.payload.memberAssignment[topic] || []).slice().sort();
  }));
  for (const c of cs) {
    await c.connect();
    await c.subscribe({ topic, fromBeginning: true });
  }
  for (const c of cs)
    await c.run({ autoCommitThreshold: 200,
                  eachMessage: async ({ partition, message }) => { seen.add(partition + ':' + message.offset); } });
  const end = Date.now() + 40000;
  const split = () => assigned[0].length > 0 && assigned[1].length > 0 &&
                      assigned[0].length + assigned[1].length === np;
  while ((seen.size < n || !split()) && Date.now() < end)
    await new Promise((r) => setTimeout(r, 100));
  if (!split()) fail('partitions not split: ' + JSON.stringify(assigned));
  console.log('split', JSON.stringify(assigned[0]), JSON.stringify(assigned[1]));
  if (seen.size !== n) fail('read ' + seen.size + ' of ' + n);
  console.log('read', seen.size);
  for (const c of cs) await c.disconnect(); // commits what was read, then LeaveGroup
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  const got = await admin.fetchOffsets({ groupId, topics: [topic] });
  const committed = got[0].partitions.map((p) => [p.partition, Number(p.offset)]).sort((a, b) => a[0] - b[0]);
  console.log('committed', JSON.stringify(committed));
  for (const e of ends) {
    const c = committed.find((x) => x[0] === e.partition);
    if (!c || c[1] !== Number(e.high)) fail('partition ' + e.partition + ' committed ' + (c && c[1]) + ', end ' + e.high);
  }
  const d = await admin.describeGroups([groupId]);
  const g = d.groups[0];
  console.log('describeGroups', g.groupId, g.state, g.protocolType, g.members.length);
  if (g.state !== 'Empty' || g.protocolType !== 'consumer' || g.members.length !== 0)
    fail('describeGroups after both left: ' + JSON.stringify(g));
  await admin.disconnect();
  console.log('OK');
  process.exit(0);
})().catch((e) => fail(e));
