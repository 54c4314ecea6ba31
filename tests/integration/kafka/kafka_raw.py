# kafka_raw.py HOST:PORT — the listener's framing and error rules with hand-made
# requests (docs/kafka.md "Errors"): ApiVersions v0 and v3 (flexible request
# header, v0 response header) list the advertised ranges; an unsupported
# ApiVersions version is answered in v0 with UNSUPPORTED_VERSION (35) and the
# ranges (Produce 0-9, Fetch 0-12: Kafka's minimums); pipelined requests are
# answered in request order; old versions (docs/kafka.md "Versions") are
# answered in their layouts on an open connection: Produce v0-2 of MessageSets
# (magic 0/1) UNSUPPORTED_FOR_MESSAGE_FORMAT (43) per partition, Produce v3 of
# one INVALID_RECORD (87), Fetch v0-3 UNSUPPORTED_VERSION (35) per hosted
# partition; an unknown API key, a frame over socket.request.max.bytes, and a
# truncated request each close the connection; the flexible versions of
# every served API (below "flexible versions") answer field by field. Needs
# topic kc (3 partitions, RF 3, min.insync.replicas=2, records), group pjs-g
# committed at 300 per partition of topic pj (kafka_pjs.mjs). Prints one line
# per check, exit 1 on the first failure.
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
if corr != 7 or err != 0 or r.get(0) != (0, 9) or r.get(1) != (0, 12) or r.get(18) != (0, 3):
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

# ---- flexible versions (KIP-482; docs/kafka.md "Versions") ---------------
# Every request carries an unknown tag in its header and in its body's tagged
# section (the broker must skip them); each answer is decoded field by field
# and must end exactly at the frame's end.
def uv(n):
    b = b''
    while True:
        if n < 0x80:
            return b + bytes([n])
        b += bytes([(n & 0x7f) | 0x80])
        n >>= 7


def cs(x):  # compact string; None = null
    if x is None:
        return b'\x00'
    x = x.encode()
    return uv(len(x) + 1) + x


def ca(items):  # compact array of already-encoded items; None = null
    return b'\x00' if items is None else uv(len(items) + 1) + b''.join(items)


UNKNOWN_TAGS = b'\x01' + uv(99) + uv(3) + b'abc'   # one field, tag 99, 3 bytes
NO_TAGS = b'\x00'


def freq(key, ver, corr, body):
    hdr = struct.pack('>hhi', key, ver, corr) + struct.pack('>h', 3) + b'raw' + UNKNOWN_TAGS
    return struct.pack('>i', len(hdr) + len(body)) + hdr + body


class R:
    """A reader over one flexible response (after the 4-byte size)."""
    def __init__(self, b, corr, what):
        self.b, self.p, self.what = b, 0, what
        if self.i32() != corr:
            fail('%s: correlation id' % what)
        self.tags()  # response header v1

    def take(self, n):
        if self.p + n > len(self.b):
            fail('%s: answer cut at byte %d' % (self.what, self.p))
        v = self.b[self.p:self.p + n]
        self.p += n
        return v

    def i8(self): return struct.unpack('>b', self.take(1))[0]
    def i16(self): return struct.unpack('>h', self.take(2))[0]
    def i32(self): return struct.unpack('>i', self.take(4))[0]
    def i64(self): return struct.unpack('>q', self.take(8))[0]

    def uv(self):
        n = sh = 0
        while True:
            c = self.take(1)[0]
            n |= (c & 0x7f) << sh
            sh += 7
            if c < 0x80:
                return n

    def s(self):
        n = self.uv()
        return None if n == 0 else self.take(n - 1).decode()

    def by(self):
        n = self.uv()
        return None if n == 0 else self.take(n - 1)

    def arr(self, f):
        n = self.uv()
        return None if n == 0 else [f() for _ in range(n - 1)]

    def tags(self):
        n = self.uv()
        if n:
            fail('%s: %d tagged fields in an answer' % (self.what, n))

    def end(self):
        self.tags()
        if self.p != len(self.b):
            fail('%s: %d bytes after the answer' % (self.what, len(self.b) - self.p))


def fcall(sock, key, ver, corr, body, what):
    sock.sendall(freq(key, ver, corr, body))
    return R(resp(sock), corr, what)


s = conn()
# Metadata v9 of kc: 3 brokers, 3 partitions, leaders, replicas and ISRs
r = fcall(s, 3, 9, 500, ca([cs('kc') + UNKNOWN_TAGS]) + b'\x00\x00\x00' + UNKNOWN_TAGS, 'Metadata v9')
r.i32()
def broker():
    b = (r.i32(), r.s(), r.i32(), r.s())
    r.tags()
    return b
brokers = r.arr(broker)
cluster, controller = r.s(), r.i32()
def mpart():
    q = (r.i16(), r.i32(), r.i32(), r.i32(), r.arr(r.i32), r.arr(r.i32), r.arr(r.i32))
    r.tags()
    return q
def mtopic():
    t = (r.i16(), r.s(), r.i8(), r.arr(mpart), r.i32())
    r.tags()
    return t
topics = r.arr(mtopic)
r.i32()  # cluster_authorized_operations (v8-10)
r.end()
if len(brokers) != 3 or len(topics) != 1 or topics[0][:3] != (0, 'kc', 0) or len(topics[0][3]) != 3 or \
        any(q[0] != 0 or q[2] < 1 or len(q[4]) != 3 or len(q[5]) < 2 or q[6] != [] for q in topics[0][3]):
    fail('Metadata v9: brokers %s topics %s' % (brokers, topics))
addr = {b[0]: (b[1], b[2]) for b in brokers}
leader0 = [q for q in topics[0][3] if q[1] == 0][0][2]
print('Metadata v9: %d brokers, kc partitions %s' % (len(brokers), sorted((q[1], q[2]) for q in topics[0][3])))

# ListOffsets v8 at partition 0's leader: -2, -1, -3 (max timestamp), -4
ls = socket.create_connection(addr[leader0], timeout=5)
parts = [struct.pack('>iiq', 0, -1, t) + NO_TAGS for t in (-2, -1, -3, -4)]
r = fcall(ls, 2, 8, 501, struct.pack('>ib', -1, 0) + ca([cs('kc') + ca(parts) + NO_TAGS]) + UNKNOWN_TAGS,
          'ListOffsets v8')
r.i32()
def lpart():
    q = (r.i32(), r.i16(), r.i64(), r.i64(), r.i32())
    r.tags()
    return q
def ltopic():
    t = (r.s(), r.arr(lpart))
    r.tags()
    return t
lt = r.arr(ltopic)
r.end()
lp = lt[0][1]
if lt[0][0] != 'kc' or [q[1] for q in lp] != [0] * 4 or lp[0][3] != 0 or lp[1][3] < 1 or \
        not (0 <= lp[2][3] < lp[1][3]) or lp[2][2] < 1600000000000 or lp[3][3] != lp[0][3]:
    fail('ListOffsets v8: %s' % lt)
print('ListOffsets v8: earliest %d latest %d max-timestamp offset %d (ts %d) earliest-local %d' %
      (lp[0][3], lp[1][3], lp[2][3], lp[2][2], lp[3][3]))
ls.close()

# FindCoordinator v3 (one key) and v4 (two keys, KIP-699)
r = fcall(s, 10, 3, 502, cs('pjs-g') + b'\x00' + UNKNOWN_TAGS, 'FindCoordinator v3')
r.i32()
e3, m3, node, host3, port3 = r.i16(), r.s(), r.i32(), r.s(), r.i32()
r.end()
if e3 != 0 or addr.get(node) != (host3, port3):
    fail('FindCoordinator v3: err %d node %d %s:%d' % (e3, node, host3, port3))
r = fcall(s, 10, 4, 503, b'\x00' + ca([cs('pjs-g'), cs('fxg'), cs('fxj')]) + UNKNOWN_TAGS, 'FindCoordinator v4')
r.i32()
def coord():
    c = (r.s(), r.i32(), r.s(), r.i32(), r.i16(), r.s())
    r.tags()
    return c
cs4 = r.arr(coord)
r.end()
if [c[0] for c in cs4] != ['pjs-g', 'fxg', 'fxj'] or any(c[4] != 0 or addr.get(c[1]) != (c[2], c[3]) for c in cs4) or \
        cs4[0][1] != node:
    fail('FindCoordinator v4: %s' % cs4)
print('FindCoordinator v3: pjs-g at %d; v4: %s' % (node, [(c[0], c[1]) for c in cs4]))
socks = {}
def at(n):
    if n not in socks:
        socks[n] = socket.create_connection(addr[n], timeout=5)
    return socks[n]
gc, fx, jc = at(node), at(cs4[1][1]), at(cs4[2][1])  # pjs-g's, fxg's and fxj's coordinators

# OffsetCommit v8 to group fxg (generation -1, no member: a group without
# members takes commits), then OffsetFetch v8 of fxg (fx's coordinator) and
# v6/v7 of pjs-g (its committed 300 per partition from kafka_pjs.mjs)
cparts = [struct.pack('>iqi', p, 10 + p, -1) + cs('m%d' % p) + NO_TAGS for p in range(3)]
r = fcall(fx, 8, 8, 504, cs('fxg') + struct.pack('>i', -1) + cs('') + cs(None) +
          ca([cs('kc') + ca(cparts) + UNKNOWN_TAGS]) + UNKNOWN_TAGS, 'OffsetCommit v8')
r.i32()
def cpart():
    q = (r.i32(), r.i16())
    r.tags()
    return q
def ctopic():
    t = (r.s(), r.arr(cpart))
    r.tags()
    return t
ct = r.arr(ctopic)
r.end()
if ct != [('kc', [(0, 0), (1, 0), (2, 0)])]:
    fail('OffsetCommit v8: %s' % ct)
def fpart():
    q = (r.i32(), r.i64(), r.i32(), r.s(), r.i16())
    r.tags()
    return q
def ftopic():
    t = (r.s(), r.arr(fpart))
    r.tags()
    return t
def fgroup():
    g = (r.s(), r.arr(ftopic), r.i16())
    r.tags()
    return g
r = fcall(fx, 9, 8, 505, ca([cs('fxg') + ca([cs('kc') + ca([struct.pack('>i', p) for p in range(3)]) + NO_TAGS]) +
                             UNKNOWN_TAGS, cs('nobody') + b'\x00' + NO_TAGS]) + b'\x01' + UNKNOWN_TAGS,
          'OffsetFetch v8')
r.i32()
fg = r.arr(fgroup)
r.end()
if fg[0] != ('fxg', [('kc', [(p, 10 + p, -1, 'm%d' % p, 0) for p in range(3)])], 0) or fg[1][0] != 'nobody':
    fail('OffsetFetch v8: %s' % fg)
for ver in (6, 7):
    r = fcall(gc, 9, ver, 506 + ver, cs('pjs-g') + ca([cs('pj') + ca([struct.pack('>i', p) for p in range(3)]) +
                                                      NO_TAGS]) + (b'\x00' if ver >= 7 else b'') + UNKNOWN_TAGS,
              'OffsetFetch v%d' % ver)
    r.i32()
    ft = r.arr(ftopic)
    gerr = r.i16()
    r.end()
    if gerr != 0 or ft != [('pj', [(p, 300, -1, None, 0) for p in range(3)])] and \
            ft != [('pj', [(p, 300, -1, '', 0) for p in range(3)])]:
        fail('OffsetFetch v%d: %s err %d' % (ver, ft, gerr))
print('OffsetCommit v8 + OffsetFetch v8 (2 groups), v6 and v7 (pjs-g at 300 per partition)')

# JoinGroup v6-8 without a member id: MEMBER_ID_REQUIRED (79) with the new
# id; v9 is the platformatic client's. Heartbeat v4, SyncGroup v4, LeaveGroup
# v4 of an unknown member: UNKNOWN_MEMBER_ID (25) in each layout.
for ver in (6, 7, 8):
    body = cs('fxj') + struct.pack('>ii', 10000, 10000) + cs('') + cs(None) + cs('consumer') + \
        ca([cs('range') + uv(3) + b'md' + UNKNOWN_TAGS]) + (cs('because') if ver >= 8 else b'') + UNKNOWN_TAGS
    r = fcall(jc, 11, ver, 510 + ver, body, 'JoinGroup v%d' % ver)
    r.i32()
    err, gen = r.i16(), r.i32()
    ptype = r.s() if ver >= 7 else None
    pname, leader, mid = r.s(), r.s(), r.s()
    ms = r.arr(lambda: (r.s(), r.s(), r.by(), r.tags()))
    r.end()
    if err != 79 or gen != -1 or not mid or not mid.startswith('raw-') or ms != [] or \
            (ver >= 7 and (ptype, pname) != (None, None)) or (ver < 7 and pname != ''):
        fail('JoinGroup v%d: %s' % (ver, (err, gen, ptype, pname, leader, mid, ms)))
print('JoinGroup v6-8: MEMBER_ID_REQUIRED with member id', mid)
r = fcall(jc, 12, 4, 520, cs('fxj') + struct.pack('>i', 1) + cs('nobody') + cs(None) + UNKNOWN_TAGS, 'Heartbeat v4')
r.i32()
hb = r.i16()
r.end()
r = fcall(jc, 14, 4, 521, cs('fxj') + struct.pack('>i', 1) + cs('nobody') + cs(None) + ca([]) + UNKNOWN_TAGS,
          'SyncGroup v4')
r.i32()
sy = (r.i16(), r.by())
r.end()
r = fcall(jc, 13, 4, 522, cs('fxj') + ca([cs('nobody') + cs(None) + UNKNOWN_TAGS]) + UNKNOWN_TAGS, 'LeaveGroup v4')
r.i32()
lv = (r.i16(), r.arr(lambda: (r.s(), r.s(), r.i16(), r.tags())))
r.end()
if hb != 25 or sy != (25, b'') or lv[1] != [('nobody', None, 25, None)]:
    fail('unknown member: Heartbeat v4 %s SyncGroup v4 %s LeaveGroup v4 %s' % (hb, sy, lv))
print('Heartbeat v4, SyncGroup v4, LeaveGroup v4: UNKNOWN_MEMBER_ID')

# DescribeGroups v5 of pjs-g (Empty after its members left) and fxj;
# ListGroups v3 and v4 (filter Empty) at pjs-g's coordinator
r = fcall(gc, 15, 5, 523, ca([cs('pjs-g'), cs('nogroup')]) + b'\x01' + UNKNOWN_TAGS, 'DescribeGroups v5')
r.i32()
def dgroup():
    g = (r.i16(), r.s(), r.s(), r.s(), r.s(), r.arr(lambda: None), r.i32())
    r.tags()
    return g
dg = r.arr(dgroup)
r.end()
# nogroup: Dead, with NOT_COORDINATOR (16) where another broker owns its partition
if [g[:6] for g in dg] != [(0, 'pjs-g', 'Empty', 'consumer', '', []), (dg[1][0], 'nogroup', 'Dead', '', '', [])] or \
        dg[1][0] not in (0, 16):
    fail('DescribeGroups v5: %s' % dg)
lists = {}
for ver, body in ((3, UNKNOWN_TAGS), (4, ca([cs('empty')]) + UNKNOWN_TAGS), (4, ca([cs('Stable')]) + UNKNOWN_TAGS)):
    r = fcall(gc, 16, ver, 524 + len(lists), body, 'ListGroups v%d' % ver)
    r.i32()
    err = r.i16()
    gs = r.arr(lambda: (r.s(), r.s(), r.s() if ver >= 4 else None, r.tags())[:3])
    r.end()
    lists[len(lists)] = (err, gs)
if lists[0][0] or ('pjs-g', 'consumer', None) not in lists[0][1] or ('pjs-g', 'consumer', 'Empty') not in lists[1][1] or \
        any(g[0] == 'pjs-g' for g in lists[2][1]):
    fail('ListGroups: %s' % lists)
print('DescribeGroups v5: pjs-g Empty, nogroup Dead; ListGroups v3, v4 with a states filter')

# CreateTopics v7 of fx7 (2 partitions, RF 2, one config) and DescribeConfigs v4
cfg = [cs('min.insync.replicas') + cs('2') + UNKNOWN_TAGS]
body = ca([cs('fx7') + struct.pack('>ih', 2, 2) + ca([]) + ca(cfg) + UNKNOWN_TAGS]) + struct.pack('>ib', 10000, 0) + \
    UNKNOWN_TAGS
r = fcall(s, 19, 7, 530, body, 'CreateTopics v7')
r.i32()
def ctres():
    t = (r.s(), r.take(16), r.i16(), r.s(), r.i32(), r.i16(),
         r.arr(lambda: (r.s(), r.s(), r.i8(), r.i8(), r.i8(), r.tags())[:5]))
    r.tags()
    return t
cr = r.arr(ctres)
r.end()
name, uuid, err, msg, np, rf, cfgs = cr[0]
got = {c[0]: c for c in cfgs or []}
if (name, err, np, rf) != ('fx7', 0, 2, 2) or uuid[:12] != b'hiwater\x00\x00\x00\x00\x00' or uuid[12:] == b'\0' * 4 or \
        got.get('min.insync.replicas') != ('min.insync.replicas', '2', 0, 1, 0) or 'cleanup.policy' not in got:
    fail('CreateTopics v7: %s' % (cr,))
print('CreateTopics v7: fx7 id %s, %d partitions, RF %d, %d configs' % (uuid.hex(), np, rf, len(cfgs)))
res = [struct.pack('>b', 2) + cs('kc') + ca([cs('min.insync.replicas')]) + NO_TAGS]
r = fcall(s, 32, 4, 531, ca(res) + b'\x01\x00' + UNKNOWN_TAGS, 'DescribeConfigs v4')
r.i32()
def dres():
    d = (r.i16(), r.s(), r.i8(), r.s(),
         r.arr(lambda: (r.s(), r.s(), r.i8(), r.i8(), r.i8(),
                        r.arr(lambda: (r.s(), r.s(), r.i8(), r.tags())[:3]), r.i8(), r.s(), r.tags())[:8]))
    r.tags()
    return d
dc = r.arr(dres)
r.end()
if dc != [(0, None, 2, 'kc', [('min.insync.replicas', '2', 0, 1, 0,
                                [('min.insync.replicas', '2', 1), ('min.insync.replicas', '1', 5)], 0, None)])]:
    fail('DescribeConfigs v4: %s' % dc)
print('DescribeConfigs v4: kc min.insync.replicas=2 (DYNAMIC_TOPIC_CONFIG; synonyms: the override, the broker default)')

# IncrementalAlterConfigs v1 (flexible; docs/kafka.md "Topic configuration"):
# SET retention.ms on fx7, and a BROKER resource (INVALID_REQUEST: broker
# configs are static); then DELETE it again; an unknown key is INVALID_CONFIG
def iac(corr, resources, what):
    global r
    body = ca([struct.pack('>b', t) + cs(n) + ca([cs(k) + struct.pack('>b', op) + cs(v) + UNKNOWN_TAGS
                                                  for k, op, v in cfgs]) + NO_TAGS
               for t, n, cfgs in resources]) + b'\x00' + NO_TAGS
    r = fcall(s, 44, 1, corr, body, what)
    r.i32()
    out = r.arr(lambda: (r.i16(), r.s(), r.i8(), r.s(), r.tags())[:4])
    r.end()
    return out
got = iac(532, [(2, 'fx7', [('retention.ms', 0, '3600000')]), (4, '1', [('log.retention.ms', 0, '1')])],
          'IncrementalAlterConfigs v1')
if [(e, t, n) for e, _, t, n in got] != [(0, 2, 'fx7'), (42, 4, '1')] or 'static' not in (got[1][1] or ''):
    fail('IncrementalAlterConfigs v1 SET: %s' % got)
def fx7_retention():
    global r  # dres reads the global reader
    res = [struct.pack('>b', 2) + cs('fx7') + ca([cs('retention.ms')]) + NO_TAGS]
    r = fcall(s, 32, 4, 533, ca(res) + b'\x00\x00' + NO_TAGS, 'DescribeConfigs v4')
    r.i32()
    d = r.arr(dres)
    r.end()
    e = d[0][4][0]
    return (e[1], e[3])  # value, source
if fx7_retention() != ('3600000', 1):
    fail('DescribeConfigs after IncrementalAlterConfigs: %s' % (fx7_retention(),))
got = iac(534, [(2, 'fx7', [('retention.ms', 1, None)])], 'IncrementalAlterConfigs v1 DELETE')
if got != [(0, None, 2, 'fx7')] or fx7_retention() != ('604800000', 5):
    fail('IncrementalAlterConfigs v1 DELETE: %s %s' % (got, fx7_retention()))
got = iac(535, [(2, 'fx7', [('retention.hours', 0, '1')])], 'IncrementalAlterConfigs v1 unknown key')
if got != [(40, 'Unknown topic config name: retention.hours', 2, 'fx7')]:
    fail('IncrementalAlterConfigs v1 unknown key: %s' % got)
print('IncrementalAlterConfigs v1: SET and DELETE retention.ms (DescribeConfigs source 1, then 5); '
      'BROKER INVALID_REQUEST; unknown key INVALID_CONFIG')

# malformed flexible requests close the connection (counted as bad_request):
# a compact string longer than the frame, tags out of order
for what, body in (('compact length past the end', uv(200) + b'kc'),
                   ('tags out of order', ca([]) + b'\x00\x00\x00' + b'\x02' + uv(5) + b'\x00' + uv(4) + b'\x00')):
    b = socket.create_connection(addr[leader0], timeout=5)
    b.sendall(freq(3, 9, 540, body))
    if not closed(b):
        fail('Metadata v9 with a %s: connection still open' % what)
print('flexible Metadata with a bad compact length / tag order: connection closed')
for k in socks.values():
    k.close()

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
