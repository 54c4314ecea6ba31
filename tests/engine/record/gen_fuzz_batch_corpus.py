#!/usr/bin/env python3
"""Writes the seed corpus for fuzz_batch (tests/engine/record/fuzz_batch_corpus/): a few
valid Kafka RecordBatch v2 buffers assembled from the spec, independently of
the C encoder. Run from this directory; the output is committed."""
import os
import struct


def crc32c(data):
    c = 0xFFFFFFFF
    for x in data:
        c ^= x
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    return c ^ 0xFFFFFFFF


def varint(v):  # zigzag int64
    u = (v << 1) ^ (v >> 63)
    u &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = u & 0x7F
        u >>= 7
        out.append(b | (0x80 if u else 0))
        if not u:
            return bytes(out)


def field(b):
    return varint(-1) if b is None else varint(len(b)) + b


def record(i, ts_delta, key, value, headers):
    body = b"\x00" + varint(ts_delta) + varint(i) + field(key) + field(value)
    body += varint(len(headers))
    for hk, hv in headers:
        body += field(hk) + field(hv)
    return varint(len(body)) + body


def batch(recs, base_offset=0, epoch=-1, attrs=0, base_ts=1700000000000,
          pid=-1, pepoch=-1, seq=-1, max_ts=None):
    raw = b"".join(record(i, *r) for i, r in enumerate(recs))
    if max_ts is None:
        max_ts = base_ts + max(r[0] for r in recs)
    tail = struct.pack(">hiqqqhii", attrs, len(recs) - 1, base_ts, max_ts,
                       pid, pepoch, seq, len(recs)) + raw
    return struct.pack(">qiib", base_offset, 49 + len(raw), epoch, 2) + \
        struct.pack(">I", crc32c(tail)) + tail


seeds = {
    "one_record": batch([(0, b"k1", b"hello", [(b"h", b"v")])],
                        pid=1000, pepoch=5, seq=7),
    "nulls_and_headers": batch([
        (0, None, b"v0", []),
        (-5, b"k", None, [(b"a", None), (b"bb", b"x" * 20)]),
        (300, b"", b"", [(b"", b"")]),
    ], base_offset=100, epoch=3),
    "idempotent_many": batch([(i * 10, b"key%d" % i, b"value" * i, [])
                              for i in range(20)], pid=77, pepoch=0, seq=2**31 - 5),
    "log_append_time": batch([(0, b"a", b"b", []), (1, b"c", b"d", [])],
                             attrs=0x08, max_ts=1800000000000),
    "control_txn": batch([(0, b"\x00\x00\x00\x01", b"\x00\x00\x00\x00\x00\x00", [])],
                         attrs=0x30, pid=9, pepoch=1, seq=-1),
}
seeds["two_batches_and_partial"] = seeds["one_record"] + seeds["nulls_and_headers"] + \
    seeds["idempotent_many"][:40]

os.makedirs("fuzz_batch_corpus", exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join("fuzz_batch_corpus", name), "wb") as f:
        f.write(data)
