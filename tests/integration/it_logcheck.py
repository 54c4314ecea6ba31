#!/usr/bin/env python3
"""it_logcheck.py — end-of-test checks of the failover integration tests.

  it_logcheck.py replicas HW DIR1 DIR2 ...
      The partition directories of the replicas (each holds
      <base offset>.log segments of Kafka v2 batches back to back). Every
      batch whose base offset is below HW must be byte-identical on every
      replica: followers copy the leader's batches verbatim, so committed
      data differs only if replication is broken. Prints the number of
      batches and bytes compared; exits 1 on a difference.

  it_logcheck.py consumed HW FILE
      FILE: `hiwater consume --print-offsets` output ("<offset>\t<value>").
      Checks the consumer never read at or above HW, read each offset once,
      in order, with no gap from its first offset.

  it_logcheck.py acked ACKED CONSUMED
      ACKED: lines "<offset> <value>" the producer saw acknowledged;
      CONSUMED as above. Each acknowledged record must be present exactly
      once, at its acknowledged offset. Prints the ones that are not
      (used to show what an unclean election lost); exits 1 if any.

  it_logcheck.py exact DIR1 DIR2 ...
      Every segment file of every partition directory ends exactly where
      its last whole batch ends: no torn tail, no zero padding (what
      hiwater.log.direct.io leaves until a segment is trimmed at seal or
      clean close). Exits 1 on the first file that does not.
"""
import os
import struct
import sys


def batches(pdir):
    """Yield (base_offset, last_offset, raw bytes) of every batch of a partition."""
    segs = sorted(f for f in os.listdir(pdir) if f.endswith(".log"))
    for seg in segs:
        with open(os.path.join(pdir, seg), "rb") as f:
            data = f.read()
        pos = 0
        while pos + 61 <= len(data):
            base, blen = struct.unpack_from(">qi", data, pos)
            if blen < 49 or pos + 12 + blen > len(data):
                break  # torn tail: not committed data
            last_delta = struct.unpack_from(">i", data, pos + 23)[0]
            yield base, base + last_delta, data[pos:pos + 12 + blen]
            pos += 12 + blen


def cmd_exact(dirs):
    nfiles = 0
    for d in dirs:
        for seg in sorted(f for f in os.listdir(d) if f.endswith(".log")):
            with open(os.path.join(d, seg), "rb") as f:
                data = f.read()
            pos = 0
            while pos + 61 <= len(data):
                blen = struct.unpack_from(">i", data, pos + 8)[0]
                if blen < 49 or pos + 12 + blen > len(data):
                    break
                pos += 12 + blen
            if pos != len(data):
                print(f"{d}/{seg}: batches end at {pos}, file is {len(data)} bytes")
                return 1
            nfiles += 1
    print(f"{nfiles} segment files end exactly at their last batch")
    return 0


def cmd_replicas(hw, dirs):
    ref = None
    for d in dirs:
        below = [(b, last, raw) for b, last, raw in batches(d) if b < hw]
        covered = below[-1][1] + 1 if below else 0
        if covered < hw:
            print(f"replica {d}: batches below HW {hw} end at {covered}")
            return 1
        if ref is None:
            ref = (d, below)
            continue
        if len(below) != len(ref[1]):
            print(f"replica {d}: {len(below)} batches below HW {hw}, {ref[0]}: {len(ref[1])}")
            return 1
        for (b1, _, r1), (b2, _, r2) in zip(ref[1], below):
            if r1 != r2:
                print(f"replica {d}: batch at {b2} differs from {ref[0]}'s at {b1}")
                return 1
    nbytes = sum(len(r) for _, _, r in ref[1]) if ref else 0
    print(f"replicas identical below HW {hw}: {len(dirs)} replicas, "
          f"{len(ref[1]) if ref else 0} batches, {nbytes} bytes each")
    return 0


def read_consumed(path):
    """Records of `consume --print-offsets` output. Values are bytes (bench
    writes binary values that may hold newlines): a line starts a new record
    only if it is "<previous offset + 1>\t" (or the first line), else it
    continues the previous value."""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    for line in data.split(b"\n"):
        off, tab, val = line.partition(b"\t")
        if tab and off.isdigit() and (not out or int(off) > out[-1][0]):
            out.append((int(off), val))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + b"\n" + line)
    if out and data.endswith(b"\n"):
        out[-1] = (out[-1][0], out[-1][1][:-1])
    return out


def cmd_consumed(hw, path):
    recs = read_consumed(path)
    prev = None
    for off, _ in recs:
        if off >= hw:
            print(f"consumer read offset {off} at or above the HW {hw}")
            return 1
        if prev is not None and off != prev + 1:
            print(f"consumer read offset {off} after {prev}")
            return 1
        prev = off
    print(f"consumer read {len(recs)} records, all below the HW {hw}")
    return 0


def cmd_acked(acked_path, consumed_path):
    at = {}
    for off, val in read_consumed(consumed_path):
        at.setdefault(val, []).append(off)
    bad = 0
    n = 0
    with open(acked_path, "rb") as f:
        for line in f:
            parts = line.rstrip(b"\n").split(b" ", 1)
            if len(parts) != 2:
                continue
            off, val = int(parts[0]), parts[1]
            n += 1
            offs = at.get(val, [])
            if offs != [off]:
                bad += 1
                print(f"acknowledged record {val!r} at offset {off}: found at {offs}")
    print(f"{n} acknowledged records checked, {bad} lost or misplaced")
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 4 and argv[1] == "replicas":
        return cmd_replicas(int(argv[2]), argv[3:])
    if len(argv) == 4 and argv[1] == "consumed":
        return cmd_consumed(int(argv[2]), argv[3])
    if len(argv) == 4 and argv[1] == "acked":
        return cmd_acked(argv[2], argv[3])
    if len(argv) >= 3 and argv[1] == "exact":
        return cmd_exact(argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
