// kafka_pjs.mjs BOOTSTRAP TOPIC N — @platformatic/kafka (tests/integration/kafka/pjs), a
// pure-JS client that speaks only Kafka 3.5+ versions, all of them flexible
// (KIP-482): Produce 9, Fetch 12, Metadata 9, ListOffsets 8, FindCoordinator
// 4, JoinGroup 9, SyncGroup 5, Heartbeat 4, OffsetCommit 8, OffsetFetch 8,
// LeaveGroup 5 against hiwater's maxima (docs/kafka.md "Versions").
//   1. N records with keys over the topic's 3 partitions, acks=all, in
//      sends that each name every partition;
//   2. a consumer in group pjs-g (earliest) reads all N, checks each record
//      (key, value, partition = key % 3, offsets contiguous per partition),
//      commits the next offset of every partition in one OffsetCommit (Kafka's
//      convention; the client's own per-record commit names the record's
//      offset), leaves;
//   3. a second member of pjs-g reads the committed offsets (OffsetFetch v8)
//      = the per-partition counts, and gets nothing new from mode committed.
// Prints "produced N", "consumed N", "committed [..]", "OK".
// the package lives in the git-ignored tests/integration/kafka/pjs (ci/bootstrap), which
// an ES module import does not search from here: import it by path
const { Consumer, Producer, ProduceAcks, stringDeserializers, stringSerializers } =
  await import(new URL('./pjs/node_modules/@platformatic/kafka/dist/index.js', import.meta.url).href);

const [boot, topic, nStr] = process.argv.slice(2);
const n = parseInt(nStr);
const brokers = boot.split(',');
const fail = (m) => { console.error('FAIL', m); process.exit(1); };
const timer = setTimeout(() => fail('timed out'), 50000);

const producer = new Producer({ clientId: 'hw-pjs', bootstrapBrokers: brokers, serializers: stringSerializers,
				acks: ProduceAcks.ALL, retries: 5 });
const per = [0, 0, 0];
for (let i = 0; i < n; i += 150) {
  const messages = [];
  for (let j = i; j < Math.min(n, i + 150); j++) {
    messages.push({ topic, partition: j % 3, key: 'k' + j, value: 'pjs-' + j });
    per[j % 3]++;
  }
  await producer.send({ messages });
}
await producer.close();
console.log('produced', n);

const member = (id) => new Consumer({ groupId: 'pjs-g', clientId: id, bootstrapBrokers: brokers,
				       deserializers: stringDeserializers, sessionTimeout: 10000,
				       heartbeatInterval: 500, maxWaitTime: 200 });
const c1 = member('pjs-1');
const stream = await c1.consume({ topics: [topic], mode: 'earliest', autocommit: false });
const next = [0, 0, 0];
let got = 0;
for await (const m of stream) {
  const i = parseInt(m.key.slice(1));
  if (m.value !== 'pjs-' + i || m.partition !== i % 3 || Number(m.offset) !== next[m.partition])
    fail(`record ${m.key}=${m.value} at ${m.partition}/${m.offset}, expected offset ${next[m.partition]}`);
  next[m.partition]++;
  if (++got === n) break;
}
await stream.close();
console.log('consumed', got);
await c1.commit({ offsets: next.map((o, p) => ({ topic, partition: p, offset: BigInt(o), leaderEpoch: -1 })) });
await c1.close();

const c2 = member('pjs-2');
const committed = await c2.listCommittedOffsets({ topics: [{ topic, partitions: [0, 1, 2] }] });
const offs = committed.get(topic).map(Number);
console.log('committed', JSON.stringify(offs));
if (JSON.stringify(offs) !== JSON.stringify(per)) fail(`committed ${offs}, expected ${per}`);
await c2.close();
clearTimeout(timer);
console.log('OK');
process.exit(0);
