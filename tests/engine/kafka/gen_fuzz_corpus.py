# gen_fuzz_corpus.py — writes the seed corpus of fuzz_kafka_req (one
# connection's bytes per file): ApiVersions v0/v3, Metadata v1/v8 (auto
# create), Produce v7 (acks all and 0), Fetch v11 of two partitions,
# ListOffsets v3, CreateTopics v4, DescribeConfigs v2, InitProducerId v1,
# DeleteTopics v3, FindCoordinator v2, pipelined; the old versions
# (docs/kafka.md "Versions"): Produce v0 of a magic 0 MessageSet, v2 of a
# magic 1 MessageSet beside a RecordBatch, v6 of a zstd batch, Fetch v0 and
# v3. Run from this directory.
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
}
seeds['pipelined'] = seeds['api_versions_v0'] + seeds['metadata_v1'] + seeds['produce_v7'] + seeds['fetch_v11']
seeds['pipelined_old'] = seeds['produce_v2_magic1'] + seeds['fetch_v0'] + seeds['produce_v7'] + seeds['fetch_v3']
for name, data in seeds.items():
    with open('fuzz_kafka_req_corpus/' + name, 'wb') as f:
        f.write(data)
print(len(seeds), 'seeds')
