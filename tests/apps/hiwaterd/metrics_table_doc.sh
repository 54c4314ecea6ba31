#!/usr/bin/env bash
# metrics_table_doc.sh HIWATERD DOC — docs/metrics.md is what
# `hiwaterd --print-metrics-table` prints from the tables that define the
# metric families (apps/hiwaterd/hwd_metric_defs.h, engine/repl/hw_rm.h).
# Fails with the difference when a family, label or help text changed and the
# file was not regenerated:  build/apps/hiwaterd/hiwaterd --print-metrics-table > docs/metrics.md
set -euo pipefail
hiwaterd=${1:?hiwaterd binary}
doc=${2:?docs/metrics.md}
table=$("$hiwaterd" --print-metrics-table) || { echo "FAIL: $hiwaterd --print-metrics-table exited $?" >&2; exit 1; }
[ -n "$table" ] || { echo "FAIL: empty metrics table" >&2; exit 1; }
if ! diff -u "$doc" <(printf '%s\n' "$table") >&2; then
	echo "FAIL: $doc is stale; regenerate it: hiwaterd --print-metrics-table > docs/metrics.md" >&2
	exit 1
fi
echo "metrics_table_doc: $doc matches ($(grep -c '^| `hiwater_' "$doc") families)"
