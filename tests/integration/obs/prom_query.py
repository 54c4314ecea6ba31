#!/usr/bin/env python3
"""prom_query.py URL EXPR — evaluate EXPR with Prometheus's HTTP query API
(GET URL/api/v1/query) and print one line per sample: the value, then the
labels as k=v (sorted). Exit 1 when the API answers an error or does not
answer; an empty result prints nothing and exits 0.
"""
import json
import sys
import urllib.parse
import urllib.request


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    url, expr = sys.argv[1], sys.argv[2]
    q = urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=10) as r:
            ans = json.load(r)
    except OSError as e:
        print(f"prom_query: {url}: {e}", file=sys.stderr)
        return 1
    if ans.get("status") != "success":
        print(f"prom_query: {ans.get('errorType')}: {ans.get('error')}", file=sys.stderr)
        return 1
    data = ans["data"]
    res = data["result"] if data["resultType"] != "scalar" else [{"metric": {}, "value": data["result"]}]
    for s in res:
        labels = " ".join(f"{k}={v}" for k, v in sorted(s.get("metric", {}).items()))
        print(f"{s['value'][1]} {labels}".rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
