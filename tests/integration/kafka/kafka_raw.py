# kafka_raw.py HOST:PORT — the listener's framing and error rules with hand-made
# requests (docs/kafka.md "Errors"): ApiVersions v0 and v3 (flexible request
# header, v0 response header) list the advertised ranges; an unsupported
# ApiVersions version is answered in v0 with UNSUPPORTED_VERSION (35) and the
# ranges (Produce 0-8, Fetch 0-11: Kafka's minimums); pipelined requests are
# answered in request order; old versions (docs/kafka.md "Versions") are
# answered in their layouts on an open connection: Produce v0-2 of MessageSets
# (magic 0/1) UNSUPPORTED_FOR_MESSAGE_FORMAT (43) per partition, Produce v3 of
# one INVALID_RECORD (87), Fetch v0-3 UNSUPPORTED_VERSION (35) per hosted
# partition; an unknown API key, a frame over socket.request.max.bytes, and a
# truncated request each close the connection. Needs topic kc (3 partitions,
# a replica on this broker). Prints one line per check, exit 1 on the first
# failure.
import socket
import struct
import sys
import zlib

host, port = sys.argv[1].rsplit(':', 1)
port = int(port)


def conn():
    s = socket.create_connection((host, port), timeout=5)
    return s


def req(key, ver, corr, body=b'', flexible=False):
    hdr = struct.pack('>hhi', key, ver, corr) + struct.pack('>h', 3) + b'raw'
    if flexible:
        hdr += b'\x00'
    msg = hdr + body
    return struct.pack('>i', len(msg)) + msg


def recv_exact(s, n):
    b = b''
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError('closed after %d of %d bytes' % (len(b), n))
        b += c
    return b


def resp(s):
    size = struct.unpack('>i', recv_exact(s, 4))[0]
    return recv_exact(s, size)


def closed(s):
    try:
        s.settimeout(5)
        return s.recv(1) == b''
    except ConnectionResetError:
        return True


def fail(msg):
    print('FAIL', msg)
    sys.exit(1)


def api_ranges_v0(body):
    err, n = struct.unpack('>hi', body[:6])
    r = {}
    for i in range(n):
        k, lo, hi = struct.unpack('>hhh', body[6 + 6 * i:12 + 6 * i])
        r[k] = (lo, hi)
    return err, r


s = conn()
s.sendall(req(18, 0, 7))
b = resp(s)
corr = struct.unpack('>i', b[:4])[0]
err, r = api_ranges_v0(b[4:])
if corr != 7 or err != 0 or r.get(0) != (0, 8) or r.get(1) != (0, 11) or r.get(18) != (0, 3):
    fail('ApiVersions v0: corr %d err %d ranges %s' % (corr, err, r))
print('ApiVersions v0: %d APIs, Produce %s Fetch %s' % (len(r), r[0], r[1]))

# v3: compact array (N+1), per-entry and trailing tagged fields; header v0
s.sendall(req(18, 3, 8, b'\x04raw\x021\x00', flexible=True))
b = resp(s)
corr, err = struct.unpack('>ih', b[:6])
n = b[6] - 1
if corr != 8 or err != 0 or n != len(r):
    fail('ApiVersions v3: corr %d err %d n %d' % (corr, err, n))
print('ApiVersions v3: %d APIs (compact, v0 response header)' % n)

s.sendall(req(18, 99, 9, flexible=True))  # v3+: header v2 (KIP-511)
b = resp(s)
corr = struct.unpack('>i', b[:4])[0]
err, r2 = api_ranges_v0(b[4:])
if corr != 9 or err != 35 or r2 != r:
    fail('ApiVersions v99: corr %d err %d' % (corr, err))
print('ApiVersions v99: UNSUPPORTED_VERSION in v0 with the ranges')

# pipelined: Metadata v1 (no topics) between two ApiVersions; order kept
s.sendall(req(18, 1, 100) + req(3, 1, 101, struct.pack('>i', 0)) + req(18, 2, 102))
order = [struct.unpack('>i', resp(s)[:4])[0] for _ in range(3)]
if order != [100, 101, 102]:
    fail('pipelined answers out of order: %s' % order)
print('pipelined answers in request order:', order)

# 1000 pipelined in one write (beyond the 128 queued per connection: the
# rest waits in the input buffer): every answer, in order
s.sendall(b''.join(req(18, 0, 1000 + i) for i in range(1000)))
got = [struct.unpack('>i', resp(s)[:4])[0] for _ in range(1000)]
if got != list(range(1000, 2000)):
    fail('1000 pipelined answers out of order')
print('1000 pipelined requests: every answer, in order')



def message(magic, value):
    """A MessageSet entry of magic 0 or 1 (key null)."""
    m = struct.pack('>bb', magic, 0) + (struct.pack('>q', 1700000000000) if magic else b'') + \
        struct.pack('>i', -1) + struct.pack('>i', len(value)) + value
    m = struct.pack('>I', zlib.crc32(m)) + m
    return struct.pack('>qi', 0, len(m)) + m


def produce_errors(ver, records, corr):
    """Produce of version ver to kc partitions 0-2, acks=1: the errors."""
    body = (struct.pack('>h', -1) if ver >= 3 else b'') + struct.pack('>hii', 1, 5000, 1) + \
        struct.pack('>h', 2) + b'kc' + struct.pack('>i', 3)
    for q in range(3):
        body += struct.pack('>ii', q, len(records)) + records
    s.sendall(req(0, ver, corr, body))
    b = resp(s)
    p, errs = 4, []
    ntop = struct.unpack('>i', b[p:p + 4])[0]
    tl = struct.unpack('>h', b[p + 4:p + 6])[0]
    p += 6 + tl
    n = struct.unpack('>i', b[p:p + 4])[0]
    p += 4
    for _ in range(n):
        q, e, base = struct.unpack('>ihq', b[p:p + 14])
        errs.append(e)
        p += 14 + (8 if ver >= 2 else 0)
    p += 4 if ver >= 1 else 0  # throttle_time_ms
    if struct.unpack('>i', b[:4])[0] != corr or ntop != 1 or p != len(b):
        fail('Produce v%d: response layout (%d of %d bytes)' % (ver, p, len(b)))
    return errs


for ver, magic in ((0, 0), (1, 1), (2, 1), (2, 0)):
    errs = produce_errors(ver, message(magic, b'old') + message(magic, b'format'), 200 + ver)
    if errs != [43, 43, 43]:
        fail('Produce v%d of magic %d: errors %s' % (ver, magic, errs))
    print('Produce v%d of a magic %d MessageSet: UNSUPPORTED_FOR_MESSAGE_FORMAT per partition' % (ver, magic))
errs = produce_errors(3, message(1, b'x'), 203)
if errs != [87, 87, 87]:
    fail('Produce v3 of magic 1: errors %s' % errs)
print('Produce v3 of a magic 1 MessageSet: INVALID_RECORD per partition')

for ver in range(4):
    body = struct.pack('>iii', -1, 100, 1) + (struct.pack('>i', 1 << 20) if ver >= 3 else b'') + \
        struct.pack('>ih', 1, 2) + b'kc' + struct.pack('>i', 3)
    for q in range(3):
        body += struct.pack('>iqi', q, 0, 1 << 20)
    s.sendall(req(1, ver, 300 + ver, body))
    b = resp(s)
    p = 4 + (4 if ver >= 1 else 0)
    ntop = struct.unpack('>i', b[p:p + 4])[0]
    p += 6 + 2
    n = struct.unpack('>i', b[p:p + 4])[0]
    p += 4
    errs = []
    for _ in range(n):
        q, e, hw, rl = struct.unpack('>ihqi', b[p:p + 18])
        errs.append(e)
        p += 18 + max(rl, 0)
    if struct.unpack('>i', b[:4])[0] != 300 + ver or ntop != 1 or p != len(b) or errs != [35, 35, 35]:
        fail('Fetch v%d: errors %s, layout %d of %d bytes' % (ver, errs, p, len(b)))
    print('Fetch v%d: UNSUPPORTED_VERSION per partition (no down-conversion)' % ver)
s.sendall(req(18, 0, 310))
if struct.unpack('>i', resp(s)[:4])[0] != 310:
    fail('no answer after the old versions')

# acks=0 produce whose error only the replica manager finds (a v2 batch with
# a wrong CRC: CORRUPT_MESSAGE, or NOT_LEADER_OR_FOLLOWER where broker 1
# is a follower): no response, and the connection is closed, as Kafka does;
# the ApiVersions sent right behind it is never answered
rec = bytes([0, 0, 0, 0, 1 << 1]) + b'x' + bytes([0])  # attrs, ts delta, offset delta, key -1, value 'x', 0 headers
rec = bytes([len(rec) << 1]) + rec
batch = struct.pack('>ibIhiqqqhii', -1, 2, 0, 0, 0, 1700000000000, 1700000000000, -1, -1, -1, 1) + rec
batch = struct.pack('>qi', 0, len(batch)) + batch     # crc 0: wrong
body = struct.pack('>hhii', -1, 0, 5000, 1) + struct.pack('>h', 2) + b'kc' + struct.pack('>i', 3)
for q in range(3):
    body += struct.pack('>ii', q, len(batch)) + batch
s = conn()
s.sendall(req(0, 3, 400, body) + req(18, 0, 401))
if not closed(s):
    fail('acks=0 produce of a corrupt batch: connection still open')
print('acks=0 produce failing in the replica manager: no response, connection closed')

s = conn()
s.sendall(req(50, 0, 1))
if not closed(s):
    fail('unknown api key: connection still open')
print('unknown api key 50: connection closed')

s = conn()
s.sendall(struct.pack('>i', 200 * 1024 * 1024) + b'\x00' * 16)
if not closed(s):
    fail('frame over socket.request.max.bytes: connection still open')
print('200 MiB frame size: connection closed')

s = conn()
s.sendall(req(3, 1, 5, struct.pack('>i', 3) + b'\x00\x05ab'))  # 3 topics, a cut-off name
if not closed(s):
    fail('truncated Metadata: connection still open')
print('truncated Metadata request: connection closed')

# hostile bytes: 200 connections, each a valid-looking frame size and a
# random body (any API key and version); the broker must still answer
import random
rnd = random.Random(1)
for i in range(200):
    s = conn()
    body = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 300)))
    key = rnd.choice([0, 1, 2, 3, 18, 19, 20, 22, 32, 10, rnd.randint(-5, 100)])
    ver = rnd.randint(-1, 12)
    head = struct.pack('>hhi', key, ver, i) + struct.pack('>h', 2) + b'fz'
    if key == 18 and ver >= 3 or rnd.random() < 0.1:
        head += b'\x00'  # header v2 tagged fields
    if rnd.random() < 0.5:  # a body that starts like the API's, then noise
        body = struct.pack('>hii', -1, 1, 1) + body
    s.sendall(struct.pack('>i', len(head) + len(body)) + head + body)
    s.shutdown(socket.SHUT_WR)  # EOF: the broker closes once it has read the request
    s.settimeout(5)
    try:
        while s.recv(65536):
            pass
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
s = conn()
s.sendall(req(18, 0, 77))
if struct.unpack('>i', resp(s)[:4])[0] != 77:
    fail('no answer after the hostile connections')
print('200 hostile connections: broker still answers')
print('OK')
