# gen_fuzz_corpus.py — writes the seed corpus of fuzz_kafka_req (one
# connection's bytes per file): ApiVersions v0/v3, Metadata v1/v8 (auto
# create), Produce v7 (acks all and 0), Fetch v11 of two partitions,
# ListOffsets v3, CreateTopics v4, DescribeConfigs v2, InitProducerId v1,
# DeleteTopics v3, FindCoordinator v2, AlterConfigs v1 and v2,
# IncrementalAlterConfigs v0 and v1, pipelined; the old versions
# (docs/kafka.md "Versions"): Produce v0 of a magic 0 MessageSet, v2 of a
# magic 1 MessageSet beside a RecordBatch, v6 of a zstd batch, Fetch v0 and
# v3; the flexible versions (KIP-482, docs/kafka.md "Versions") of every API
# the listener serves, each with unknown tags in header and body: Produce 9,
# Fetch 12, ListOffsets 8, Metadata 9, CreateTopics 7, DescribeConfigs 4,
# FindCoordinator 3 and 4, pipelined after classic ones. It also writes the
# group fuzzer's flexible seeds (../group/fuzz_group_corpus/flex_*, that
# target's `u8 api, u8 version, u16 length, body` records): JoinGroup 6-9,
# SyncGroup 4-5, Heartbeat 4, LeaveGroup 4-5, OffsetCommit 8, OffsetFetch
# 6-8, FindCoordinator 3-4, DescribeGroups 5, ListGroups 3-4. Run from this
# directory.
import struct


def s(x):
    return struct.pack('>h', len(x)) + x


def frame(key, ver, corr, body, flexible=False):
    h = struct.pack('>hhi', key, ver, corr) + s(b'fz') + (b'\x00' if flexible else b'')
    m = h + body
    return struct.pack('>i', len(m)) + m


batch = bytes(8) + struct.pack('>i', 49) + bytes(4) + b'\x02' + bytes(44)  # RecordBatch v2 header
zbatch = batch[:21] + struct.pack('>h', 4) + batch[23:]                   # codec zstd


def message(magic):
    m = struct.pack('>Ibb', 0, magic, 0) + (struct.pack('>q', 0) if magic else b'') + struct.pack('>ii', -1, 1) + b'x'
    return struct.pack('>qi', 0, len(m)) + m


def produce_old(ver, parts):
    body = struct.pack('>hi', 1, 30000) + struct.pack('>i', 1) + s(b't') + struct.pack('>i', len(parts))
    for q, rec in enumerate(parts):
        body += struct.pack('>ii', q, len(rec)) + rec
    return body


def fetch_old(ver):
    body = struct.pack('>iii', -1, 100, 1) + (struct.pack('>i', 1 << 20) if ver >= 3 else b'')
    body += struct.pack('>i', 2) + s(b't') + struct.pack('>i', 2) + struct.pack('>iqi', 0, 0, 1 << 20) \
        + struct.pack('>iqi', 1, 0, 1 << 20) + s(b'nosuch') + struct.pack('>i', 1) + struct.pack('>iqi', 0, 0, 1 << 20)
    return body


seeds = {
    'api_versions_v0': frame(18, 0, 1, b''),
    'api_versions_v3': frame(18, 3, 2, b'\x03fz\x021\x00', True),
    'metadata_v1': frame(3, 1, 3, struct.pack('>i', 1) + s(b't')),
    'metadata_v8_auto': frame(3, 8, 4, struct.pack('>i', 2) + s(b't') + s(b'new') + b'\x01\x00\x00'),
    'produce_v7': frame(0, 7, 5, struct.pack('>h', -1) + struct.pack('>hi', -1, 30000) + struct.pack('>i', 1) + s(b't')
                        + struct.pack('>i', 2) + struct.pack('>ii', 0, 61) + batch + struct.pack('>ii', 1, 61) + batch),
    'produce_v7_acks0': frame(0, 7, 6, struct.pack('>h', -1) + struct.pack('>hi', 0, 30000) + struct.pack('>i', 1) + s(b't')
                              + struct.pack('>i', 1) + struct.pack('>ii', 0, 61) + batch),
    'fetch_v11': frame(1, 11, 7, struct.pack('>iiiib', -1, 500, 1, 1 << 20, 0) + struct.pack('>ii', 0, -1)
                       + struct.pack('>i', 1) + s(b't') + struct.pack('>i', 2)
                       + struct.pack('>iiqqi', 0, -1, 0, -1, 1 << 20) + struct.pack('>iiqqi', 1, -1, 0, -1, 1 << 20)
                       + struct.pack('>i', 0) + s(b'')),
    'list_offsets_v3': frame(2, 3, 8, struct.pack('>ib', -1, 0) + struct.pack('>i', 1) + s(b't') + struct.pack('>i', 2)
                             + struct.pack('>iq', 0, -1) + struct.pack('>iq', 1, -2)),
    'create_topics_v4': frame(19, 4, 9, struct.pack('>i', 1) + s(b'n1') + struct.pack('>ih', 3, -1) + struct.pack('>i', 0)
                              + struct.pack('>i', 1) + s(b'min.insync.replicas') + s(b'2') + struct.pack('>ib', 5000, 0)),
    'describe_configs_v2': frame(32, 2, 10, struct.pack('>i', 2) + b'\x02' + s(b't') + struct.pack('>i', -1)
                                 + b'\x04' + s(b'1') + struct.pack('>i', 1) + s(b'min.insync.replicas') + b'\x01'),
    'init_producer_id_v1': frame(22, 1, 11, struct.pack('>h', -1) + struct.pack('>i', 60000)),
    'delete_topics_v3': frame(20, 3, 12, struct.pack('>i', 1) + s(b't') + struct.pack('>i', 1000)),
    'find_coordinator_v2': frame(10, 2, 13, s(b'g') + b'\x00'),
    'produce_v0_magic0': frame(0, 0, 14, produce_old(0, [message(0) + message(0)])),
    'produce_v2_magic1': frame(0, 2, 15, produce_old(2, [message(1), batch])),
    'produce_v6_zstd': frame(0, 6, 16, struct.pack('>h', -1) + produce_old(6, [zbatch])),
    'fetch_v0': frame(1, 0, 17, fetch_old(0)),
    'fetch_v3': frame(1, 3, 18, fetch_old(3)),
    # AlterConfigs v1: a topic (two entries, one null) and a broker resource
    'alter_configs_v1': frame(33, 1, 19, struct.pack('>i', 2) + b'\x02' + s(b't') + struct.pack('>i', 2)
                              + s(b'cleanup.policy') + s(b'compact') + s(b'retention.ms') + struct.pack('>h', -1)
                              + b'\x04' + s(b'1') + struct.pack('>i', 1) + s(b'log.retention.ms') + s(b'1') + b'\x01'),
    # IncrementalAlterConfigs v0: SET, DELETE, APPEND (refused), the same topic twice
    'incremental_alter_configs_v0': frame(44, 0, 20, struct.pack('>i', 2) + b'\x02' + s(b't') + struct.pack('>i', 3)
                                          + s(b'retention.ms') + b'\x00' + s(b'60000') + s(b'segment.bytes') + b'\x01'
                                          + struct.pack('>h', -1) + s(b'cleanup.policy') + b'\x02' + s(b'compact')
                                          + b'\x02' + s(b't') + struct.pack('>i', 0) + b'\x00'),
}


# ---- flexible versions -------------------------------------------------------
def uv(n):
    b = b''
    while n >= 0x80:
        b += bytes([(n & 0x7f) | 0x80])
        n >>= 7
    return b + bytes([n])


def cs(x):
    return b'\x00' if x is None else uv(len(x) + 1) + x


def ca(items):
    return uv(len(items) + 1) + b''.join(items)


TAGS = b'\x02' + uv(3) + uv(1) + b'x' + uv(70000) + uv(0)  # two unknown tags (one a 3-byte varint)
NT = b'\x00'


def fframe(key, ver, corr, body):
    h = struct.pack('>hhi', key, ver, corr) + s(b'fz') + TAGS
    m = h + body
    return struct.pack('>i', len(m)) + m


flex = {
    'produce_v9': fframe(0, 9, 30, cs(None) + struct.pack('>hi', -1, 30000) + ca([cs(b't') + ca(
        [struct.pack('>i', 0) + uv(len(batch) + 1) + batch + NT, struct.pack('>i', 1) + uv(len(batch) + 1) + batch + TAGS])
        + NT]) + TAGS),
    'fetch_v12': fframe(1, 12, 31, struct.pack('>iiiib', -1, 500, 1, 1 << 20, 0) + struct.pack('>ii', 0, -1) + ca(
        [cs(b't') + ca([struct.pack('>iiqiqi', 0, -1, 0, -1, -1, 1 << 20) + NT,
                       struct.pack('>iiqiqi', 1, -1, 0, -1, -1, 1 << 20) + TAGS]) + NT])
        + ca([cs(b'old') + ca([struct.pack('>i', 3)]) + NT]) + cs(b'rack') + b'\x01' + uv(0) + uv(2) + cs(b'c')),
    'list_offsets_v8': fframe(2, 8, 32, struct.pack('>ib', -1, 0) + ca([cs(b't') + ca(
        [struct.pack('>iiq', 0, -1, t) + NT for t in (-1, -2, -3, -4, 0)]) + NT]) + TAGS),
    'metadata_v9': fframe(3, 9, 33, ca([cs(b't') + NT, cs(b'new') + TAGS]) + b'\x01\x00\x00' + TAGS),
    'metadata_v9_all': fframe(3, 9, 34, b'\x00' + b'\x00\x00\x00' + NT),
    'create_topics_v7': fframe(19, 7, 35, ca([cs(b'n1') + struct.pack('>ih', 3, -1) + ca([]) +
                                             ca([cs(b'min.insync.replicas') + cs(b'2') + TAGS, cs(b'x') + cs(None) + NT])
                                             + NT]) + struct.pack('>ib', 5000, 0) + TAGS),
    'describe_configs_v4': fframe(32, 4, 36, ca([b'\x02' + cs(b't') + b'\x00' + NT,
                                                b'\x04' + cs(b'1') + ca([cs(b'min.insync.replicas')]) + TAGS])
                                  + b'\x01\x01' + TAGS),
    'find_coordinator_v3': fframe(10, 3, 37, cs(b'g') + b'\x00' + TAGS),
    'find_coordinator_v4': fframe(10, 4, 38, b'\x00' + ca([cs(b'g'), cs(b'h')]) + TAGS),
    'alter_configs_v2': fframe(33, 2, 39, ca([b'\x02' + cs(b't') + ca([cs(b'segment.bytes') + cs(b'4096') + TAGS,
                                                                   cs(b'x') + cs(None) + NT]) + TAGS])
                               + b'\x01' + TAGS),
    'incremental_alter_configs_v1': fframe(44, 1, 40, ca([b'\x02' + cs(b't') + ca(
        [cs(b'retention.ms') + b'\x00' + cs(b'1') + TAGS, cs(b'preallocate') + b'\x01' + cs(None) + NT]) + NT,
        b'\x08' + cs(b'1') + ca([]) + TAGS]) + b'\x00' + TAGS),
}
flex['pipelined_flex'] = seeds['api_versions_v3'] + flex['metadata_v9'] + flex['produce_v9'] + flex['fetch_v12'] + \
    seeds['produce_v7'] + flex['list_offsets_v8']
seeds.update(flex)


def grec(sel, ver, body):  # sel: 0 FindCoordinator 1 JoinGroup 2 Heartbeat 3 LeaveGroup 4 SyncGroup 5 OffsetCommit 6 OffsetFetch
    return struct.pack('>BBH', sel, ver, len(body)) + body


join = lambda v, mid: grec(1, v, cs(b'g') + struct.pack('>ii', 10000, 10000) + cs(mid) + cs(None) + cs(b'consumer') +
                           ca([cs(b'range') + uv(4) + b'abc' + TAGS]) + (cs(b'why') if v >= 8 else b'') + TAGS)
group_flex = {
    'flex_join_sync_hb_leave': join(6, b'') + join(7, b'') + join(8, b'') + join(9, b'fz-1') +
    grec(4, 5, cs(b'g') + struct.pack('>i', 1) + cs(b'fz-1') + cs(None) + cs(b'consumer') + cs(b'range') +
         ca([cs(b'fz-1') + uv(3) + b'as' + TAGS]) + TAGS) +
    grec(4, 4, cs(b'g') + struct.pack('>i', 1) + cs(b'fz-1') + cs(None) + ca([]) + NT) +
    grec(2, 4, cs(b'g') + struct.pack('>i', 1) + cs(b'fz-1') + cs(None) + TAGS) +
    grec(3, 5, cs(b'g') + ca([cs(b'fz-1') + cs(None) + cs(b'bye') + TAGS]) + TAGS) +
    grec(3, 4, cs(b'g') + ca([cs(b'x') + cs(b'i') + NT]) + NT),
    'flex_commit_fetch': grec(5, 8, cs(b'g') + struct.pack('>i', -1) + cs(b'') + cs(None) + ca(
        [cs(b't') + ca([struct.pack('>iqi', 0, 5, -1) + cs(b'md') + TAGS, struct.pack('>iqi', 1, 7, 3) + cs(None) + NT])
         + NT]) + TAGS) +
    grec(6, 6, cs(b'g') + ca([cs(b't') + ca([struct.pack('>i', 0), struct.pack('>i', 1)]) + NT]) + TAGS) +
    grec(6, 7, cs(b'g') + b'\x00' + b'\x01' + NT) +
    grec(6, 8, ca([cs(b'g') + ca([cs(b't') + ca([struct.pack('>i', 0)]) + NT]) + TAGS, cs(b'h') + b'\x00' + NT])
         + b'\x00' + TAGS),
    'flex_find_describe_list': grec(0, 3, cs(b'g') + b'\x00' + TAGS) + grec(0, 4, b'\x00' + ca([cs(b'g'), cs(b'h')]) + NT) +
    grec(0, 0x85, ca([cs(b'g'), cs(b'h')]) + b'\x00' + TAGS) + grec(1, 0x83, TAGS) +
    grec(1, 0x84, ca([cs(b'Stable'), cs(b'empty')]) + NT),
}
for name, data in group_flex.items():
    with open('../group/fuzz_group_corpus/' + name, 'wb') as f:
        f.write(data)

seeds['pipelined'] = seeds['api_versions_v0'] + seeds['metadata_v1'] + seeds['produce_v7'] + seeds['fetch_v11']
seeds['pipelined_old'] = seeds['produce_v2_magic1'] + seeds['fetch_v0'] + seeds['produce_v7'] + seeds['fetch_v3']
for name, data in seeds.items():
    with open('fuzz_kafka_req_corpus/' + name, 'wb') as f:
        f.write(data)
print(len(seeds), 'seeds,', len(group_flex), 'group seeds')
