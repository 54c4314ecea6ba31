#!/usr/bin/env python3
"""test_hgrm_pool.py HGRM_POOL — perf/hgrm-pool pools rounds correctly.

The .hgrm inputs are written here from known values in HdrHistogram's
percentile-distribution layout (value, percentile, count up to it, 1/(1-p)),
so every expected figure is computed from the same values, not typed in:
  - two rounds of different speed: the pooled p50/p99 are those of the
    union of their values (within the interpolation between rows), not the
    mean of the rounds' own percentiles;
  - identical sets: ratio 1 and "not worse" in every resample;
  - a set that is uniformly slower loses every resample;
  - a file with no rows, or a missing file, is a clear error (exit 2 / 1).
"""
import json
import os
import subprocess
import sys
import tempfile

TOOL = sys.argv[1]
tmp = tempfile.mkdtemp(prefix="hgrm-pool-test-")


def write_hgrm(name, values):
    """Rows at HdrHistogram's iterator steps (5 ticks per half distance)."""
    vals = sorted(values)
    n = len(vals)
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write("       Value     Percentile TotalCount 1/(1-Percentile)\n\n")
        half, p = 0.5, 0.0
        while True:
            k = max(1, min(n, int(-(-p * n // 1))))  # ceil, at least the first
            f.write("%12.2f %2.12f %10d %14.2f\n" % (vals[k - 1], k / n, k, 1 / (1 - k / n) if k < n else float("inf")))
            if k == n:
                break
            p += half / 5
            if p >= 1 - half + 1e-12:
                half /= 2
        f.write("#[Mean    = 0, StdDeviation   = 0]\n#[Max     = %.2f, Total count    = %d]\n" % (vals[-1], n))
    return path


def run(*args, expect=0):
    r = subprocess.run([TOOL, *args], capture_output=True, text=True)
    if r.returncode != expect:
        sys.exit(f"FAIL: hgrm-pool {' '.join(args)} exited {r.returncode}, want {expect}: {r.stderr}")
    return json.loads(r.stdout) if expect == 0 else r


def near(got, want, rel, what):
    if abs(got - want) > rel * want:
        sys.exit(f"FAIL: {what}: {got}, want {want} within {rel * 100:.0f} %")


def exact_pct(values, q):
    v = sorted(values)
    return v[max(0, int(-(-q * len(v) // 1)) - 1)]


# two rounds: a fast one (10..1000 us) and a slow one (1000..100000 us)
fast = [10 + i * 0.099 for i in range(10000)]
slow = [1000 + i * 9.9 for i in range(10000)]
a1, a2 = write_hgrm("a1.hgrm", fast), write_hgrm("a2.hgrm", slow)
j = run(f"{a1},{a2}")
pool = j["pooled"][0]
union = fast + slow
near(pool["p50_us"], exact_pct(union, 0.50), 0.02, "pooled p50")
near(pool["p99_us"], exact_pct(union, 0.99), 0.02, "pooled p99")
if pool["records"] != 20000 or pool["rounds"] != 2:
    sys.exit(f"FAIL: records/rounds {pool['records']}/{pool['rounds']}")
share = 100 * sum(v > 1000 for v in union) / len(union)
near(pool["above_1ms_pct"], share, 0.02, "share above 1 ms")

# identical sets: ratio 1, never worse
j = run("--resample", "50", f"{a1},{a2}", f"{a1},{a2}")
if j["ratio"]["p99_us"] != 1.0 or j["a_not_worse"]["p99_us"] != 1.0:
    sys.exit(f"FAIL: identical sets: {j['ratio']} {j['a_not_worse']}")

# uniformly slower A (every value x1.5): worse in every resample
b1 = write_hgrm("b1.hgrm", [v * 1.5 for v in fast])
b2 = write_hgrm("b2.hgrm", [v * 1.5 for v in slow])
j = run("--resample", "50", f"{b1},{b2}", f"{a1},{a2}")
near(j["ratio"]["p99_us"], 1.5, 0.03, "ratio of a 1.5x slower set")
if j["a_not_worse"]["p50_us"] != 0.0 or j["a_not_worse"]["p99_us"] != 0.0:
    sys.exit(f"FAIL: a slower set was not worse: {j['a_not_worse']}")

# hostile input: no rows (exit 2), a missing file (exit 1 with its name)
empty = os.path.join(tmp, "empty.hgrm")
with open(empty, "w") as f:
    f.write("not a histogram\n1 2\n")
r = run(empty, expect=2)
if "no percentile rows" not in r.stderr:
    sys.exit(f"FAIL: no-rows message: {r.stderr!r}")
r = run(os.path.join(tmp, "missing.hgrm"), expect=1)
if "missing.hgrm" not in r.stderr:
    sys.exit(f"FAIL: missing-file message: {r.stderr!r}")
print("test_hgrm_pool: pooled percentiles, ratios, resamples and bad input as expected")
