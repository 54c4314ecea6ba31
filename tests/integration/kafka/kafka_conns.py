# kafka_conns.py HOST:PORT N — open N connections at once to a listener with
# max.connections below N and print how many the broker closed at once
# (refused) and how many still answer ApiVersions.
import socket
import struct
import sys

host, port = sys.argv[1].rsplit(':', 1)
n = int(sys.argv[2])
socks = [socket.create_connection((host, int(port)), timeout=5) for _ in range(n)]
closed = answered = 0
for i, s in enumerate(socks):
    msg = struct.pack('>hhih', 18, 0, i, -1)
    try:
        s.sendall(struct.pack('>i', len(msg)) + msg)
        s.settimeout(3)
        b = s.recv(4)
        if len(b) == 4:
            answered += 1
        else:
            closed += 1
    except (ConnectionResetError, BrokenPipeError, socket.timeout):
        closed += 1
print('closed', closed, 'answered', answered)
