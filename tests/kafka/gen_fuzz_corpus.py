# gen_fuzz_corpus.py — writes the seed corpus of fuzz_kafka_req (one
# connection's bytes per file): ApiVersions v0/v3, Metadata v1/v8 (auto
# create), Produce v7 (acks all and 0), Fetch v11 of two partitions,
# ListOffsets v3, CreateTopics v4, DescribeConfigs v2, InitProducerId v1,
# DeleteTopics v3, FindCoordinator v2, pipelined. Run from this directory.
import struct


def s(x):
    return struct.pack('>h', len(x)) + x


def frame(key, ver, corr, body, flexible=False):
    h = struct.pack('>hhi', key, ver, corr) + s(b'fz') + (b'\x00' if flexible else b'')
    m = h + body
    return struct.pack('>i', len(m)) + m


batch = bytes(61)
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
}
seeds['pipelined'] = seeds['api_versions_v0'] + seeds['metadata_v1'] + seeds['produce_v7'] + seeds['fetch_v11']
for name, data in seeds.items():
    with open('fuzz_kafka_req_corpus/' + name, 'wb') as f:
        f.write(data)
print(len(seeds), 'seeds')
