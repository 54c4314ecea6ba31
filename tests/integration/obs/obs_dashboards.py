#!/usr/bin/env python3
"""obs_dashboards.py — every panel query of every Grafana dashboard in
docs/dashboards/ uses only documented metrics, and (with --prometheus URL)
returns data from a running Prometheus.

Documented: a `hiwater_*` family in docs/metrics.md (the table generated
from the metric tables; `_bucket`/`_sum`/`_count` name a histogram's
series), a recording rule of the rules file `cluster up --prometheus`
writes (and that docs/observability.md lists), or Prometheus's own `up`.
Data: the instant query answers success with at least one sample whose
value is a finite number (Grafana draws NaN as no value), within --wait
seconds (default 20: a recording rule's first samples follow its first
evaluations).

Usage: obs_dashboards.py --metrics-doc docs/metrics.md --obs-doc
docs/observability.md --rules RULES.yml [--prometheus URL [--wait S]] DASHBOARD.json...
Exit 0 when every query passes; 1 with one line per failing query.
"""
import argparse
import json
import math
import re
import sys
import time
import urllib.parse
import urllib.request

FAMILY = re.compile(r"\bhiwater_[a-z0-9_]+")
RULE = re.compile(r"\b[a-z_]+:[a-z0-9_]+:[a-z0-9_]+")
SUFFIXES = ("_bucket", "_sum", "_count")


def documented_families(path):
    fams = set()
    for line in open(path, encoding="utf-8"):
        m = re.match(r"\| `(hiwater_[a-z0-9_]+)` \|", line)
        if m:
            fams.add(m.group(1))
    return fams


def rule_names(path):
    return set(re.findall(r"record:\s*(\S+)", open(path, encoding="utf-8").read()))


def panel_queries(path):
    d = json.load(open(path, encoding="utf-8"))
    panels = list(d.get("panels", []))
    for p in list(panels):  # rows may nest panels
        panels.extend(p.get("panels", []))
    for p in panels:
        for t in p.get("targets", []):
            if t.get("expr"):
                yield p.get("title", "?"), t["expr"]


def undocumented(expr, fams, rules, obs_doc):
    bad = []
    stripped = RULE.sub("", expr)
    for name in RULE.findall(expr):
        if name not in rules or name not in obs_doc:
            bad.append(name)
    for name in FAMILY.findall(stripped):
        base = name
        for s in SUFFIXES:
            if name.endswith(s) and name[: -len(s)] in fams:
                base = name[: -len(s)]
        if base not in fams:
            bad.append(name)
    return bad


def query(url, expr):
    q = urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=10) as r:
        ans = json.load(r)
    if ans.get("status") != "success":
        return f"status {ans.get('status')}: {ans.get('error')}"
    res = ans["data"]["result"]
    if ans["data"]["resultType"] == "scalar":
        res = [{"value": res}]
    finite = [s for s in res if math.isfinite(float(s["value"][1]))]
    if not res:
        return "no series"
    if not finite:
        return f"{len(res)} series, none with a finite value"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--metrics-doc", required=True)
    ap.add_argument("--obs-doc", required=True)
    ap.add_argument("--rules", required=True)
    ap.add_argument("--prometheus")
    ap.add_argument("--wait", type=float, default=20.0,
                    help="seconds to keep asking for queries with no data yet")
    ap.add_argument("dashboards", nargs="+")
    a = ap.parse_args()
    fams = documented_families(a.metrics_doc)
    rules = rule_names(a.rules)
    obs_doc = open(a.obs_doc, encoding="utf-8").read()
    if len(fams) < 50 or len(rules) < 5:
        print(f"FAIL: {len(fams)} documented families, {len(rules)} rules: wrong files?")
        return 1
    fails = n = 0
    pending = []
    for path in a.dashboards:
        for title, expr in panel_queries(path):
            n += 1
            bad = undocumented(expr, fams, rules, obs_doc)
            if bad:
                fails += 1
                print(f"FAIL {path} '{title}': undocumented {', '.join(sorted(set(bad)))}: {expr}")
                continue
            if a.prometheus:
                pending.append((path, title, expr))
    # Prometheus answers a query from what it has scraped and evaluated so
    # far: a recording rule over a 30 s rate has no sample until its group
    # has run twice with data. Ask again for up to --wait seconds; what is
    # still empty (or failing) then is a failure.
    deadline = time.monotonic() + a.wait
    while pending:
        why = {p: query(a.prometheus, p[2]) for p in pending}
        pending = [p for p in pending if why[p]]
        if not pending or time.monotonic() >= deadline:
            break
        time.sleep(1)
    for path, title, expr in pending:
        fails += 1
        print(f"FAIL {path} '{title}': {why[(path, title, expr)]} (after {a.wait:g} s): {expr}")
    if n < 10:
        print(f"FAIL: only {n} panel queries in {a.dashboards}")
        return 1
    print(f"{n} panel queries of {len(a.dashboards)} dashboards: {n - fails} passed"
          + (" (documented and returning data)" if a.prometheus else " (documented)"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
