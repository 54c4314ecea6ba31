#!/usr/bin/python3
# it_group.py BOOTSTRAP PHASE — the client side of it_group.sh with
# confluent-kafka-python (Debian's python3-confluent-kafka, librdkafka).
#
# phase "split":   an idempotent acks=all producer writes 10,000 records to
#                  `orders` (4 partitions); two consumers of group `billing`
#                  split the partitions, each commits what it read; one
#                  leaves and the other takes all four over and commits
#                  again; prints "committed P=OFFSET ..." and the coordinator's
#                  `__consumer_offsets` partition and its leader.
# phase "resume":  a new consumer of `billing` must start at exactly the
#                  committed offsets (argv[3:]: P=OFFSET) and read every
#                  record from there to the end: none skipped, none repeated.
import os
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

BS, PHASE = sys.argv[1], sys.argv[2]
TOPIC, GROUP, N, NPART = "orders", "billing", 10000, 4


def fail(msg):
    print("FAIL:", msg, flush=True)
    sys.exit(1)


def consumer(name):
    return Consumer({"bootstrap.servers": BS, "group.id": GROUP, "client.id": name,
                     "auto.offset.reset": "earliest", "enable.auto.commit": False,
                     "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
                     "partition.assignment.strategy": "range",
                     **({"debug": os.environ["HW_IT_RDKAFKA_DEBUG"]} if os.environ.get("HW_IT_RDKAFKA_DEBUG") else {})})


def poll_until(cs, cond, secs, got, limit=None):
    """Poll every consumer until cond() or secs pass; got[c] gets the
    (partition, offset) of each record processed. With a limit, a consumer
    processes at most that many records per partition and pauses the
    partition then (records fetched beyond are not processed: they are
    after the offset it commits)."""
    end = time.time() + secs
    while time.time() < end:
        for c in cs:
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                print("consumer error:", m.error(), flush=True)
                continue
            recs = got.setdefault(c, [])
            q = m.partition()
            if limit is not None and per_part(recs).get(q, 0) >= limit:
                c.pause([TopicPartition(TOPIC, q)])
                continue
            recs.append((q, m.offset()))
        if cond():
            return True
    return False


def per_part(recs):
    n = {}
    for q, _ in recs:
        n[q] = n.get(q, 0) + 1
    return n


def next_offsets(recs):
    """The offset after the last record read, per partition."""
    nxt = {}
    for q, o in recs:
        nxt[q] = max(nxt.get(q, 0), o + 1)
    return nxt


def commit_read(c, recs):
    offs = [TopicPartition(TOPIC, q, o) for q, o in sorted(next_offsets(recs).items())]
    res = c.commit(offsets=offs, asynchronous=False)
    bad = [tp for tp in res if tp.error]
    if bad:
        fail("commit failed: %s" % bad)


def parts(c):
    return sorted(tp.partition for tp in c.assignment())


def offsets_partition(group, nparts):
    """Kafka's Utils.abs(group.hashCode()) % offsets.topic.num.partitions (ASCII group ids)."""
    h = 0
    for ch in group:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    h = h - (1 << 32) if h & 0x80000000 else h
    return 0 if h == -2**31 else abs(h) % nparts


def describe_and_list():
    """ListGroups and DescribeGroups while c1 and c2 are the Stable group:
    confluent-kafka's AdminClient.list_groups (librdkafka: ListGroups to
    every broker, then DescribeGroups) and kafka-python's
    KafkaAdminClient.list_consumer_groups / describe_consumer_groups (to
    the coordinator). Both must see `billing` Stable, protocol consumer /
    range, members c1 and c2 whose assignments cover the 4 partitions;
    each member's client_host is its connection's peer as Kafka shows it
    ("/127.0.0.1") and its client_id the JoinGroup header's."""
    from confluent_kafka.admin import AdminClient
    from kafka.admin import KafkaAdminClient
    gs = [g for g in AdminClient({"bootstrap.servers": BS}).list_groups(timeout=10) if g.id == GROUP]
    if len(gs) != 1:
        fail("list_groups: %d entries for %s" % (len(gs), GROUP))
    g = gs[0]
    if (g.state, g.protocol_type, g.protocol) != ("Stable", "consumer", "range"):
        fail("list_groups: %s %s %s" % (g.state, g.protocol_type, g.protocol))
    if sorted(m.client_id for m in g.members) != ["c1", "c2"] or not all(m.assignment for m in g.members):
        fail("list_groups members: %s" % [(m.id, m.client_id, len(m.assignment)) for m in g.members])
    if [m.client_host for m in g.members] != ["/127.0.0.1"] * 2:
        fail("list_groups client_host: %s" % [m.client_host for m in g.members])
    print("list_groups (confluent)", g.id, g.state, g.protocol_type, g.protocol,
          sorted(m.client_id for m in g.members), flush=True)
    ka = KafkaAdminClient(bootstrap_servers=BS, client_id="it-group-admin")
    listed = ka.list_consumer_groups()
    if (GROUP, "consumer") not in listed:
        fail("list_consumer_groups: %s" % listed)
    d = ka.describe_consumer_groups([GROUP])[0]
    covered = sorted(p for m in d.members for t, ps in m.member_assignment.assignment for p in ps)
    if d.state != "Stable" or d.protocol != "range" or len(d.members) != 2 or covered != list(range(NPART)):
        fail("describe_consumer_groups: %s" % (d,))
    if sorted((m.client_id, m.client_host) for m in d.members) != [("c1", "/127.0.0.1"), ("c2", "/127.0.0.1")]:
        fail("describe_consumer_groups client_id/host: %s" % [(m.client_id, m.client_host) for m in d.members])
    print("describe_consumer_groups (kafka-python)", d.group, d.state, d.protocol,
          sorted((m.client_id, m.client_host) for m in d.members), "partitions", covered, flush=True)
    ka.close()


def split():
    p = Producer({"bootstrap.servers": BS, "acks": "all", "enable.idempotence": True, "linger.ms": 5})
    for i in range(N):
        p.produce(TOPIC, key=b"k%d" % i, value=b"v%d" % i, partition=i % NPART)
        if i % 1000 == 0:
            p.poll(0)
    if p.flush(30) != 0:
        fail("producer did not deliver everything")
    print("produced", N, flush=True)

    c1, c2 = consumer("c1"), consumer("c2")
    c1.subscribe([TOPIC])
    c2.subscribe([TOPIC])
    got = {}
    if not poll_until([c1, c2], lambda: len(parts(c1)) == 2 and len(parts(c2)) == 2, 30, got):
        fail("two consumers did not split the partitions: %s %s" % (parts(c1), parts(c2)))
    if sorted(parts(c1) + parts(c2)) != list(range(NPART)):
        fail("assignments overlap or miss: %s %s" % (parts(c1), parts(c2)))
    print("split", parts(c1), parts(c2), flush=True)
    describe_and_list()
    owned2 = parts(c2)
    # each reads >= 100 records of each of its partitions, then commits the
    # offset after the last one it read (synchronous: the coordinator's answer)
    if not poll_until([c1, c2], lambda: all(per_part(got.get(c, [])).get(q, 0) >= 100
                                            for c in (c1, c2) for q in parts(c)), 30, got, limit=100):
        fail("the two consumers did not read 100 records of each partition")
    for c in (c1, c2):
        commit_read(c, got[c])
    after2 = {q: o for q, o in next_offsets(got[c2]).items() if q in owned2}
    c2.close()  # LeaveGroup: c1 takes everything over
    got1 = {}
    if not poll_until([c1], lambda: parts(c1) == list(range(NPART)), 30, got1, limit=100):
        fail("the remaining consumer did not take every partition over: %s" % parts(c1))
    print("takeover", parts(c1), flush=True)
    c1.resume([TopicPartition(TOPIC, q) for q in range(NPART)])  # paused in the first phase
    if not poll_until([c1], lambda: all(per_part(got1.get(c1, [])).get(q, 0) >= 100 for q in range(NPART)), 30, got1,
                      limit=100):
        fail("after the takeover the consumer did not read every partition: %s" % per_part(got1.get(c1, [])))
    # c1 started c2's partitions where c2 had committed
    first = {}
    for q, o in got1[c1]:
        first.setdefault(q, o)
    for q, o in after2.items():
        if first.get(q) != o:
            fail("partition %d taken over at %s, c2 had committed %d" % (q, first.get(q), o))
    commit_read(c1, got1[c1])
    committed = {tp.partition: tp.offset for tp in c1.committed([TopicPartition(TOPIC, q) for q in range(NPART)], 10)}
    c1.close()
    want = next_offsets(got1[c1])
    if committed != want:
        fail("committed offsets %s, expected %s" % (committed, want))
    if sum(committed.values()) >= N:
        fail("everything was consumed before the crash; nothing left to resume: %s" % committed)
    print("committed", " ".join("%d=%d" % kv for kv in sorted(committed.items())), flush=True)
    md = Producer({"bootstrap.servers": BS}).list_topics("__consumer_offsets", timeout=10)
    t = md.topics["__consumer_offsets"]
    q = offsets_partition(GROUP, len(t.partitions))
    print("coordinator", q, t.partitions[q].leader, flush=True)


def resume(want):
    c = consumer("c3")
    c.subscribe([TOPIC])
    got = {}
    remaining = N - sum(want.values())
    poll_until([c], lambda: len(got.get(c, [])) >= remaining, 30, got)
    recs = got.get(c, [])
    first = {}
    seen = set()
    for p_, o in recs:
        first.setdefault(p_, o)
        if (p_, o) in seen:
            fail("record %d@%d read twice" % (o, p_))
        seen.add((p_, o))
    for q in range(NPART):
        end = N // NPART
        if want[q] < end and first.get(q) != want[q]:
            fail("partition %d resumed at %s, committed %d" % (q, first.get(q), want[q]))
        n = sum(1 for p_, _ in recs if p_ == q)
        if n != end - want[q]:
            fail("partition %d: %d records after the commit, expected %d" % (q, n, end - want[q]))
    print("resumed", " ".join("%d=%s" % (q, first.get(q)) for q in range(NPART)), "read", len(recs), flush=True)
    c.close()


try:
    if PHASE == "split":
        split()
    else:
        resume({int(a.split("=")[0]): int(a.split("=")[1]) for a in sys.argv[3:]})
except KafkaException as e:
    fail("kafka: %s" % e)
