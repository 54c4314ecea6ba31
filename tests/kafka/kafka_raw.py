# kafka_raw.py HOST:PORT — the listener's framing and error rules with hand-made
# requests (docs/kafka.md "Errors"): ApiVersions v0 and v3 (flexible request
# header, v0 response header) list the advertised ranges; an unsupported
# ApiVersions version is answered in v0 with UNSUPPORTED_VERSION (35) and the
# ranges; pipelined requests are answered in request order; an unknown API
# key, a frame over socket.request.max.bytes, and a truncated request each
# close the connection. Prints one line per check, exit 1 on the first failure.
import socket
import struct
import sys

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
if corr != 7 or err != 0 or r.get(0) != (3, 8) or r.get(1) != (4, 11) or r.get(18) != (0, 3):
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
print('OK')
