# kafka_zbatch.py BOOT TOPIC — hand-made compressed record batches in Kafka
# Produce v3 requests (docs/compression.md "What the broker checks"): a
# valid lz4 batch is appended (error 0; also in a Produce v2 request, which
# has no transactional_id — docs/kafka.md "Versions"), the same batch with a
# byte of its compressed section changed (CRC recomputed) is CORRUPT_MESSAGE
# (2), codec id 5 is UNSUPPORTED_COMPRESSION_TYPE (76), so is zstd below
# Produce v7 (KIP-110); a zstd section inflating to 70 MiB (Produce v7) is
# MESSAGE_TOO_LARGE (10). Sent to partition 0's leader (the
# broker that does not answer NOT_LEADER_OR_FOLLOWER); a cut frame is
# CORRUPT_MESSAGE too. Prints the codes;
# exit 1 on a mismatch.
import socket
import struct
import sys

import lz4.frame
import zstandard

_T = []
for i in range(256):
    c = i
    for _ in range(8):
        c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    _T.append(c)


def crc32c(b):
    c = 0xFFFFFFFF
    for x in b:
        c = _T[(c ^ x) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def varint(v):
    v = (v << 1) ^ (v >> 63)  # zigzag
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def record(value):
    body = b'\x00' + varint(0) + varint(0) + varint(-1) + varint(len(value)) + value + varint(0)
    return varint(len(body)) + body


def batch(section, codec, count=1):
    after_crc = struct.pack('>hiqqqhii', codec, count - 1, 1700000000000, 1700000000000, -1, -1, -1, count) + section
    head = struct.pack('>qiib', 0, 4 + 1 + 4 + len(after_crc), -1, 2)
    return head + struct.pack('>I', crc32c(after_crc)) + after_crc


def produce(addr, topic, records, ver=3):
    t = topic.encode()
    body = (struct.pack('>h', -1) if ver >= 3 else b'') + struct.pack('>hi', -1, 10000) + \
        struct.pack('>ih', 1, len(t)) + t + struct.pack('>iii', 1, 0, len(records)) + records
    req = struct.pack('>hhih', 0, ver, 7, 4) + b'kxzb' + body
    host, port = addr.rsplit(':', 1)
    s = socket.create_connection((host, int(port)), timeout=15)
    s.sendall(struct.pack('>i', len(req)) + req)
    n = struct.unpack('>i', recv(s, 4))[0]
    resp = recv(s, n)
    s.close()
    # corr, [topic, [partition, error, base_offset, log_append_time]], throttle
    tl = struct.unpack('>h', resp[8:10])[0]
    p = 10 + tl + 4
    return struct.unpack('>h', resp[p + 4:p + 6])[0]


def recv(s, n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError('connection closed')
        b += c
    return b


boot, topic = sys.argv[1], sys.argv[2]
good = lz4.frame.compress(record(b'lz4 by hand ' * 20), content_checksum=True)
cases = [('valid lz4', batch(good, 3), 0, 3)]
bad = bytearray(good)
bad[len(bad) // 2] ^= 0x55
cases.append(('corrupt lz4 (content checksum)', batch(bytes(bad), 3), 2, 3))
cases.append(('cut lz4 frame', batch(good[:-9], 3), 2, 3))
cases.append(('codec 5', batch(good, 5), 76, 3))
cases.append(('valid lz4, Produce v2', batch(good, 3), 0, 2))
small = zstandard.ZstdCompressor().compress(record(b'zstd by hand ' * 20))
cases.append(('zstd, Produce v3', batch(small, 4), 76, 3))
bomb = zstandard.ZstdCompressor().compress(record(bytes(70 << 20)))
cases.append(('zstd bomb (%d bytes -> 70 MiB), v7' % len(bomb), batch(bomb, 4), 10, 7))
leader = None
for addr in boot.split(','):
    if produce(addr, topic, cases[0][1]) != 6:
        leader = addr
        break
ok = leader is not None
for name, b, want, ver in cases[1:] + cases[:1]:
    got = produce(leader, topic, b, ver) if leader else -999
    print('%-32s error %d (want %d)' % (name, got, want))
    ok = ok and got == want
print('OK' if ok else 'FAIL')
sys.exit(0 if ok else 1)
